"""A competition server's ladder as kept in the arena's database (:mod:`leaderboard.store`): the
competition's state (frozen, finished), which ladder player each entrant of a ladder tournament
is, and the standings snapshots the server's pages read.

The standings of a competition are one rating fit over every ladder game; refitting them takes
seconds once there are many games, so a process of its own does it whenever games arrive
(``arena serve standings``) and stores the result as a :class:`Snapshot`. A page reads the latest
snapshot and, for the rating history and the sparklines, a few dozen earlier ones spread over
the competition: no page ever refits or reads the games themselves.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import delete, select, update

from leaderboard.models import Competition, CompetitionSchedule, LadderSeat, LadderSnapshot
from leaderboard.store import Store

#: How many snapshots a rating history is drawn from at most (spread evenly, the latest last).
HISTORY_POINTS = 40
#: The latest snapshots are all kept (the last change is looked for among them)...
RECENT_SNAPSHOTS = 200
#: ...and the older ones thinned whenever a competition holds this many.
KEPT_SNAPSHOTS = 1000


@dataclass(frozen=True)
class CompetitionState:
    """Whether a competition takes uploads (not ``frozen``), whether it is being finished
    (``final``: its ladder stopped for the final round-robin) and that tournament once
    started."""

    name: str
    frozen: bool = False
    final: bool = False
    final_tournament_id: int | None = None


def competition(store: Store, name: str) -> CompetitionState:
    """The state of competition ``name`` (open when never changed)."""
    with store.transaction() as session:
        row = session.get(Competition, name)
        if row is None:
            return CompetitionState(name)
        return CompetitionState(name, bool(row.frozen), bool(row.final), row.final_tournament_id)


def set_competition(store: Store, state: CompetitionState) -> None:
    """Store ``state`` as its competition's."""
    with store.transaction() as session:
        row = session.get(Competition, state.name)
        if row is None:
            row = Competition(name=state.name)
            session.add(row)
        row.frozen = state.frozen
        row.final = state.final
        row.final_tournament_id = state.final_tournament_id


@dataclass(frozen=True)
class Schedule:
    """When competition uploads close by themselves (``closes_at``, aware; ``None``: when the
    organizer freezes it) and the line its front page announces (empty: none)."""

    closes_at: dt.datetime | None = None
    announcement: str = ""

    def closed(self, now: dt.datetime | None = None) -> bool:
        """Whether the closing time has come."""
        when = now or dt.datetime.now(dt.UTC)
        return self.closes_at is not None and when >= self.closes_at


def schedule(store: Store, name: str) -> Schedule:
    """Competition ``name``'s schedule."""
    with store.transaction() as session:
        row = session.get(CompetitionSchedule, name)
        if row is None:
            return Schedule()
        closes = row.closes_at
        if closes is not None and closes.tzinfo is None:  # SQLite keeps no zone: stored as UTC
            closes = closes.replace(tzinfo=dt.UTC)
        return Schedule(closes, row.announcement or "")


def set_schedule(store: Store, name: str, found: Schedule) -> None:
    """Store ``found`` as competition ``name``'s schedule."""
    with store.transaction() as session:
        row = session.get(CompetitionSchedule, name)
        if row is None:
            row = CompetitionSchedule(name=name)
            session.add(row)
        row.closes_at = None if found.closes_at is None else found.closes_at.astimezone(dt.UTC)
        row.announcement = found.announcement


def close_if_due(store: Store, name: str, now: dt.datetime | None = None) -> CompetitionState:
    """Competition ``name``'s state, frozen first if its closing time has come (reopening it,
    ``arena serve freeze --reopen``, clears a closing time that has passed)."""
    state = competition(store, name)
    if not state.frozen and schedule(store, name).closed(now):
        state = replace(state, frozen=True)
        set_competition(store, state)
    return state


# --- who is who in the ladder's tournaments ---------------------------------------------------


def seats(store: Store) -> dict[int, dict[str, str]]:
    """Every recorded ladder seat: per tournament id, entrant name to ladder player."""
    out: dict[int, dict[str, str]] = {}
    with store.transaction() as session:
        for tid, entrant, player in session.execute(
            select(LadderSeat.tournament_id, LadderSeat.entrant, LadderSeat.player)
        ):
            out.setdefault(int(tid), {})[str(entrant)] = str(player)
    return out


def record_seats(store: Store, tournament_id: int, players: dict[str, str]) -> None:
    """Record that the entrants of tournament ``tournament_id`` are these ladder players
    (entrant name to player)."""
    with store.transaction() as session:
        session.execute(delete(LadderSeat).where(LadderSeat.tournament_id == tournament_id))
        session.add_all(
            LadderSeat(tournament_id=tournament_id, entrant=e, player=p) for e, p in players.items()
        )


def player_tournaments(store: Store, player: str, limit: int) -> list[tuple[int, str]]:
    """The latest ``limit`` ladder tournaments ``player`` was entered in, newest first, each with
    the entrant's name there."""
    with store.transaction() as session:
        rows = session.execute(
            select(LadderSeat.tournament_id, LadderSeat.entrant)
            .where(LadderSeat.player == player)
            .order_by(LadderSeat.tournament_id.desc())
            .limit(limit)
        ).all()
    return [(int(t), str(e)) for t, e in rows]


# --- standings snapshots -----------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """A competition's standings fit over ``games`` ladder games, every game stored up to id
    ``through_game`` looked at: ``standings`` the leaderboard rows (ranked order), ``pairs`` the
    head-to-head records, ``faults`` the fault summaries (as
    :meth:`~leaderboard.standings.Standings.to_dict` gives them)."""

    id: int
    created: dt.datetime
    games: int
    through_game: int
    standings: list[dict[str, Any]]
    pairs: dict[str, dict[str, Any]]
    faults: dict[str, Any]

    def row(self, player: str) -> dict[str, Any] | None:
        """``player``'s leaderboard row, if it has one."""
        return next((r for r in self.standings if r.get("bot") == player), None)


def save_snapshot(
    store: Store, name: str, standings: Mapping[str, Any], games: int, through_game: int
) -> int:
    """Store competition ``name``'s standings as its latest snapshot (``standings`` as
    :meth:`~leaderboard.standings.Standings.to_dict` gives them, or its ``standings``, ``pairs``
    and ``faults`` alone; empty: no game yet); its id. The snapshots before it keep their
    leaderboard rows only (the history needs no more), and once there are over
    :data:`KEPT_SNAPSHOTS`, every other one older than the latest :data:`RECENT_SNAPSHOTS` is
    dropped: the history stays spread over the whole competition while the table stays
    bounded."""
    with store.transaction() as session:
        ids = list(
            session.scalars(
                select(LadderSnapshot.id)
                .where(LadderSnapshot.competition == name)
                .order_by(LadderSnapshot.id)
            )
        )
        if ids:
            session.execute(
                update(LadderSnapshot)
                .where(LadderSnapshot.id == ids[-1])
                .values(pairs={}, faults={})
            )
        if len(ids) >= KEPT_SNAPSHOTS:
            older = ids[:-RECENT_SNAPSHOTS]
            session.execute(delete(LadderSnapshot).where(LadderSnapshot.id.in_(older[1::2])))
        row = LadderSnapshot(
            competition=name,
            games=games,
            through_game=through_game,
            standings=standings.get("standings", []),
            pairs=standings.get("pairs", {}),
            faults=standings.get("faults", {}),
        )
        session.add(row)
        session.flush()
        return int(row.id)


def looked_through(store: Store, snapshot_id: int, through_game: int) -> None:
    """Say that snapshot ``snapshot_id`` stands for every game stored up to ``through_game``
    too (the games stored since were none of the ladder's)."""
    with store.transaction() as session:
        session.execute(
            update(LadderSnapshot)
            .where(LadderSnapshot.id == snapshot_id)
            .values(through_game=through_game)
        )


def _snapshot(row: LadderSnapshot) -> Snapshot:
    return Snapshot(
        id=int(row.id),
        created=row.created,
        games=int(row.games),
        through_game=int(row.through_game),
        standings=list(row.standings or []),
        pairs=dict(row.pairs or {}),
        faults=dict(row.faults or {}),
    )


def looked_up_to(store: Store, name: str) -> int | None:
    """The last game id competition ``name``'s latest snapshot looked at (``None``: no snapshot
    yet): one number, without reading the snapshot."""
    with store.transaction() as session:
        found = session.scalar(
            select(LadderSnapshot.through_game)
            .where(LadderSnapshot.competition == name)
            .order_by(LadderSnapshot.id.desc())
            .limit(1)
        )
    return None if found is None else int(found)


def latest_snapshot(store: Store, name: str) -> Snapshot | None:
    """Competition ``name``'s latest standings, or ``None`` before the first fit."""
    with store.transaction() as session:
        row = session.scalars(
            select(LadderSnapshot)
            .where(LadderSnapshot.competition == name)
            .order_by(LadderSnapshot.id.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else _snapshot(row)


@dataclass(frozen=True)
class HistoryPoint:
    """The ratings at one snapshot: per player ``(elo, lo, hi, games)`` (``None`` where
    unknown)."""

    created: dt.datetime
    games: int
    ratings: dict[str, tuple[float | None, float | None, float | None, int]]


def _spread(ids: list[int], points: int) -> list[int]:
    """At most ``points`` of ``ids`` spread evenly, the first and the last among them."""
    if len(ids) <= points:
        return ids
    step = (len(ids) - 1) / (points - 1)
    return sorted({ids[round(k * step)] for k in range(points)})


def history(store: Store, name: str, points: int = HISTORY_POINTS) -> list[HistoryPoint]:
    """Competition ``name``'s ratings at up to ``points`` snapshots spread over its whole life,
    oldest first, the latest snapshot last."""
    with store.transaction() as session:
        ids = list(
            session.scalars(
                select(LadderSnapshot.id)
                .where(LadderSnapshot.competition == name)
                .order_by(LadderSnapshot.id)
            )
        )
        chosen = _spread(ids, points)
        rows = session.execute(
            select(LadderSnapshot.created, LadderSnapshot.games, LadderSnapshot.standings)
            .where(LadderSnapshot.id.in_(chosen))
            .order_by(LadderSnapshot.id)
        ).all()
    return [
        HistoryPoint(
            created,
            int(games),
            {
                str(r["bot"]): (r.get("elo"), r.get("elo_lo"), r.get("elo_hi"), int(r["games"]))
                for r in standings or []
            },
        )
        for created, games, standings in rows
    ]


def last_changes(
    store: Store, name: str, players: Iterable[str], look_back: int = RECENT_SNAPSHOTS
) -> dict[str, tuple[float | None, dt.datetime]]:
    """For each of ``players``, how much its rating moved at the last snapshot that gave it new
    games (``None``: its first rating) and when, among the latest ``look_back`` snapshots."""
    wanted = set(players)
    with store.transaction() as session:
        rows = session.execute(
            select(LadderSnapshot.created, LadderSnapshot.standings)
            .where(LadderSnapshot.competition == name)
            .order_by(LadderSnapshot.id.desc())
            .limit(look_back)
        ).all()
    # per player, the oldest snapshot so far with its latest number of games: (games, elo, when)
    newest: dict[str, tuple[int, float | None, dt.datetime]] = {}
    changes: dict[str, tuple[float | None, dt.datetime]] = {}
    for created, standings in rows:  # newest first
        by_bot = {str(r["bot"]): r for r in standings or []}
        for bot in wanted - set(changes):
            row = by_bot.get(bot)
            games, elo = (int(row["games"]), row.get("elo")) if row else (0, None)
            if bot in newest and games != newest[bot][0]:
                _, later, when = newest[bot]
                moved = None if later is None or elo is None else later - elo
                changes[bot] = (moved, when)
            else:
                newest[bot] = (games, elo, created)
    for bot, (games, _, when) in newest.items():
        if bot not in changes and games:
            changes[bot] = (None, when)
    return changes
