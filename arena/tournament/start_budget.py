"""A bot's start budget in a tournament: its first start may take long, its restarts may keep
the tournament waiting only briefly, and nobody waits for a host while other games can be played.

A worker (:mod:`arena.tournament.worker`) plays each entrant through a :class:`BudgetedHost`.
Where control groups limit the hosts, every start happens in the background, in a thread of its
own, at the least CPU weight (the host gets the core only when play leaves it idle), while the
worker plays the games whose hosts are ready:

- the first start has the handle's whole ``startup_time``
  (:data:`~arena.hosting.hosted.STARTUP_TIME`: importing, compiling, loading tables), after
  the trusted compile step has compiled the bot's kernels where it is still compiling them;
- after a fault of the bot, its replacement host starts at once, and the worker waits for it,
  with nothing else to play, ``restart_time`` seconds at most (:data:`RESTART_TIME` unless
  ``--restart-time`` says otherwise; time spent playing other games does not count, since a
  start in the background gets the CPU only when play leaves it idle). Past that, the bot
  forfeits its game with a ``timeout`` fault, and so every game it is due to play while its
  host is still starting and nothing else can be played, each a fault that counts towards
  disqualification; the host goes on starting (within its ``startup_time``) and plays as soon
  as it is ready.

Without control groups (the unsandboxed fallback) a start cannot be kept off the CPU that play
needs, so hosts start in the game that needs them, as before; a restart then has
``restart_time`` seconds to start, or it is a ``timeout`` fault.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from arena.errors import BotTimeoutError
from arena.hosting.hosted import HostHandle
from arena.referee.play import BotHandle, Turn

#: Seconds the games of a tournament wait, at most, for a bot's restart after its fault.
RESTART_TIME = 10.0


class _Start:
    """One host starting in a thread of its own, after ``prepare`` (if any) has returned.

    Bubblewrap ends a host when the *thread* that started it exits (``--die-with-parent``), so
    the thread lives on, once the host is up, until :meth:`release` (after the host is killed).
    """

    def __init__(
        self, host: HostHandle, allowance: float | None, prepare: Callable[[], object] | None
    ) -> None:
        self.host = host
        #: Seconds the games may still wait for it (None: as long as the start itself may take).
        self.allowance = allowance
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._prepare = prepare
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"start {host.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._prepare is not None:
                self._prepare()
            self.host.launch()
        except BaseException as exc:  # handed to the game that needs the host
            self.error = exc
        self.ready.set()
        if self.error is None:
            self._released.wait()

    @property
    def late(self) -> bool:
        """Whether the games stopped waiting for it."""
        return self.allowance is not None and self.allowance <= 0

    def release(self) -> None:
        """Let the thread end: its host has been killed."""
        self._released.set()
        self._thread.join()


class BudgetedHost(BotHandle):
    """``host`` as a tournament plays it, started in the background where its sandbox has
    control groups, its restarts held to ``restart_time`` seconds (see the module's
    description). ``prepare`` runs before the first start (waiting for the trusted compile
    step). Used from one thread, like the worker that owns it."""

    def __init__(
        self,
        host: HostHandle,
        restart_time: float = RESTART_TIME,
        prepare: Callable[[], object] | None = None,
    ) -> None:
        self.host = host
        self.name = host.name
        self.restart_time = restart_time
        self.background = host.sandbox.hierarchy is not None
        host.idle_start = self.background
        self._prepare = prepare
        self._start: _Start | None = None
        self._late = False  # the last fault was this budget's: the host is still starting

    def memory_bytes(self) -> int | None:
        """The memory the bot's processes use now (see :meth:`HostHandle.memory_bytes`)."""
        return self.host.memory_bytes()

    def begin(self) -> None:
        """Start the host in the background, if it starts there and is not up or starting."""
        if self.background and self._start is None and not self.host.running:
            self._start = _Start(self.host, None, self._prepare)
            self._prepare = None

    @property
    def ready(self) -> bool:
        """Whether a game needing this bot may be played now, the bot's host being up or having
        failed to start (or starting in the game itself, where starts are not in the
        background)."""
        return self._start is None or self._start.ready.is_set()

    @property
    def late(self) -> bool:
        """Whether the bot's host is starting past its restart allowance: a game needing it may
        begin now, and the bot forfeits it."""
        return self._start is not None and not self._start.ready.is_set() and self._start.late

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` the games waited for this bot's host against its restart
        allowance (a first start has none)."""
        begun = self._start
        if begun is not None and begun.allowance is not None and not begun.ready.is_set():
            begun.allowance -= seconds

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Queue the round's news for the host, once it has started: waiting for a background
        start for what is left of its allowance (a host still starting then is a
        :class:`~arena.errors.BotTimeoutError`, and so is a start that failed), or starting it
        here where hosts do not start in the background."""
        self.begin()
        begun = self._start
        if begun is not None:
            waiting = time.monotonic()
            begun.ready.wait(None if begun.allowance is None else max(0.0, begun.allowance))
            self.charge(time.monotonic() - waiting)
            if not begun.ready.is_set():
                self._late = True
                raise BotTimeoutError(
                    f"the games waited the bot's restart allowance of {self.restart_time:g} s "
                    "(--restart-time) for its host after its last fault; it forfeits each game "
                    "it is due in until its host has started"
                )
            if begun.error is not None:
                self._start = None  # the failed host is gone, and its thread with it
                raise begun.error
        elif self._prepare is not None:
            self._prepare()
            self._prepare = None
        self.host.start(seat, players, variant, seed)

    def new_game(self, deck: object) -> None:
        """Say which deck the next round is played on (see :meth:`HostHandle.new_game`)."""
        self.host.new_game(deck)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """The host's answer."""
        return self.host.act(turn, time_limit)

    def output_mark(self) -> int:
        """The host's (:meth:`HostHandle.output_mark`)."""
        return self.host.output_mark()

    def output_since(self, mark: int, limit: int) -> str:
        """The host's (:meth:`HostHandle.output_since`)."""
        return self.host.output_since(mark, limit)

    def after_fault(self) -> None:
        """Kill the host and start its replacement (in the background, due within
        ``restart_time`` seconds), unless the fault was a restart that is late: that host goes
        on starting."""
        if self._late:
            self._late = False
            return
        begun = self._stop_start()
        self.host.after_fault()
        if begun is not None:
            begun.release()
        if self.background:
            self._start = _Start(self.host, self.restart_time, None)
        else:
            self.host.startup_time = min(self.host.startup_time, self.restart_time)

    def _stop_start(self) -> _Start | None:
        """The start under way, no longer this handle's, its host killed if still starting
        (its thread then sees the host gone and says so)."""
        begun, self._start = self._start, None
        while begun is not None and not begun.ready.wait(0.05):
            self.host.terminate()
        return begun

    def close(self) -> None:
        """Stop the host (and its start, if one is under way)."""
        begun = self._stop_start()
        self.host.close()
        if begun is not None:
            begun.release()
