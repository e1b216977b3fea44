"""Tests that press Ctrl-C: starting arena commands that take it (``interruptible``), signalling
one once it has stored some games (``stored_games``, ``signal_when_stored``), finding what it left
running (``left_running``), and pressing it inside a tournament run in this process
(``StopAfter``)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path


def interruptible() -> None:
    """A ``preexec_fn``: the command takes Ctrl-C as a terminal's foreground job does, even
    when the test runner itself was started in the background with SIGINT ignored (a
    disposition children inherit across ``exec``, and Python then never raises
    KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stored_games(db: Path) -> int:
    """How many games the SQLite database ``db`` holds (0 while it or its tables do not exist),
    read without writing."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            return int(connection.execute("select count(*) from games").fetchone()[0])
    except sqlite3.Error:  # the tables are not there yet
        return 0


def signal_when_stored(
    proc: subprocess.Popen[str], db: Path, games: int, how: int = signal.SIGINT
) -> None:
    """Send ``how`` to the running ``proc`` once ``db`` holds ``games`` games (within two
    minutes)."""
    deadline = time.monotonic() + 120
    while stored_games(db) < games:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no games stored in two minutes"
        time.sleep(0.02)
    proc.send_signal(how)


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
