"""The server's connections, each held to its deadlines (docs/serve.md, "Hostile traffic").

:class:`GuardedProtocol` is uvicorn's HTTP/1.1 protocol (h11) that also keeps to
:class:`~arena.serve.traffic.TrafficLimits`; :class:`Connections` is the table of one server's
connections: the cap, the connections that wait on their client (oldest first, by peer), a
check of every deadline each tick, and one log line every :data:`REPORT_SECONDS` saying what was
dropped (:mod:`arena.serve.server` serves the application with them).

A connection is in one of four phases: ``head`` (a request head is awaited: the whole head by
its deadline), ``idle`` (between requests: the next must start by its deadline), ``body`` (a
request body arrives: by its deadline, which moves on with every byte at the minimum rate) and
``answer`` (the client has sent its request; the server answers). Whatever the phase, a client
that does not take the answer written to it is cut off (:meth:`GuardedProtocol.check`); the
idle clock starts once the last answer is all taken. A connection the server owes nothing (it
awaits a head, is idle, or drains a body its answer did not need) may be dropped to make room
at the cap; one being answered, or written to, may not.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.serve.traffic import TrafficLimits

HEAD, IDLE, BODY, ANSWER = "head", "idle", "body", "answer"
#: Seconds between two lines of the log saying which connections were dropped, and why.
REPORT_SECONDS = 10.0
#: The logger those lines go to: the server's error log.
LOG = logging.getLogger("uvicorn.error")


class Connections:
    """The connections of one server under ``limits``: :meth:`make_room` decides whether a
    connection just accepted is taken, :meth:`admit` counts it in once it has its protocol,
    :meth:`waiting` and :meth:`busy` follow whether the server owes it an answer, and every
    ``limits.tick`` seconds each connection's deadlines are checked and ``on_tick`` is
    called."""

    def __init__(self, limits: TrafficLimits, on_tick: Callable[[], None] = lambda: None) -> None:
        self.limits = limits
        self.on_tick = on_tick
        self.open: set[GuardedProtocol] = set()
        #: Connections taken whose protocol has not started yet.
        self.pending = 0
        #: Per peer, its connections the server owes nothing, in the order they began to wait.
        self.waiting_by_peer: dict[str, dict[GuardedProtocol, None]] = {}
        #: Connections dropped since the last report, by reason.
        self.dropped: Counter[str] = Counter()
        self._timer: asyncio.TimerHandle | None = None
        self._next_report = 0.0

    def make_room(self, whole_head: bool) -> bool:
        """Whether to take a connection just accepted (then counted as pending): under the cap
        always; at the cap only if it brought a ``whole_head`` and a connection waiting on its
        client can be dropped for it (the one that has waited longest of the peer with the most
        waiting)."""
        if len(self.open) + self.pending < self.limits.max_connections:
            self.pending += 1
            return True
        victim = self._victim() if whole_head else None
        if victim is None:
            self.dropped["refused"] += 1
            return False
        self.dropped["evicted"] += 1
        victim.drop()
        self.pending += 1
        return True

    def abandon(self) -> None:
        """A connection taken closed before its protocol started."""
        self.pending = max(0, self.pending - 1)

    def admit(self, connection: GuardedProtocol) -> None:
        """Count ``connection`` in (its protocol has started); its deadlines are checked from
        now on."""
        if self._timer is None:
            self._next_report = connection.loop.time() + REPORT_SECONDS
            self._timer = connection.loop.call_later(self.limits.tick, self._sweep)
        self.pending = max(0, self.pending - 1)
        self.open.add(connection)
        self.waiting(connection)

    def waiting(self, connection: GuardedProtocol) -> None:
        """``connection`` waits on its client: it may be dropped to make room."""
        if not connection.is_waiting:
            connection.is_waiting = True
            self.waiting_by_peer.setdefault(connection.peer, {})[connection] = None

    def busy(self, connection: GuardedProtocol) -> None:
        """The server owes ``connection`` an answer: it is not dropped to make room."""
        if connection.is_waiting:
            connection.is_waiting = False
            held = self.waiting_by_peer[connection.peer]
            del held[connection]
            if not held:
                del self.waiting_by_peer[connection.peer]

    def leave(self, connection: GuardedProtocol) -> None:
        """``connection`` is closed (or closing): it no longer counts."""
        self.busy(connection)
        self.open.discard(connection)

    def _victim(self) -> GuardedProtocol | None:
        most: dict[GuardedProtocol, None] = {}
        for held in self.waiting_by_peer.values():
            if len(held) > len(most):
                most = held
        return next(iter(most), None)

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for connection in list(self.open):
            connection.check(now)
        self.on_tick()
        if now >= self._next_report:
            self._next_report = now + REPORT_SECONDS
            if self.dropped:
                LOG.warning("%s", self.report())
                self.dropped.clear()
        self._timer = loop.call_later(self.limits.tick, self._sweep)

    def report(self) -> str:
        """One line: the connections dropped since the last report, by reason."""
        limits = self.limits
        reasons = {
            "evicted": f"dropped at the cap of {limits.max_connections} (waited longest)",
            "refused": "refused at the cap (no whole request head, or none to drop for it)",
            "no files": "accept() failures for want of files (accepting paused 0.1 s each)",
            "failed": "other accept() failures (accepting paused 0.1 s each)",
            HEAD: f"closed: request head not complete within {limits.header_timeout:g} s",
            BODY: f"cut off: request body slower than {limits.body_rate / 1024:g} KiB/s",
            "send": f"cut off: answer not taken for {limits.send_timeout:g} s",
        }
        said = [f"{count} {reasons.get(why, why)}" for why, count in self.dropped.most_common()]
        return f"connections in the last {REPORT_SECONDS:g} s: " + "; ".join(said)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol held to the limits of its class's :attr:`table` (a subclass per
    server: :func:`guarded_protocol`)."""

    table: ClassVar[Connections]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = self.table.limits
        self.phase = HEAD
        self.deadline = math.inf
        self.peer = ""
        self.is_waiting = False
        self.counted = False
        self.requests = 0
        self.body_start = 0.0
        self.body_bytes = 0
        self.checked = 0.0
        self.write_paused_at: float | None = None
        self.unsent = 0
        self.unsent_since: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection in and start its head's clock."""
        super().connection_made(transport)
        self.peer = self.client[0] if self.client else ""
        self.checked = self.loop.time()
        self.deadline = self.checked + self.limits.header_timeout
        self.counted = True
        self.table.admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection no longer counts."""
        self.drop_count()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does, then follow the request's phase."""
        now = self.loop.time()
        if self.phase == IDLE:
            self.phase, self.deadline = HEAD, now + self.limits.header_timeout
        elif self.phase == BODY:
            self.body_bytes += len(data)
        super().data_received(data)
        self._settle(now)

    def on_response_complete(self) -> None:
        """An answer is written: close after the last one a connection may have, else wait
        for the next request (or answer one already sent)."""
        self.requests += 1
        if self.requests >= self.limits.requests_per_connection:
            self.transport.close()
        super().on_response_complete()
        if not self.transport.is_closing():
            self._settle(self.loop.time())

    def pause_writing(self) -> None:
        """The client takes the answer slower than it is written: its clock starts."""
        self.write_paused_at = self.loop.time()
        super().pause_writing()

    def resume_writing(self) -> None:
        """The client took enough of the answer."""
        self.write_paused_at = None
        super().resume_writing()

    def _settle(self, now: float) -> None:
        """Follow what h11 says of the client's side, and whether an answer is owed."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self.phase != BODY:
                self.phase, self.body_start, self.body_bytes = BODY, now, 0
            self.deadline = (
                self.body_start + self.limits.body_timeout + self.body_bytes / self.limits.body_rate
            )
        elif state is h11.IDLE:
            if self.phase in (BODY, ANSWER):
                self.phase, self.deadline = IDLE, now + self.limits.keep_alive
        else:
            self.phase, self.deadline = ANSWER, math.inf
        self._follow_owing(self.transport.get_write_buffer_size())

    def _follow_owing(self, unsent: int) -> None:
        """Tell the table whether the server owes the connection anything: an answer being
        made, or the rest of one being written (``unsent`` bytes)."""
        if unsent or (self.cycle is not None and not self.cycle.response_complete):
            self.table.busy(self)
        else:
            self.table.waiting(self)

    def check(self, now: float) -> None:
        """Drop the connection if it is past its deadline or its client does not take its
        answer."""
        unsent = self.transport.get_write_buffer_size()
        if self.phase == BODY and self.flow.read_paused:  # the server is slow to read: not late
            self.body_start += now - self.checked
            self.deadline += now - self.checked
        elif self.phase == IDLE and unsent:  # still taking the last answer: not idle yet
            self.deadline = now + self.limits.keep_alive
        self.checked = now
        if now >= self.deadline:
            if self.phase != IDLE:
                self.table.dropped[self.phase] += 1
            self.drop()
            return
        if not unsent:
            self.unsent_since = None
        elif self.unsent_since is None or unsent < self.unsent:
            self.unsent_since = now
        self.unsent = unsent
        limit = self.limits.send_timeout
        stalled = self.unsent_since is not None and now - self.unsent_since > limit
        if stalled or (self.write_paused_at is not None and now - self.write_paused_at > limit):
            self.table.dropped["send"] += 1
            self.drop()
        elif self.phase == IDLE:
            self._follow_owing(unsent)

    def drop(self) -> None:
        """Close the connection now (what is left of an answer is thrown away)."""
        self.drop_count()
        if self.transport.get_write_buffer_size():
            self.transport.abort()
        else:
            self.transport.close()

    def drop_count(self) -> None:
        """Stop counting the connection (once)."""
        if self.counted:
            self.counted = False
            self.table.leave(self)


def guarded_protocol(
    limits: TrafficLimits, on_tick: Callable[[], None] = lambda: None
) -> type[GuardedProtocol]:
    """A protocol class for uvicorn's ``http=`` whose connections share one
    :class:`Connections` table under ``limits`` (``on_tick`` called every tick)."""
    return type("ArenaHTTPProtocol", (GuardedProtocol,), {"table": Connections(limits, on_tick)})
