"""The application served by uvicorn with the defences against hostile traffic (docs/serve.md,
"Hostile traffic"): connections held to :class:`~arena.serve.traffic.TrafficLimits` by
:mod:`arena.serve.connections`, the logs limited by :mod:`arena.serve.logs`, and connections
accepted by an :class:`Acceptor` of the server's own.

asyncio's own accept loop gives uvicorn no say over which connections it takes: it accepts as
many as its queue's length in a pass, each holding a file for a few more passes before the
protocol even sees it, and logs every ``accept()`` that fails for want of files, up to the
queue's length a pass. The :class:`Acceptor` counts a connection from the moment it is
accepted, and at the cap takes one only if it brought a whole request head (dropping a connection
that waits on its client to make room); any other it closes at once, before it costs more than
the ``accept()`` itself. Connections it does not take wait in the kernel's queue, which is made
long, so that a visitor's connection waits its turn instead of being dropped.
"""

from __future__ import annotations

import asyncio
import errno
import math
import socket
from collections.abc import Callable, Iterable
from typing import Any

import uvicorn

from arena.serve.connections import Connections, guarded_protocol
from arena.serve.logs import RateLimitedLog, install_log_limits, server_log_limits
from arena.serve.traffic import TrafficLimits

#: Connections the kernel holds for the server before it accepts them (its own limit,
#: ``net.core.somaxconn``, may be lower).
LISTEN_QUEUE = 4096
#: Seconds accepting pauses when ``accept()`` fails (it found no file or memory for a
#: connection, or a network error).
ACCEPT_PAUSE = 0.1
#: ``accept()`` errors that say the process or the system is out of files or memory.
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class Acceptor:
    """Accepts connections on ``listening`` for ``table``, at most ``table.limits.accept_batch``
    a pass of the event loop, and hands each one taken to a protocol from ``make_protocol``."""

    def __init__(
        self,
        listening: socket.socket,
        table: Connections,
        make_protocol: Callable[[], asyncio.Protocol],
    ) -> None:
        self.listening = listening
        self.table = table
        self.make_protocol = make_protocol
        self.batch = table.limits.accept_batch
        self.head_bytes = table.limits.head_bytes
        self.loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._paused: asyncio.TimerHandle | None = None
        self._closed = False

    def start(self) -> None:
        """Start accepting."""
        self.listening.setblocking(False)
        self.loop.add_reader(self.listening.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting (the connections taken go on)."""
        self._closed = True
        if self._paused is not None:
            self._paused.cancel()
        self.loop.remove_reader(self.listening.fileno())

    def _accept(self) -> None:
        for _ in range(self.batch):
            try:
                connection, _ = self.listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:  # out of files, or a network error the kernel passes on
                self.table.dropped["no files" if exc.errno in OUT_OF_RESOURCES else "failed"] += 1
                self._pause()
                return
            if not self.table.make_room(self._whole_head(connection)):
                connection.close()
                continue
            task = self.loop.create_task(self._hand_over(connection))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _whole_head(self, connection: socket.socket) -> bool:
        """Whether ``connection`` has brought a whole request head already (read without
        taking it)."""
        try:
            start = connection.recv(self.head_bytes, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except OSError:
            return False
        return b"\r\n\r\n" in start

    async def _hand_over(self, connection: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.make_protocol, connection)
        except Exception:  # the connection went before its protocol had it
            self.table.abandon()
            connection.close()

    def _pause(self) -> None:
        self.loop.remove_reader(self.listening.fileno())
        self._paused = self.loop.call_later(ACCEPT_PAUSE, self._resume)

    def _resume(self) -> None:
        self._paused = None
        if not self._closed:
            self.loop.add_reader(self.listening.fileno(), self._accept)


class GuardedServer(uvicorn.Server):
    """uvicorn's server (its lifespan, signals and shutdown) whose connections come from an
    :class:`Acceptor` for ``table`` (that of ``config.http``, a
    :class:`~arena.serve.connections.GuardedProtocol`) instead of asyncio's own accept loop,
    on ``listening`` (default: a socket bound to ``config.host`` and ``config.port``)."""

    def __init__(
        self,
        config: uvicorn.Config,
        table: Connections,
        listening: socket.socket | None = None,
    ) -> None:
        super().__init__(config)
        self.table = table
        self.listening = listening
        self.acceptor: Acceptor | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Bind (before the application starts: a port in use ends the server at once), start
        as uvicorn does with no listening socket of its own, then accept."""
        if self.listening is None:
            self.listening = self.config.bind_socket()
        await super().startup(sockets=[])
        self.listening.set_inheritable(False)
        if hasattr(socket, "TCP_DEFER_ACCEPT"):  # Linux: a connection is accepted with its data
            self.listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 1)
        self.listening.listen(LISTEN_QUEUE)
        protocol = self.config.http_protocol_class
        loop = asyncio.get_running_loop()

        def make_protocol() -> asyncio.Protocol:
            return protocol(  # type: ignore[call-arg]
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                _loop=loop,
            )

        self.acceptor = Acceptor(self.listening, self.table, make_protocol)
        self.acceptor.start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting, then shut down as uvicorn does."""
        if self.acceptor is not None:
            self.acceptor.close()
        await super().shutdown(sockets)
        if self.listening is not None:
            self.listening.close()


def guarded_server(
    app: Any,
    limits: TrafficLimits,
    listening: socket.socket | None = None,
    on_tick: Callable[[], None] = lambda: None,
    **config: Any,
) -> GuardedServer:
    """A :class:`GuardedServer` of ``app`` held to ``limits`` (``on_tick`` called every tick),
    on ``listening`` if given; ``config`` are more of :class:`uvicorn.Config`'s arguments (its
    host and port, its logging)."""
    protocol = guarded_protocol(limits, on_tick)
    settings = uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=math.ceil(limits.keep_alive) + 1,  # the table's own comes first
        h11_max_incomplete_event_size=limits.head_bytes,
        **config,
    )
    return GuardedServer(settings, protocol.table, listening)


def run_server(app: Any, host: str, port: int, limits: TrafficLimits) -> None:
    """Serve ``app`` on ``host:port`` until interrupted, with uvicorn's access and error logs
    (limited: :func:`~arena.serve.logs.server_log_limits`), held to ``limits``."""
    logs = server_log_limits()
    server = guarded_server(
        app, limits, on_tick=lambda: _flush(logs.values()), host=host, port=port, log_level="info"
    )
    install_log_limits(logs)
    try:
        server.run()
    finally:
        _flush(logs.values(), math.inf)


def _flush(logs: Iterable[RateLimitedLog], now: float | None = None) -> None:
    for log in logs:
        log.flush(now)
