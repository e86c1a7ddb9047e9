#!/usr/bin/env python3
"""Sends N alternating acquire/release requests over one keep-alive connection and waits for
each answer: a fixed amount of work, for counting a server's instructions per request.
Usage: fixedload.py PORT N"""
import sys

from httpclient import connect, receive, send


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    sock = connect(port)

    def call(path, body):
        send(sock, "POST", path, body)
        receive(sock)

    for i in range(n):
        agent = f"did:agent:{(i - i % 2) % 64}"
        if i % 2 == 0:
            call("/api/v1/acp/coordination/lease",
                 {"resource": f"lock:bench/{i % 64}", "actorDid": agent, "ttlMs": 5000})
        else:
            call("/api/v1/acp/coordination/release", {"actorDid": agent})


if __name__ == "__main__":
    main()
