#!/usr/bin/env python3
"""Sends N alternating acquire/release requests and waits for each answer: a fixed amount of
work, for counting a server's instructions per request. With CONNECTIONS > 1 the requests are
spread over that many keep-alive connections, each with one request in flight (as wrk -c does),
so a server that groups work across requests (the store's group commit) can.
Usage: fixedload.py PORT N [CONNECTIONS]"""
import asyncio
import json
import sys

from httpclient import connect, receive, send


def body(i, prefix=""):
    """The i-th request of a connection: its path and body. Each connection names its own
    agents and resources with `prefix`."""
    agent = f"did:agent:{prefix}{(i - i % 2) % 64}"
    if i % 2 == 0:
        return ("/api/v1/acp/coordination/lease",
                {"resource": f"lock:bench/{prefix}{i % 64}", "actorDid": agent, "ttlMs": 5000})
    return ("/api/v1/acp/coordination/release", {"actorDid": agent})


def one_connection(port, n):
    sock = connect(port)
    for i in range(n):
        path, data = body(i)
        send(sock, "POST", path, data)
        receive(sock)


async def crowd(port, n, connections):
    async def worker(c, count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(count):
            path, data = body(i, f"c{c}-")
            raw = json.dumps(data).encode()
            writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(raw)}\r\n\r\n"
                         .encode() + raw)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")][0])
            await reader.readexactly(length)
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
