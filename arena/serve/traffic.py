"""How much of the server a client may hold, and for how long (docs/serve.md, "Hostile
traffic"): :class:`TrafficLimits`, and the connection cap the open-file limit leaves room for.

Every connection is a file: with 1,024 of them a service has no more than that for its
connections, its database, its spool, its children's pipes and its log together. The server
keeps :func:`reserved_files` for itself and room for the connections dropped to make room for
others (each holds its file until the next pass of the event loop, and a pass accepts a batch at
most): :func:`connection_room` is what is left, the most ``--max-connections`` may be, and its
default up to :data:`MAX_DEFAULT_CONNECTIONS`.
"""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass

from arena.errors import ArenaError

#: The default cap on a machine whose open-file limit would allow more (memory is the limit
#: then: a connection may buffer up to a request head and 64 KiB of body).
MAX_DEFAULT_CONNECTIONS = 4096
#: Files the server keeps for itself at most (database, spool, children's pipes, log).
MAX_RESERVED_FILES = 128
#: Connections accepted at once at most, and the listening socket's queue.
MAX_ACCEPT_BATCH = 64
#: Batches of connections dropped to make room that may still hold their files (they are
#: closed in the next pass of the event loop).
ACCEPT_PASSES = 2
#: The fewest connections the server runs with.
MIN_CONNECTIONS = 8


class TrafficError(ArenaError):
    """Traffic limits that cannot hold (a cap beyond the files the process may open)."""


@dataclass(frozen=True)
class TrafficLimits:
    """What one client may hold of the server.

    ``max_connections`` are held at once; at the cap, a connection that brings a whole request
    head drops the connection that has waited longest on its client (of the peer with the most
    such), and any other is refused. A request's head must be complete within
    ``header_timeout`` seconds of the connection being accepted (or of its first byte, on a
    kept-alive connection), and hold ``head_bytes`` at most while it arrives; its body must have
    arrived, as far as it goes, within ``body_timeout`` seconds plus one second per
    ``body_rate`` bytes; the next request must start within ``keep_alive`` seconds of an answer
    taken in full; a client that takes nothing of an answer for ``send_timeout`` seconds (or,
    while 64 KiB of it wait to be written, less than 48 KiB) is cut off. A connection answers
    ``requests_per_connection`` requests at most; ``accept_batch`` connections are accepted in
    one pass of the event loop at most."""

    max_connections: int
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    body_rate: float = 8 * 1024.0
    keep_alive: float = 5.0
    send_timeout: float = 30.0
    requests_per_connection: int = 1000
    head_bytes: int = 16 * 1024
    accept_batch: int = MAX_ACCEPT_BATCH

    @property
    def tick(self) -> float:
        """Seconds between two checks of every connection's deadlines: a quarter of the
        shortest timeout, between 50 ms and half a second."""
        shortest = min(self.header_timeout, self.body_timeout, self.keep_alive, self.send_timeout)
        return max(0.05, min(0.5, shortest / 4))


def open_file_limit() -> int:
    """The files this process may have open (its soft RLIMIT_NOFILE; a large number when it
    has none)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)


def reserved_files(open_files: int) -> int:
    """The files the server keeps for itself out of ``open_files``: an eighth, at most
    :data:`MAX_RESERVED_FILES`."""
    return min(MAX_RESERVED_FILES, open_files // 8)


def accept_batch(open_files: int) -> int:
    """Connections accepted at once with ``open_files``: a sixteenth, between 8 and
    :data:`MAX_ACCEPT_BATCH`."""
    return max(8, min(MAX_ACCEPT_BATCH, open_files // 16))


def connection_room(open_files: int) -> int:
    """The most connections ``open_files`` leave room for: what is neither reserved nor kept
    for connections being dropped (768 of 1,024)."""
    return open_files - reserved_files(open_files) - ACCEPT_PASSES * accept_batch(open_files)


def traffic_limits(
    max_connections: int | None = None,
    open_files: int | None = None,
    header_timeout: float = 10.0,
    body_timeout: float = 10.0,
    body_rate: float = 8.0,
    keep_alive: float = 5.0,
    send_timeout: float = 30.0,
) -> TrafficLimits:
    """The limits of a server that may open ``open_files`` files (default: this process's
    limit), with ``max_connections`` (default: :func:`connection_room`, at most
    :data:`MAX_DEFAULT_CONNECTIONS`) and the timeouts given (``body_rate`` in KiB per
    second); :class:`TrafficError` when the cap cannot hold."""
    for option, value in (
        ("--header-timeout", header_timeout),
        ("--body-timeout", body_timeout),
        ("--body-rate", body_rate),
        ("--keep-alive", keep_alive),
        ("--send-timeout", send_timeout),
    ):
        if not math.isfinite(value) or value <= 0:
            raise TrafficError(f"{option} must be a positive number, not {value!r}")
    files = open_file_limit() if open_files is None else open_files
    room = connection_room(files)
    if room < MIN_CONNECTIONS:
        raise TrafficError(
            f"this process may open {files} files, too few to serve: raise its limit "
            f"(ulimit -n) to {MIN_CONNECTIONS + files - room} at least"
        )
    if max_connections is None:
        max_connections = min(room, MAX_DEFAULT_CONNECTIONS)
    elif max_connections > room:
        raise TrafficError(
            f"--max-connections {max_connections} needs more files than this process may open "
            f"({files}: room for {room} connections besides the server's own); raise the "
            "limit (ulimit -n) or ask for fewer"
        )
    return TrafficLimits(
        max_connections=max_connections,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        body_rate=body_rate * 1024,
        keep_alive=keep_alive,
        send_timeout=send_timeout,
        accept_batch=accept_batch(files),
    )
