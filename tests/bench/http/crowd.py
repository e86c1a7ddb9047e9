#!/usr/bin/env python3
"""A crowd at the door: Leasehold with thousands of open connections, some parked in waits,
while agents keep acquiring and releasing; then the same lease latency while one agent exports
the whole ledger. Reports p50/p99 of a fresh agent's lease (new connection each time) and of
wake-ups, the server's RSS and file descriptors, and the lease p99 with and without an export
running. Usage: crowd.py LEASEHOLD_BINARY [CONNECTIONS] [PARKED] [SAMPLES]
Defaults: 10000 connections of which 2000 hold parked waits, 400 samples. Loopback only; every
loop is bounded in count and time."""
import asyncio
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BASE = "/api/v1/acp/coordination"


def request(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else b""
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


async def read_answer(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
    body = await reader.readexactly(length)
    return status, body


async def call(port, method, path, body=None, timeout=60):
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    writer.write(request(method, path, body))
    status, raw = await asyncio.wait_for(read_answer(reader), timeout)
    writer.close()
    return status, raw


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")


def server_facts(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def fresh_leases(port, samples, tag):
    """Latency of a new agent's lease+release, each on its own new connection."""
    lat = []
    for i in range(samples):
        agent = f"did:agent:{tag}{i}"
        t0 = time.perf_counter()
        status, _ = await call(port, "POST", BASE + "/lease",
                               {"actorDid": agent, "resource": f"lock:fresh/{tag}{i}"})
        lat.append((time.perf_counter() - t0) * 1000)
        assert status == 200, status
        await call(port, "POST", BASE + "/release", {"actorDid": agent})
    return lat


async def crowd(port, pid, connections, parked, samples):
    idle_n = connections - parked
    opened = []
    t0 = time.perf_counter()
    for i in range(idle_n):
        opened.append(await asyncio.open_connection("127.0.0.1", port))
    print(f"  {idle_n} idle connections open in {time.perf_counter() - t0:.1f} s")
    # Holders take 16 locks; each parked agent waits on one of them.
    holders = 16
    for h in range(holders):
        status, _ = await call(port, "POST", BASE + "/lease",
                               {"actorDid": f"did:agent:holder{h}", "resource": f"lock:held/{h}",
                                "ttlMs": 120000})
        assert status == 200
    waiters = []
    for i in range(parked):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request("POST", BASE + "/lease",
                             {"actorDid": f"did:agent:waiter{i}",
                              "resource": f"lock:held/{i % holders}", "waitMs": 30000,
                              "ttlMs": 1000}))
        waiters.append((reader, writer))
    await asyncio.sleep(3)  # long enough for idle connections to be parked (parkAfterMs 2 s)
    status, raw = await call(port, "GET", BASE + "/wait")
    parked_now = sum(1 for w in json.loads(raw)["waiters"] if w["kind"] == "parked")
    rss, fds = server_facts(pid)
    print(f"  {parked_now} parked waits; server RSS {rss} MiB, {fds} file descriptors")

    lat = await fresh_leases(port, samples, "c")
    print(f"  fresh lease at {connections} connections: p50 {pct(lat, 50):.2f} ms, "
          f"p99 {pct(lat, 99):.2f} ms, max {max(lat):.2f} ms")

    # Wake-ups: each holder releases; its queue is granted one waiter at a time (each waiter
    # releases nothing, its 1 s lease lapses... so measure the first grant per queue).
    wake = []
    for h in range(holders):
        mine = [w for i, w in enumerate(waiters) if i % holders == h]
        t0 = time.perf_counter()
        await call(port, "POST", BASE + "/release", {"actorDid": f"did:agent:holder{h}"})
        status, _ = await asyncio.wait_for(read_answer(mine[0][0]), 30)
        wake.append((time.perf_counter() - t0) * 1000)
        assert status == 200, status
    print(f"  wake-up of the first waiter per queue (16): p50 {pct(wake, 50):.2f} ms, "
          f"max {max(wake):.2f} ms")
    rss, fds = server_facts(pid)
    print(f"  after: server RSS {rss} MiB, {fds} file descriptors")
    for _, writer in opened:
        writer.close()
    for _, writer in waiters:
        writer.close()


async def export_effect(port, samples):
    # Fill the ledger past 100 000 events: alternate lease and release on a few connections.
    async def filler(k, n):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(n):
            agent = f"did:agent:fill{k}"
            writer.write(request("POST", BASE + "/lease", {"actorDid": agent,
                                                           "resource": f"lock:fill/{k}"}))
            await read_answer(reader)
            writer.write(request("POST", BASE + "/release", {"actorDid": agent}))
            await read_answer(reader)
        writer.close()
    t0 = time.perf_counter()
    await asyncio.gather(*(filler(k, 6500) for k in range(8)))
    print(f"  ledger filled (~104 000 events) in {time.perf_counter() - t0:.1f} s")

    base = await fresh_leases(port, samples, "b")
    stop = False
    exports = 0

    async def exporter():
        nonlocal exports
        while not stop:
            status, raw = await call(port, "GET", BASE + "/ledger/export?format=jsonl&limit=100000",
                                     timeout=120)
            assert status == 200
            exports += 1

    task = asyncio.create_task(exporter())
    during = await fresh_leases(port, samples, "e")
    stop = True
    await task
    print(f"  lease p99 without export {pct(base, 99):.2f} ms (p50 {pct(base, 50):.2f}); "
          f"during {exports} 100 000-row exports {pct(during, 99):.2f} ms "
          f"(p50 {pct(during, 50):.2f}); p99 moved {pct(during, 99) - pct(base, 99):+.2f} ms")


def main():
    binary = sys.argv[1]
    connections = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    parked = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    samples = int(sys.argv[4]) if len(sys.argv) > 4 else 400
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen([binary, "--headless", "--open", "--port", "0",
                                   "--data-dir", data], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            line = server.stdout.readline()
            port = int(line.strip().rsplit(":", 1)[1])
            print(f"crowd: {connections} connections, {parked} parked, on disk")
            asyncio.run(crowd(port, server.pid, connections, parked, samples))
            print("export: lease latency with a 100 000-row export running")
            asyncio.run(export_effect(port, samples))
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
