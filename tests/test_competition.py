"""A competition server's ladder state in the database (:mod:`leaderboard.competition`): its
frozen and final state, the standings snapshots the pages read (last change, history), what
bots wrote kept per entrant, and the pages' sparklines."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres import postgres_database

from arena.hosting.hosted import BotLog
from arena.serve.pages import sparkline
from leaderboard import competition as C
from leaderboard import store as store_module
from leaderboard.models import LadderSnapshot
from leaderboard.store import EntrantInfo, Store

T0 = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh database: a SQLite file, or a new database on the throwaway PostgreSQL server."""
    if request.param == "sqlite":
        made = Store(f"sqlite:///{tmp_path / 'arena.db'}")
        made.create_schema()
        yield made
        return
    with postgres_database(request.getfixturevalue("postgres_server")) as url:
        made = Store(url)
        made.create_schema()
        yield made
        made.close()


def _naive(moment: dt.datetime) -> dt.datetime:
    """``moment`` in UTC without its zone (SQLite gives times back without one)."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _snapshot(store: Store, minute: int, rows: dict[str, tuple[float, int]]) -> None:
    """A snapshot of competition 'ladder' at T0 + ``minute``: per bot (elo, games)."""
    standings = [
        {"bot": bot, "elo": elo, "elo_lo": elo - 50, "elo_hi": elo + 50, "games": games}
        for bot, (elo, games) in rows.items()
    ]
    with store.transaction() as session:
        session.add(
            LadderSnapshot(
                competition="ladder",
                created=T0 + dt.timedelta(minutes=minute),
                games=sum(g for _, g in rows.values()) // 2,
                through_game=minute,
                standings=standings,
                pairs={},
                faults={},
            )
        )


def test_a_competition_is_open_until_frozen_and_final_once_finished(store: Store) -> None:
    assert C.competition(store, "spring") == C.CompetitionState("spring")
    C.set_competition(store, C.CompetitionState("spring", frozen=True))
    assert C.competition(store, "spring").frozen and not C.competition(store, "spring").final
    assert C.competition(store, "autumn") == C.CompetitionState("autumn")


def test_the_last_change_is_how_far_a_rating_moved_with_the_players_latest_games(
    store: Store,
) -> None:
    _snapshot(store, 0, {"a": (1500, 10), "b": (1500, 10)})
    _snapshot(store, 1, {"a": (1520, 20), "b": (1480, 20)})
    # a and b play no game: their ratings drift with c's, which is no change of theirs
    _snapshot(store, 2, {"a": (1518, 20), "b": (1482, 20), "c": (1500, 4)})
    changes = C.last_changes(store, "ladder", ["a", "b", "c", "nobody"])
    assert {bot: (moved, _naive(when)) for bot, (moved, when) in changes.items()} == {
        "a": (20.0, _naive(T0 + dt.timedelta(minutes=1))),
        "b": (-20.0, _naive(T0 + dt.timedelta(minutes=1))),
        "c": (None, _naive(T0 + dt.timedelta(minutes=2))),
    }


def test_the_history_spreads_over_the_whole_competition(store: Store) -> None:
    for minute in range(100):
        _snapshot(store, minute, {"a": (1500 + minute, 2 * minute + 2)})
    points = C.history(store, "ladder", points=5)
    assert [p.ratings["a"][0] for p in points] == [1500, 1525, 1550, 1574, 1599]
    assert C.latest_snapshot(store, "ladder").row("a")["elo"] == 1599  # type: ignore[union-attr]
    assert C.history(store, "elsewhere") == []


def test_what_a_bot_wrote_is_kept_escaped_and_only_the_latest_blocks(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "OUTPUT_KEPT", 6)
    tid = store.start_tournament(
        "t", {"decks": "fixed36"}, 1, "classic", 2,
        [EntrantInfo("x", "x", {}, "x", "d", "1"), EntrantInfo("y", "y", {}, "y", "d", "1")],
        [[1] * 16],
    )  # fmt: skip
    for block in range(6 + 5):
        store.record_output(tid, {"x": f"block {block}\x1b[2J\n"})
    store.record_output(tid, {})
    found = store.bot_output([(tid, "x")], limit=1000)
    assert [text for *_, text in found] == [
        f"block {b}\\x1b[2J\n" for b in reversed(range(5, 6 + 5))
    ]
    assert store.bot_output([(tid, "y")]) == []


def test_a_bots_log_gives_what_was_written_since_a_mark() -> None:
    log = BotLog(limit=16)
    log.write(b"abc")
    text, mark = log.since(0, 100)
    assert (text, mark) == ("abc", 3)
    log.write(b"de")
    assert log.since(mark, 100) == ("de", 5)
    log.write(b"0123456789" * 3)  # more than the log keeps, and more than asked for
    assert log.since(5, 4) == ("[26 earlier bytes dropped]\n6789", 35)
    assert log.since(35, 4) == ("", 35)


def test_a_sparkline_draws_the_values_oldest_first() -> None:
    assert sparkline([1500.0]) == ""
    line = str(sparkline([1500.0, 1600.0, 1550.0], width=12, height=12))
    assert '<polyline points="1.0,11.0 6.0,1.0 11.0,6.0"/>' in line
    assert 'aria-label="from 1500 to 1550"' in line
    flat = str(sparkline([1500.0, 1500.0], width=12, height=12))
    assert '<polyline points="1.0,6.0 11.0,6.0"/>' in flat


def test_snapshots_stay_bounded_and_spread(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy import select

    monkeypatch.setattr(C, "KEPT_SNAPSHOTS", 40)
    monkeypatch.setattr(C, "RECENT_SNAPSHOTS", 10)
    for minute in range(40):
        _snapshot(store, minute, {"a": (1500 + minute, 2 * minute + 2)})
    with store.transaction() as session:
        session.execute(LadderSnapshot.__table__.update().values(pairs={"a": {"b": {"games": 1}}}))
    newest = C.save_snapshot(store, "ladder", {}, 0, 10_000)
    with store.transaction() as session:
        kept = session.scalars(select(LadderSnapshot.id).order_by(LadderSnapshot.id)).all()
        before = session.scalar(select(LadderSnapshot.pairs).where(LadderSnapshot.id == kept[-2]))
        oldest = session.scalar(select(LadderSnapshot.pairs).where(LadderSnapshot.id == kept[0]))
    # of the 30 older than the latest 10, every other one goes: ids 1, 3, ... 29, 31 ... 40, 41
    assert kept == [*range(1, 30, 2), *range(31, 41), newest] and newest == 41
    assert before == {} and oldest  # the snapshot before the latest keeps its rows only
    history = C.history(store, "ladder", points=3)  # the first, the middle (id 25), the latest
    assert [p.ratings.get("a", (None,))[0] for p in history] == [1500, 1524, None]


def test_tournaments_are_found_by_the_literal_start_of_their_names(store: Store) -> None:
    entrants = [EntrantInfo("x", "x", {}, "x", "d", "1"), EntrantInfo("y", "y", {}, "y", "d", "1")]
    for seed, name in enumerate(["a_b: rated games 1", "aXb: rated games 1", "a_b%: other"]):
        store.start_tournament(name, {"decks": "fixed36"}, seed, "classic", 2, entrants, [[1] * 16])
    assert [name for _, name, _ in store.tournament_names("a_b: ")] == ["a_b: rated games 1"]
    assert [status for *_, status in store.tournament_names("a_b")] == ["running", "running"]
