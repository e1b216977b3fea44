"""Tests that press Ctrl-C: starting arena commands that take it (``interruptible``), finding
what they left running (``left_running``), and pressing it inside a tournament run in this
process (``StopAfter``)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def interruptible() -> None:
    """A ``preexec_fn``: the command takes Ctrl-C as a terminal's foreground job does, even
    when the test runner itself was started in the background with SIGINT ignored (a
    disposition children inherit across ``exec``, and Python then never raises
    KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def left_running(marker: str) -> list[int]:
    """Processes (other than this one) whose environment holds ``marker``: give the command a
    unique PYTHONPATH entry, which every bot host it starts inherits."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(name))
    return found


class StopAfter:
    """A progress report that presses Ctrl-C once ``games`` games are stored."""

    def __init__(self, games: int) -> None:
        self.games = games

    def update(self, done: int, total: int, faults: int) -> None:
        if done >= self.games:
            raise KeyboardInterrupt
