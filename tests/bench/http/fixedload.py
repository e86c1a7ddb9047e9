#!/usr/bin/env python3
"""Sends N alternating acquire/release requests over one keep-alive connection and waits for
each answer: a fixed amount of work, for counting a server's instructions per request.
Usage: fixedload.py PORT N"""
import json
import socket
import sys


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    sock = socket.create_connection(("127.0.0.1", port))

    def call(path, body):
        data = json.dumps(body).encode()
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
                     .encode() + data)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += sock.recv(65536)
        head, rest = buf.split(b"\r\n\r\n", 1)
        length = int([l.split(b":")[1] for l in head.split(b"\r\n")
                      if l.lower().startswith(b"content-length")][0])
        while len(rest) < length:
            rest += sock.recv(65536)

    for i in range(n):
        agent = f"did:agent:{(i - i % 2) % 64}"
        if i % 2 == 0:
            call("/api/v1/acp/coordination/lease",
                 {"resource": f"lock:bench/{i % 64}", "actorDid": agent, "ttlMs": 5000})
        else:
            call("/api/v1/acp/coordination/release", {"actorDid": agent})


if __name__ == "__main__":
    main()
