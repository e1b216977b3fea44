"""Which bots could not start: a handle that remembers its bot's failures to start a round.

A bot whose host cannot start (it dies at start-up, goes over its memory limit, cannot be set up
with its parameters) forfeits the round, and the referee records the fault. :class:`StartWatch`
wraps a handle so that a command can also say, after the round, which seats never started: a
round whose winner could not start has no real result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena.errors import BotError
from arena.referee.play import BotHandle, Turn


class StartWatch(BotHandle):
    """``handle``, passing every call through and keeping the fault kind of its last failed
    start (:attr:`start_failure`, ``None`` while every start worked)."""

    def __init__(self, handle: BotHandle) -> None:
        self.handle = handle
        self.name = handle.name
        self.start_failure: str | None = None

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Start the wrapped handle; remember why if it cannot start."""
        try:
            self.handle.start(seat, players, variant, seed)
        except BotError as exc:
            self.start_failure = exc.kind
            raise

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """The wrapped handle's answer."""
        return self.handle.act(turn, time_limit)

    def after_fault(self) -> None:
        """Pass the fault on to the wrapped handle."""
        self.handle.after_fault()

    def close(self) -> None:
        """Close the wrapped handle."""
        self.handle.close()


def start_failures(watched: list[StartWatch]) -> list[str]:
    """One line per seat of ``watched`` that could not start, and a last one when none could:
    what a command prints after playing."""
    lines = [
        f"seat {seat} ({w.name}) could not start ({w.start_failure}, see its fault), "
        "so it forfeited"
        for seat, w in enumerate(watched)
        if w.start_failure is not None
    ]
    if lines and len(lines) == len(watched):
        lines.append("no bot could start: the round has no real result (see the faults)")
    return lines


def launch_together(handles: Sequence[Any], meanwhile: Callable[[], object] | None = None) -> None:
    """Start the host of every handle that has one at once: every process first, then
    ``meanwhile()`` (this process's own set-up, while the hosts set themselves up), then each
    hello in turn (a host's start is mostly its own process setting itself up: a few hosts
    start in the time of one); a host that fails to start raises its fault at its round's
    start, where the referee records it (:meth:`~arena.hosting.hosted.HostHandle.launch_early`).
    """
    hosts = [handle for handle in handles if hasattr(handle, "launch_early")]
    for host in hosts:
        host.launch_early(wait=False)
    if meanwhile is not None:
        meanwhile()
    for host in hosts:
        host.launch_early()
