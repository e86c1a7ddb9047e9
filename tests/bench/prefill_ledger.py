#!/usr/bin/env python3
"""Fills a Leasehold database's ledger with N events, as months of a busy fleet would leave it:
partitions of 16 384 events in the ledger archive beside it (leasehold-ledger.db), indexed and
filtered as the archiver leaves them; a last partition that is not full goes to the live file,
where the service appends. With --live every partition goes to the live file, indexed there, as
releases before the archive left them.
Usage: prefill_ledger.py [--live] LEASEHOLD_DB N   (start leasehold once first: it makes both)"""
import os
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
    args = sys.argv[1:]
    live_only = args[0] == "--live"
    if live_only:
        args = args[1:]
    path, total = args[0], int(args[1])
    archive_path = os.path.join(os.path.dirname(path) or ".",
                                os.path.splitext(os.path.basename(path))[0] + "-ledger.db")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("ATTACH DATABASE ? AS arch", (archive_path,))
    db.execute("PRAGMA arch.journal_mode = WAL")
    db.execute("PRAGMA arch.synchronous = OFF")
    db.execute("CREATE TABLE IF NOT EXISTS arch.ledger_filters (part INTEGER PRIMARY KEY, "
               "probes INTEGER NOT NULL, bits BLOB NOT NULL)")
    started = time.time()
    now_ms = int(time.time() * 1000)
    span_ms = 30 * 24 * 3600 * 1000  # a month of history
    facts = b"\x01\x00\x00"  # format 1, no facts set
    # After whatever the service already wrote: the prefill is the oldest history but must not
    # reuse a sequence number, so it continues from the newest and leaves the rest as it is.
    base = 0
    for schema in ("main", "arch"):
        for (name,) in db.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' "
                                  "AND name GLOB 'ledger_p[0-9]*'").fetchall():
            base = max(base, db.execute(
                f"SELECT COALESCE(MAX(seq), 0) FROM {schema}.{name}").fetchone()[0])
    total += base
    for part in range(base // ROWS, (total + ROWS - 1) // ROWS):
        sealed = min(total, (part + 1) * ROWS) == (part + 1) * ROWS
        # The partition the service already appends to stays in the live file.
        started_live = part == base // ROWS and base % ROWS != 0
        schema = "arch" if sealed and not live_only and not started_live else "main"
        table = "ledger_p%08d" % part
        db.execute(f"CREATE TABLE IF NOT EXISTS {schema}.{table} (seq INTEGER PRIMARY KEY, "
                   "at INTEGER NOT NULL, kind TEXT NOT NULL, actor TEXT NOT NULL, "
                   "resource TEXT NOT NULL, lease_id TEXT NOT NULL, token INTEGER NOT NULL, "
                   "ttl_ms INTEGER NOT NULL, reason TEXT NOT NULL, facts BLOB NOT NULL)")
        first, last = max(base + 1, part * ROWS + 1), min(total, (part + 1) * ROWS)
        db.executemany(
            f"INSERT INTO {schema}.{table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((s, now_ms - span_ms + s * span_ms // total, KINDS[s % 4],
              "did:agent:fleet-%d" % (s % 5000), "fs:src/module%d/file%d.cpp" % (s % 97, s % 31),
              "ls_%016x" % s, s, 30000, "release" if s % 4 == 1 else "", facts)
             for s in range(first, last + 1)))
        if sealed:  # indexed as the service indexes it
            for suffix, columns in (("actor", "actor, seq"), ("kind", "kind, seq"),
                                    ("resource", "resource, seq")):
                db.execute(f"CREATE INDEX IF NOT EXISTS {schema}.{table}_{suffix} ON {table} "
                           f"({columns})")
            agents = [a for (a,) in db.execute(f"SELECT DISTINCT actor FROM {schema}.{table}")]
            db.execute(f"INSERT OR REPLACE INTO {schema}.ledger_filters VALUES (?, ?, ?)",
                       (part, PROBES, agent_filter(agents)))
        db.commit()
    db.execute("PRAGMA main.wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA arch.wal_checkpoint(TRUNCATE)")
    db.close()
    print(f"prefilled {total - base} events in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
