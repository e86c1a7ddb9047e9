#!/usr/bin/env python3
"""Fills a Leasehold database's ledger with N events, as months of a busy fleet would leave it:
schema 4 and 5 partitions of 16 384 events, sealed ones indexed and filtered as the service does it.
Usage: prefill_ledger.py LEASEHOLD_DB N   (the database must exist: start leasehold once)"""
import sqlite3
import sys
import time

ROWS = 16384  # as SqliteStore::Options::partitionRows
KINDS = ["coordination.lease.granted", "coordination.lease.released",
         "coordination.lease.refused", "coordination.lease.expired"]


PROBES = 7  # as engine/store/actorfilter.h


def agent_filter(agents):
    """The partition's agents as ActorFilter writes them: FNV-1a, double hashing, 10 bits each."""
    bits = bytearray(max(8, (len(agents) * 10 + 7) // 8))
    m = len(bits) * 8
    for agent in agents:
        h = 14695981039346656037
        for c in agent.encode():
            h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        h1, h2 = h & 0xFFFFFFFF, (h >> 32) | 1
        for i in range(PROBES):
            at = (h1 + i * h2) % m
            bits[at // 8] |= 1 << (at % 8)
    return bytes(bits)


def main():
    path, total = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    started = time.time()
    now_ms = int(time.time() * 1000)
    span_ms = 30 * 24 * 3600 * 1000  # a month of history
    facts = b"\x01\x00\x00"  # format 1, no facts set
    # After whatever the service already wrote: the prefill is the oldest history but must not
    # reuse a sequence number, so it continues from the newest and leaves the rest as it is.
    base = 0
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name "
                              "GLOB 'ledger_p[0-9]*'").fetchall():
        base = max(base, db.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {name}").fetchone()[0])
    total += base
    for part in range(base // ROWS, (total + ROWS - 1) // ROWS):
        table = "ledger_p%08d" % part
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (seq INTEGER PRIMARY KEY, at INTEGER NOT "
                   "NULL, kind TEXT NOT NULL, actor TEXT NOT NULL, resource TEXT NOT NULL, "
                   "lease_id TEXT NOT NULL, token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL, "
                   "reason TEXT NOT NULL, facts BLOB NOT NULL)")
        first, last = max(base + 1, part * ROWS + 1), min(total, (part + 1) * ROWS)
        db.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((s, now_ms - span_ms + s * span_ms // total, KINDS[s % 4],
              "did:agent:fleet-%d" % (s % 5000), "fs:src/module%d/file%d.cpp" % (s % 97, s % 31),
              "ls_%016x" % s, s, 30000, "release" if s % 4 == 1 else "", facts)
             for s in range(first, last + 1)))
        if last == (part + 1) * ROWS:  # sealed: indexed as the service indexes it
            for suffix, columns in (("actor", "actor, seq"), ("kind", "kind, seq"),
                                    ("resource", "resource, seq")):
                db.execute(f"CREATE INDEX IF NOT EXISTS {table}_{suffix} ON {table} ({columns})")
            agents = [a for (a,) in db.execute(f"SELECT DISTINCT actor FROM {table}")]
            db.execute("INSERT OR REPLACE INTO ledger_filters VALUES (?, ?, ?)",
                       (part, PROBES, agent_filter(agents)))
        db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    print(f"prefilled {total - base} events in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
