"""The runner of a tournament, as a lease in the database: one runner per tournament.

A runner takes the lease of its tournament (a row of the ``runners`` table) before it plays or
writes anything, renews it while it runs and deletes it when it stops. The lease expires
``seconds`` after its last renewal, so a runner killed outright holds its tournament no longer
than that, and none at all when the next runner starts on the same machine: a lease records its
holder's process (:func:`this_process`), and a runner that finds that process gone
(:func:`process_alive`) takes the lease over at once (:func:`take_dead`). Every write a runner
makes is checked against its lease in the same transaction (:func:`hold`), so a runner that lost
its lease cannot store anything. Times are taken from the database's clock, so runners on
machines whose clocks differ agree on when a lease expires.

These functions work inside a session's transaction; :class:`leaderboard.store.Store` wraps
them (``take_lease``, ``renew_lease``, ``release_lease``, ``runner``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Float, cast, delete, extract, func, insert, literal, null, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from arena.errors import ArenaError
from leaderboard.models import Runner, Tournament


class TournamentBusyError(ArenaError):
    """Another runner holds the tournament (the message names it, on one line)."""


class LeaseLostError(ArenaError):
    """This runner's lease expired and another runner took the tournament over."""


@dataclass(frozen=True)
class RunnerInfo:
    """Who holds a tournament (``pid N on HOST``), since when, and until when the lease runs
    unless it is renewed (UTC). ``process`` is the holder's process as the lease records it
    (:func:`this_process`; ``None`` when it recorded none) and ``alive`` what this machine can
    tell of it (:func:`process_alive`): True while it runs here, False once it is gone (the
    next runner takes the lease over at once), ``None`` when it ran elsewhere or cannot be
    told (the lease then lasts until it expires)."""

    holder: str
    since: datetime
    expires: datetime
    process: str | None = None
    alive: bool | None = None


# -- the holder's process ------------------------------------------------------------------------

#: Where Linux keeps the id of the machine's current boot (the same in every container on it).
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
#: The states of /proc/PID/stat of a process that has ended: a zombie waiting for its parent,
#: and a dead one.
ENDED = frozenset("ZXx")


def _stat(pid: int) -> tuple[str, int]:
    """The state and start time (clock ticks after boot) of process ``pid``, from
    /proc/PID/stat; OSError when it cannot be read."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()  # after the command name, which may hold ")"
    try:
        return fields[0], int(fields[19])  # fields 3 (state) and 22 (starttime) of proc(5)
    except (IndexError, ValueError):
        raise OSError(f"/proc/{pid}/stat: not understood") from None


def this_process() -> str | None:
    """This process as its lease records it: ``BOOT PIDNS PID START``, the id of this machine's
    boot, its pid namespace (``pid:[N]``), its pid and its start time in clock ticks after boot
    (from /proc). Together they name one process for good: a pid taken again by a later
    process has another start time. ``None`` where /proc does not tell (not Linux, or a /proc
    mounted from another pid namespace), and the lease then only expires."""
    pid = os.getpid()
    try:
        if os.readlink("/proc/self") != str(pid):
            return None
        boot = BOOT_ID.read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
        _, start = _stat(pid)
    except (OSError, ValueError):
        return None
    if not boot or " " in boot or " " in namespace:
        return None
    return f"{boot} {namespace} {pid} {start}"


def process_alive(process: str | None) -> bool | None:
    """Whether ``process`` (a lease's record of its holder, see :func:`this_process`) still
    runs: True when it runs on this machine, in this pid namespace; False when it ran here and
    is gone (its pid is free, is a zombie, or is another process's, started at another time);
    ``None`` when this machine cannot tell (it ran on another machine or in another pid
    namespace, the lease recorded no process, or there is no /proc here)."""
    here = this_process()
    if process is None or here is None:
        return None
    parts = process.split(" ")
    if len(parts) != 4 or parts[:2] != here.split(" ")[:2]:
        return None
    try:
        pid, start = int(parts[2]), int(parts[3])
    except ValueError:
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)  # a signal never sent: only whether the pid is taken
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # taken, by a process of another user
    except OSError:
        return None
    try:
        state, started = _stat(pid)
    except OSError:
        return None  # hidden from this user (/proc mounted with hidepid), or it just ended
    return state not in ENDED and started == start


def clock(session: Session) -> ColumnElement[float]:
    """Now, in seconds since the epoch, by the database's clock (this machine's clock on a
    database with no clock function known here)."""
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        return (func.julianday("now") - 2440587.5) * 86400.0
    if dialect == "postgresql":
        return cast(extract("epoch", func.clock_timestamp()), Float)
    return literal(time.time(), Float)


def _changed(result: Any) -> int:
    """How many rows an UPDATE or DELETE changed."""
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


@dataclass(frozen=True)
class Claim:
    """A runner taking a lease: who it is (``pid N on HOST``), its process
    (:func:`this_process`, or ``None``), the new lease's token and its length in seconds."""

    holder: str
    process: str | None
    token: str
    seconds: float

    def values(self, session: Session) -> dict[str, Any]:
        """The lease's columns for this claim, taken now by the database's clock."""
        now = clock(session)
        return {
            "holder": self.holder,
            "process": self.process,
            "token": self.token,
            "since": now,
            "expires": now + self.seconds,
            "seconds": self.seconds,
        }


def take_expired(session: Session, tournament_id: int, claim: Claim) -> bool:
    """Take over the lease of ``tournament_id`` if it has expired (a conditional UPDATE: of
    runners doing this at once, one changes the row)."""
    result = session.execute(
        update(Runner)
        .where(Runner.tournament_id == tournament_id, Runner.expires < clock(session))
        .values(**claim.values(session))
        .execution_options(synchronize_session=False)
    )
    return _changed(result) == 1


def take_dead(session: Session, tournament_id: int, dead: str, claim: Claim) -> bool:
    """Take over the lease of ``tournament_id`` while the process ``dead`` holds it (a process
    :func:`process_alive` found gone), expired or not: a conditional UPDATE on that process,
    so that of runners doing this at once one changes the row, and none takes it from a runner
    that took it meanwhile."""
    result = session.execute(
        update(Runner)
        .where(Runner.tournament_id == tournament_id, Runner.process == dead)
        .values(**claim.values(session))
        .execution_options(synchronize_session=False)
    )
    return _changed(result) == 1


def take_free(session: Session, tournament_id: int, claim: Claim) -> None:
    """Take the lease of ``tournament_id`` when nobody holds it (an INSERT: of runners doing this
    at once, one succeeds and the others' violate the primary key)."""
    session.execute(insert(Runner).values(tournament_id=tournament_id, **claim.values(session)))


def renew(session: Session, tournament_id: int, token: str) -> bool:
    """Extend the lease held with ``token`` by its ``seconds`` from now; False when it is not
    held with that token any more (another runner took it over after it expired)."""
    result = session.execute(
        update(Runner)
        .where(Runner.tournament_id == tournament_id, Runner.token == token)
        .values(expires=clock(session) + Runner.seconds)
        .execution_options(synchronize_session=False)
    )
    return _changed(result) == 1


def hold(session: Session, tournament_id: int, token: str) -> None:
    """Renew the lease held with ``token`` as the first statement of a write, so that the write
    holds the lease's row until it commits (nobody can take it over meanwhile); raises
    :class:`LeaseLostError` when the lease is not held with that token."""
    if not renew(session, tournament_id, token):
        now = live(session, tournament_id).get(tournament_id)
        by = f"{now.holder} runs it now" if now else "nobody holds it now"
        raise LeaseLostError(
            f"tournament {tournament_id}: this runner lost its lease (it was not renewed in "
            f"time and another runner took the tournament over; {by}); it stops here"
        )


def release(session: Session, tournament_id: int, token: str) -> None:
    """Give up the lease held with ``token`` (nothing happens if it is not held with it)."""
    session.execute(
        delete(Runner)
        .where(Runner.tournament_id == tournament_id, Runner.token == token)
        .execution_options(synchronize_session=False)
    )


def live(
    session: Session, tournament_id: int | None = None, processes: bool = True
) -> dict[int, RunnerInfo]:
    """The unexpired leases (of ``tournament_id`` only, when given), by tournament id, with
    what this machine can tell of their holders' processes. ``processes=False`` reads a
    ``runners`` table made before leases recorded them (a database opened read-only, which
    :meth:`~leaderboard.store.Store.create_schema` has not widened)."""
    query = select(
        Runner.tournament_id,
        Runner.holder,
        Runner.since,
        Runner.expires,
        Runner.process if processes else null(),
    ).where(Runner.expires >= clock(session))
    if tournament_id is not None:
        query = query.where(Runner.tournament_id == tournament_id)
    return {
        tid: RunnerInfo(holder, _when(since), _when(expires), process, process_alive(process))
        for tid, holder, since, expires, process in session.execute(query)
    }


def shown_status(status: str, runner: RunnerInfo | None) -> str:
    """The status to show of a tournament stored as ``status`` whose runner's lease is
    ``runner`` (``None``: no unexpired lease): one stored ``running`` whose runner is gone
    (killed outright, by the kernel or ``kill -9``, before it could say so: its lease expired,
    or its process is gone from this machine) is ``interrupted``, as the next run will find it."""
    if status == "running" and (runner is None or runner.alive is False):
        return "interrupted"
    return status


def busy(session: Session, tournament_id: int, runner: RunnerInfo) -> TournamentBusyError:
    """The error for a runner turned away from ``tournament_id``, held by ``runner``."""
    name = session.scalar(select(Tournament.name).where(Tournament.id == tournament_id))
    if runner.alive:
        why = "that process is still running on this machine: stop it to take the tournament over"
    else:
        why = f"if that runner was killed, its lease expires at {runner.expires:%H:%M:%S} UTC"
    return TournamentBusyError(
        f"tournament {tournament_id} ({name}) is being run by {runner.holder} since "
        f"{runner.since:%Y-%m-%d %H:%M:%S} UTC; one runner per tournament ({why})"
    )


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(float(seconds), UTC)
