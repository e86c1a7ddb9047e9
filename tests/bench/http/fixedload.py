#!/usr/bin/env python3
"""Sends N requests of lease cycles and waits for each answer: an acquire that is granted a new
lease, then the release of that lease by its leaseId, by the agent of the connection, each
cycle on the next of 64 resources; a fixed amount of work, for counting a server's instructions
per request. With CONNECTIONS > 1 the requests are
spread over that many keep-alive connections, each with one request in flight (as wrk -c does),
so a server that groups work across requests (the store's group commit) can.
Usage: fixedload.py PORT N [CONNECTIONS]"""
import asyncio
import json
import sys

from httpclient import connect, receive, send


def body(i, prefix="", lease_id=None):
    """The i-th request of a connection: its path and body. Each connection is its own agent on
    its own resources (`prefix`); an odd request gives back `lease_id`, which the even one
    before it was granted."""
    agent = f"did:agent:{prefix}bench"
    if i % 2 == 0:
        return ("/api/v1/acp/coordination/lease",
                {"resource": f"lock:bench/{prefix}{(i // 2) % 64}", "actorDid": agent,
                 "ttlMs": 5000})
    return ("/api/v1/acp/coordination/release", {"actorDid": agent, "leaseId": lease_id})


def granted(answer):
    """The leaseId a grant's answer carries (a cycle that is not granted is a broken benchmark)."""
    lease = json.loads(answer).get("lease")
    if not lease:
        raise SystemExit(f"fixedload: an acquire was not granted: {answer[:200]!r}")
    return lease["leaseId"]


def one_connection(port, n):
    sock = connect(port)
    lease_id = None
    for i in range(n):
        path, data = body(i, lease_id=lease_id)
        send(sock, "POST", path, data)
        status, answer = receive(sock)
        if i % 2 == 0:
            lease_id = granted(json.dumps(answer))


async def crowd(port, n, connections):
    async def worker(c, count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        lease_id = None
        for i in range(count):
            path, data = body(i, f"c{c}-", lease_id)
            raw = json.dumps(data).encode()
            writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(raw)}\r\n\r\n"
                         .encode() + raw)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")][0])
            answer = await reader.readexactly(length)
            if i % 2 == 0:
                lease_id = granted(answer)
        writer.close()

    share = [n // connections + (1 if c < n % connections else 0) for c in range(connections)]
    await asyncio.gather(*(worker(c, share[c]) for c in range(connections)))


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    connections = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if connections == 1:
        one_connection(port, n)
    else:
        asyncio.run(crowd(port, n, connections))


if __name__ == "__main__":
    main()
