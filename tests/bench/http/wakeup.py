#!/usr/bin/env python3
"""Wake-up latency of a parked waiter: agent A holds a lock, agent B parks on it, A releases;
the time from sending A's release to B's grant arriving. Usage: wakeup.py PORT [ROUNDS].
Run against `leasehold --headless --open`."""
import sys
import time

from httpclient import connect, receive, send

BASE = "/api/v1/acp/coordination"


def main():
    port = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    a, b, probe = connect(port), connect(port), connect(port)
    latencies = []
    for i in range(rounds):
        res = f"lock:wake/{i % 16}"
        send(a, "POST", BASE + "/lease", {"resource": res, "actorDid": "did:agent:a"})
        assert receive(a)[0] == 200
        send(b, "POST", BASE + "/lease", {"resource": res, "actorDid": "did:agent:b",
                                          "waitMs": 20000})
        while True:  # until the server shows B parked
            send(probe, "GET", BASE + "/wait?resource=" + res)
            if any(w["kind"] == "parked" for w in receive(probe)[1]["waiters"]):
                break
        t0 = time.perf_counter()
        send(a, "POST", BASE + "/release", {"actorDid": "did:agent:a"})
        status, _ = receive(b)
        t1 = time.perf_counter()
        assert status == 200
        receive(a)
        send(b, "POST", BASE + "/release", {"actorDid": "did:agent:b"})
        receive(b)
        latencies.append((t1 - t0) * 1000)
    latencies.sort()
    print(f"wake-up latency over {rounds} rounds: p50 {latencies[len(latencies) // 2]:.3f} ms, "
          f"p99 {latencies[len(latencies) * 99 // 100]:.3f} ms, max {latencies[-1]:.3f} ms")


if __name__ == "__main__":
    main()
