"""Hostile traffic for the tests of ``arena serve``: :class:`Siege` holds many half-sent
requests against a server (slowloris heads and slow bodies), opening again each connection the
server closes; :class:`Visitor` keeps asking pages as a person's browser would and times each
answer; :class:`FileCount` follows how many files a process holds."""

from __future__ import annotations

import contextlib
import errno
import http.client
import itertools
import os
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field

#: Half a request head: a request line and a header, the next header never finished.
SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: arena\r\nUser-Agent: slowloris\r\nX-Wait: "
#: A whole head announcing a body that never comes (a megabyte to the upload route).
SLOW_BODY = (
    b"POST /api/submissions HTTP/1.1\r\nHost: arena\r\n"
    b"Content-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: 1000000\r\n\r\n"
)
#: Seconds between two trickles of one byte on every held connection (so that no server can
#: tell it from a slow client by silence alone).
TRICKLE_SECONDS = 2.0
#: Connections the siege opens a second at most, as attack tools pace themselves (20 times
#: slowhttptest's default). Unpaced, its POST heads are whole requests the server answers as
#: fast as its processor allows: a flood of requests rather than of held connections, which
#: docs/serve.md says the server does not stop alone.
OPEN_PER_SECOND = 1000.0


class Siege:
    """``count`` connections to ``address`` held half-sent, half of them stuck in their head and
    half in their body, each trickling a byte every :data:`TRICKLE_SECONDS`; a connection the
    server closes is opened again. Runs in a thread of its own until :meth:`stop`."""

    def __init__(
        self, address: tuple[str, int], count: int, per_second: float = OPEN_PER_SECOND
    ) -> None:
        self.address = address
        self.count = count
        self.per_second = per_second
        self.selector = selectors.DefaultSelector()
        self.held: dict[socket.socket, bytes] = {}
        self.closed_by_server = 0
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="siege", daemon=True)
        self._kinds = itertools.cycle((SLOW_HEAD, SLOW_BODY))

    def start(self) -> None:
        """Open the connections (``per_second`` at most) and hold them."""
        self._thread.start()

    def stop(self) -> None:
        """Stop and close every connection."""
        self._stop.set()
        self._thread.join(30)
        for sock in list(self.held):
            self._forget(sock)
        self.selector.close()

    def _open(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        code = sock.connect_ex(self.address)
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            return
        self.held[sock] = next(self._kinds)
        self.selector.register(sock, selectors.EVENT_WRITE)
        self.opened += 1

    def _forget(self, sock: socket.socket) -> None:
        self.held.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(sock)
        sock.close()

    def _run(self) -> None:
        next_trickle = time.monotonic() + TRICKLE_SECONDS
        budget, then = 0.0, time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            budget = min(self.per_second, budget + (now - then) * self.per_second)
            then = now
            while budget >= 1 and len(self.held) < self.count:
                budget -= 1
                self._open()
            for key, events in self.selector.select(timeout=0.05):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if events & selectors.EVENT_WRITE:
                    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                        self._forget(sock)
                        continue
                    try:
                        sock.send(self.held[sock])
                    except OSError:
                        self._forget(sock)
                        continue
                    self.selector.modify(sock, selectors.EVENT_READ)
                else:  # an answer (the connection is held on) or the end of it
                    try:
                        answer = sock.recv(65536)
                    except OSError:
                        answer = b""
                    if not answer:
                        self.closed_by_server += 1
                        self._forget(sock)
            if time.monotonic() >= next_trickle:
                next_trickle = time.monotonic() + TRICKLE_SECONDS
                for sock in list(self.held):
                    try:
                        sock.send(b"a")
                    except BlockingIOError:
                        pass
                    except OSError:
                        self._forget(sock)


@dataclass
class Visit:
    """One page asked: its path, how long the answer took, and its status (or the error)."""

    path: str
    seconds: float
    status: int | str


@dataclass
class Visitor:
    """Asks ``paths`` of the server at ``address`` in turn, each on a new connection, in a
    thread of its own until :meth:`stop`, and keeps every :class:`Visit`."""

    address: tuple[str, int]
    paths: tuple[str, ...]
    timeout: float = 10.0
    visits: list[Visit] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="visitor", daemon=True)

    def start(self) -> None:
        """Start asking."""
        self._thread.start()

    def stop(self) -> list[Visit]:
        """Stop asking; every visit made."""
        self._stop.set()
        self._thread.join(self.timeout + 5)
        return self.visits

    def _run(self) -> None:
        for path in itertools.cycle(self.paths):
            if self._stop.is_set():
                return
            self.visits.append(visit(self.address, path, self.timeout))
            time.sleep(0.05)


def visit(address: tuple[str, int], path: str, timeout: float) -> Visit:
    """Ask ``path`` once on a new connection; the visit, timed from before connecting."""
    start = time.monotonic()
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        status: int | str = answer.status
    except (OSError, http.client.HTTPException) as exc:
        status = f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()
    return Visit(path, time.monotonic() - start, status)


class FileCount:
    """The most files process ``pid`` held at once, counted every 20 ms in a thread of its own
    until :meth:`stop`."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="file-count", daemon=True)

    def start(self) -> None:
        """Start counting."""
        self._thread.start()

    def stop(self) -> int:
        """Stop counting; the most files held at once."""
        self._stop.set()
        self._thread.join(5)
        return self.most

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            try:
                self.most = max(self.most, len(os.listdir(f"/proc/{self.pid}/fd")))
            except OSError:
                return
