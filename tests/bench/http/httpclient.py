"""A minimal HTTP/1.1 keep-alive client for the benchmark scripts (standard library only)."""
import json
import socket


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def send(sock, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else b""
    sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
                 .encode() + data)


def receive(sock):
    """Reads one answer; returns (status, parsed JSON body)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, rest = buf.split(b"\r\n\r\n", 1)
    length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length")][0])
    while len(rest) < length:
        rest += sock.recv(65536)
    return int(head.split(b" ")[1]), json.loads(rest[:length])
