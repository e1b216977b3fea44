"""The runner of a tournament, as a lease in the database: one runner per tournament.

A runner takes the lease of its tournament (a row of the ``runners`` table) before it plays or
writes anything, renews it while it runs and deletes it when it stops. The lease expires
``seconds`` after its last renewal, so a runner killed outright holds its tournament no longer
than that. Every write a runner makes is checked against its lease in the same transaction
(:func:`hold`), so a runner that lost its lease cannot store anything. Times are taken from the
database's clock, so runners on machines whose clocks differ agree on when a lease expires.

These functions work inside a session's transaction; :class:`leaderboard.store.Store` wraps
them (``take_lease``, ``renew_lease``, ``release_lease``, ``runner``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, cast, delete, extract, func, insert, literal, select, update
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
    unless it is renewed (UTC)."""

    holder: str
    since: datetime
    expires: datetime


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


def take_expired(
    session: Session, tournament_id: int, holder: str, token: str, seconds: float
) -> bool:
    """Take over the lease of ``tournament_id`` if it has expired (a conditional UPDATE: of
    runners doing this at once, one changes the row)."""
    now = clock(session)
    result = session.execute(
        update(Runner)
        .where(Runner.tournament_id == tournament_id, Runner.expires < now)
        .values(holder=holder, token=token, since=now, expires=now + seconds, seconds=seconds)
        .execution_options(synchronize_session=False)
    )
    return _changed(result) == 1


def take_free(
    session: Session, tournament_id: int, holder: str, token: str, seconds: float
) -> None:
    """Take the lease of ``tournament_id`` when nobody holds it (an INSERT: of runners doing this
    at once, one succeeds and the others' violate the primary key)."""
    now = clock(session)
    session.execute(
        insert(Runner).values(
            tournament_id=tournament_id,
            holder=holder,
            token=token,
            since=now,
            expires=now + seconds,
            seconds=seconds,
        )
    )


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


def live(session: Session, tournament_id: int | None = None) -> dict[int, RunnerInfo]:
    """The unexpired leases (of ``tournament_id`` only, when given), by tournament id."""
    query = select(Runner.tournament_id, Runner.holder, Runner.since, Runner.expires).where(
        Runner.expires >= clock(session)
    )
    if tournament_id is not None:
        query = query.where(Runner.tournament_id == tournament_id)
    return {
        tid: RunnerInfo(holder, _when(since), _when(expires))
        for tid, holder, since, expires in session.execute(query)
    }


def busy(session: Session, tournament_id: int, runner: RunnerInfo) -> TournamentBusyError:
    """The error for a runner turned away from ``tournament_id``, held by ``runner``."""
    name = session.scalar(select(Tournament.name).where(Tournament.id == tournament_id))
    return TournamentBusyError(
        f"tournament {tournament_id} ({name}) is being run by {runner.holder} since "
        f"{runner.since:%Y-%m-%d %H:%M:%S} UTC; one runner per tournament (if that runner "
        f"was killed, its lease expires at {runner.expires:%H:%M:%S} UTC)"
    )


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(float(seconds), UTC)
