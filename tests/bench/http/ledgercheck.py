#!/usr/bin/env python3
"""Checks from the service's own records that a benchmark did the work it names.

  ledgercheck.py mark PORT                         prints the service's counts now (JSON)
  ledgercheck.py cycles PORT MARK REQUESTS [SLACK] after cycles.lua: every acquire granted a
                                                   new lease and every release gave one back
  ledgercheck.py renewals PORT MARK REQUESTS [SLACK] after renewals.lua: nearly every request
                                                   renewed a lease, nearly none granted one

MARK is what `mark` printed before the run; REQUESTS what wrk counted; SLACK (default 200)
the requests that may be in flight when wrk stops (answered, or not, after it counted). Reads
GET /status (tokens: one per new lease; releases) and the last 1 000 events of GET /ledger
(their kinds and reasons). Prints one line and exits 1 when the work was not what it names."""
import json
import sys
import urllib.request

BASE = "/api/v1/acp/coordination"


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{BASE}{path}", timeout=30) as r:
        return json.load(r)


def mark(port):
    status = get(port, "/status")
    c = status["counters"]
    return {"tokens": c["nextToken"], "releases": c["releases"], "grants": c["grants"],
            "lastSeq": status["lastSeq"]}


def recent(port, last_seq, count=1000):
    events, since = [], max(0, last_seq - count)
    while since < last_seq:
        page = get(port, f"/ledger?since={since}&limit=1000")
        if not page["events"]:
            break
        events += page["events"]
        since = page["events"][-1]["seq"]
    return events


def kinds(events):
    seen = {}
    for e in events:
        key = e["kind"].rsplit(".", 1)[-1] + ("/" + e["reason"] if e.get("reason") else "")
        seen[key] = seen.get(key, 0) + 1
    return seen


def main():
    what, port = sys.argv[1], int(sys.argv[2])
    if what == "mark":
        print(json.dumps(mark(port)))
        return 0
    before, requests = json.loads(sys.argv[3]), int(sys.argv[4])
    slack = int(sys.argv[5]) if len(sys.argv) > 5 else 200
    now = mark(port)
    leases = now["tokens"] - before["tokens"]
    releases = now["releases"] - before["releases"]
    grants = now["grants"] - before["grants"]
    sample = kinds(recent(port, now["lastSeq"]))
    if what == "cycles":
        # Each request is one decision: a new lease, or the release of one.
        ok = (abs(leases + releases - requests) <= slack and abs(leases - releases) <= slack
              and grants == leases and sample.get("granted/extend", 0) == 0)
        print(f"ledger: {leases} new leases, {releases} releases, {grants - leases} extensions "
              f"for {requests} requests ({leases / max(requests, 1):.2f} / "
              f"{releases / max(requests, 1):.2f}); last events {sample}: "
              f"{'real cycles' if ok else 'NOT the cycles the benchmark names'}")
    elif what == "renewals":
        # Renewals are ledger events (granted, reason renew) but not grants.
        renewed = sample.get("granted/renew", 0)
        ok = leases <= slack and releases == 0 and renewed >= 0.9 * sum(sample.values())
        print(f"ledger: {leases} new leases, {releases} releases for {requests} requests; "
              f"last events {sample}: {'renewals' if ok else 'NOT the renewals the benchmark names'}")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
