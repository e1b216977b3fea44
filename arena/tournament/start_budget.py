"""A bot's start budget in a tournament: its first start may take long, its restarts may keep
the tournament waiting only briefly.

A worker (:mod:`arena.tournament.worker`) plays each entrant through a :class:`BudgetedHost`.
The host's first start has the handle's whole ``startup_time``
(:data:`~arena.hosting.hosted.STARTUP_TIME`: importing, compiling, loading tables). After a
fault of the bot, its replacement host starts at once, in the background, while the worker plays
the games that do not need it. The bot's next game waits for that restart at most
``restart_time`` seconds counted from the fault (:data:`RESTART_TIME` unless
``arena tournament --restart-time`` says otherwise). Past that, the bot forfeits the game with a
``timeout`` fault, and so every game it is due to play while its host is still starting, each a
fault that counts towards disqualification; the host goes on starting (within its
``startup_time``) and plays as soon as it is ready. A slow bot pays for its own slowness: the
field waits for its restart ``restart_time`` seconds at most, however often it crashes.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from arena.errors import BotTimeoutError
from arena.hosting.hosted import HostHandle
from arena.referee.play import BotHandle, Turn

#: Seconds the games of a tournament wait, at most, for a bot's restart after its fault.
RESTART_TIME = 10.0


class _Restart:
    """One replacement host starting in a thread of its own.

    Bubblewrap ends a host when the *thread* that started it exits (``--die-with-parent``), so
    the thread lives on, once the host is up, until :meth:`release` (after the host is killed).
    """

    def __init__(self, host: HostHandle, restart_time: float) -> None:
        self.host = host
        self.deadline = time.monotonic() + restart_time
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"restart {host.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.host.launch()
        except BaseException as exc:  # handed to the game that needs the host
            self.error = exc
        self.ready.set()
        if self.error is None:
            self._released.wait()

    def release(self) -> None:
        """Let the thread end: its host has been killed."""
        self._released.set()
        self._thread.join()


class BudgetedHost(BotHandle):
    """``host`` as a tournament plays it: restarted in the background after each fault, its
    games waiting for a restart at most ``restart_time`` seconds after the fault (see the
    module's description). Used from one thread, like the worker that owns it."""

    def __init__(self, host: HostHandle, restart_time: float = RESTART_TIME) -> None:
        self.host = host
        self.name = host.name
        self.restart_time = restart_time
        self._restart: _Restart | None = None
        self._late = False  # the last fault was this budget's: the host is still starting

    def memory_bytes(self) -> int | None:
        """The memory the bot's processes use now (see :meth:`HostHandle.memory_bytes`)."""
        return self.host.memory_bytes()

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Queue the round's news for the host, after waiting for its restart (if one is under
        way) until ``restart_time`` seconds after the fault; a host still starting then is a
        :class:`~arena.errors.BotTimeoutError`, and so is the restart's own failure."""
        restart = self._restart
        if restart is not None:
            if not restart.ready.wait(max(0.0, restart.deadline - time.monotonic())):
                self._late = True
                raise BotTimeoutError(
                    f"the bot's host was not ready within its restart allowance of "
                    f"{self.restart_time:g} s after its last fault (--restart-time); it forfeits "
                    "each game until its host has started"
                )
            if restart.error is not None:
                self._restart = None  # the failed host is gone, and its thread with it
                raise restart.error
        self.host.start(seat, players, variant, seed)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """The host's answer."""
        return self.host.act(turn, time_limit)

    def after_fault(self) -> None:
        """Kill the host and start its replacement in the background, unless the fault was a
        restart that is late: that host goes on starting."""
        if self._late:
            self._late = False
            return
        self._drop()
        self._restart = _Restart(self.host, self.restart_time)

    def _stop_restart(self) -> _Restart | None:
        """The restart under way, no longer this handle's, its host killed if still starting
        (its thread then sees the host gone and says so)."""
        restart, self._restart = self._restart, None
        while restart is not None and not restart.ready.wait(0.05):
            self.host.terminate()
        return restart

    def _drop(self) -> None:
        """Kill the host, and end the thread that started it, if any."""
        restart = self._stop_restart()
        self.host.after_fault()
        if restart is not None:
            restart.release()

    def close(self) -> None:
        """Stop the host (and its restart, if one is under way)."""
        restart = self._stop_restart()
        self.host.close()
        if restart is not None:
            restart.release()
