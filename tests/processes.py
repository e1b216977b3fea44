"""Tests that press Ctrl-C: starting arena commands that take it (``interruptible``), signalling
one once it has stored some games (``stored_games``, ``wait_until_stored``,
``signal_when_stored``; in a SQLite file or at a database URL), finding what it left
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


def stored_games(db: Path | str) -> int:
    """How many games the SQLite database ``db`` holds, or the database of the URL ``db`` (0
    while it or its tables do not exist), read without writing."""
    if isinstance(db, str):
        return _stored_games_at(db)
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            return int(connection.execute("select count(*) from games").fetchone()[0])
    except sqlite3.Error:  # the tables are not there yet
        return 0


def _stored_games_at(url: str) -> int:
    """:func:`stored_games` of the database at ``url``."""
    from sqlalchemy import create_engine, make_url, text
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.pool import NullPool

    if make_url(url).get_backend_name() == "sqlite":
        return stored_games(Path(make_url(url).database or ""))
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("select count(*) from games")).scalar_one())
    except SQLAlchemyError:  # the tables are not there yet
        return 0
    finally:
        engine.dispose()


def signal_when_stored(
    proc: subprocess.Popen[str], db: Path | str, games: int, how: int = signal.SIGINT
) -> None:
    """Send ``how`` to the running ``proc`` once ``db`` (a SQLite file or a database URL) holds
    ``games`` games (within two minutes)."""
    wait_until_stored(proc, db, games)
    proc.send_signal(how)


def wait_until_stored(proc: subprocess.Popen[str], db: Path | str, games: int) -> None:
    """Wait while the running ``proc`` has stored fewer than ``games`` games in ``db`` (a SQLite
    file or a database URL; two minutes at most)."""
    deadline = time.monotonic() + 120
    while stored_games(db) < games:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no games stored in two minutes"
        time.sleep(0.02)


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
