"""A loopback TCP proxy in front of the test S3 server, which a test can stop or make fail.

moto keeps its objects in memory, so stopping moto itself would lose the
lake; stopping the proxy is what a client sees when its S3 endpoint goes
away (connections reset, then refused), and `fail()` answers every request
with 503 ServiceUnavailable, as S3 does under trouble. Behind the proxy the
objects stay, so a rerun sees exactly what the failed run left.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from urllib.parse import urlparse

_BODY = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>ServiceUnavailable</Code></Error>"
UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BODY), _BODY)
)
RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a reset


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


class S3Proxy:
    """Forwards 127.0.0.1:<port> to the S3 server at `upstream` until stopped."""

    def __init__(self, upstream: str, port: int) -> None:
        parsed = urlparse(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.port = port
        self.failing = False
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port))
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Stop listening and reset every open connection: the endpoint is gone."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        for connection in self._open:
            try:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
                connection.close()
            except OSError:
                pass
        self._open.clear()

    def fail(self) -> None:
        """Answer every new request with 503 and drop the open connections."""
        self.failing = True
        for connection in self._open:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by stop()
                return
            self._open.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if self.failing:
            try:
                client.recv(65536)
                client.sendall(UNAVAILABLE)
            except OSError:
                pass
            client.close()
            return
        try:
            server = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        self._open.append(server)
        threading.Thread(target=_pipe, args=(server, client), daemon=True).start()
        _pipe(client, server)
