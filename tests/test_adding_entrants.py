"""Adding entrants to a stored tournament, gauntlets, and the listing of stored tournaments.

Real bot hosts in real worker processes, stored in real SQLite databases: a tournament grown
by ``--add`` plays only the new entrants' games, leaves its stored games as they were, and ends
with the records a tournament of the whole field has for the same keys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from processes import StopAfter
from stored_records import stored

import arena.hosting.sandbox as S
from arena.cli.main import cli
from arena.decks.specs import draw_secret_seed
from arena.errors import ArenaError
from arena.hosting.catalog import Catalog, load_catalog
from arena.hosting.names import BUILTIN_DISTRIBUTION
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.pool import LocalPool
from arena.tournament.runner import (
    Plan,
    RunSummary,
    TournamentError,
    TournamentSpec,
    add_entrants,
    plan_resume,
    plan_tournament,
    run_tournament,
    start,
    worker_setup,
)
from arena.tournament.schedule import schedule_size
from leaderboard.store import Store, StoreError

SANDBOX = choose_sandbox("none")
FIELD = ("honest", "uniform", "warm")
SLEEPER = "sleeper[seconds=0.001]"


@pytest.fixture
def catalog(faulty_bots: Path) -> Catalog:
    return load_catalog(SANDBOX)


def run(plan: Plan, store: Store, workers: int = 2, **kw: Any) -> RunSummary:
    setup = worker_setup(plan, SANDBOX)
    return run_tournament(plan, store, lambda: LocalPool(setup, workers), **kw)


def tables(plan: Plan) -> set[frozenset[str]]:
    return {frozenset(game.seats) for game in plan.schedule}


@pytest.mark.slow
def test_an_added_entrant_plays_only_its_games_and_the_records_are_the_whole_fields(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/grown.db")
    spec = TournamentSpec(decks="random:3:5", bots=FIELD, seed=4)
    three = plan_tournament(spec, catalog, store)
    first = run(three, store)
    assert (first.played, first.complete) == (18, True)  # 3 pairs x 3 decks x 2 seatings
    tid = first.tournament_id
    before = stored(store, tid)

    grown = add_entrants(store, tid, [SLEEPER], catalog)
    assert grown.schedule[:18] == three.schedule  # the old games keep their places and seeds
    assert all(SLEEPER in game.seats for game in grown.schedule[18:])
    assert store.tournament(tid).entrants == list(three.entrants)  # stored when run
    second = run(grown, store)
    assert (second.stored_before, second.played, second.total) == (18, 18, 36)
    assert second.tournament_id == tid and store.status(tid) == "finished"
    after = stored(store, tid)
    assert {key: after[key] for key in before} == before
    detail = store.tournament(tid)
    assert [e.name for e in detail.entrants] == [*FIELD, SLEEPER]
    assert detail.configuration["additions"] == [[SLEEPER]]
    assert detail.configuration["bots"] == [*FIELD, SLEEPER]

    whole = Store(f"sqlite:///{tmp_path}/whole.db")
    # the same secret: the games' seeds derive from it
    four = plan_tournament(
        TournamentSpec(decks="random:3:5", bots=(*FIELD, SLEEPER), seed=4, secret=three.secret),
        catalog,
    )
    assert run(four, whole).complete
    assert after == stored(whole, 1)

    # the same settings (the command run again) find the grown tournament, with its addition
    again = plan_tournament(spec, catalog, store)
    assert (again.tournament_id, again.schedule) == (tid, grown.schedule)
    assert run(again, store).played == 0

    # the standings refit over every game: each bot played 3 opponents x 6 games
    result = CliRunner().invoke(cli, ["leaderboard", "--json", "--db", store.url])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["standings"]
    assert {r["bot"]: r["games"] for r in rows} == {b: 18 for b in (*FIELD, SLEEPER)}


@pytest.mark.slow
def test_adding_twice_gives_the_records_of_the_whole_field(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/grown.db")
    base = run(plan_tournament(TournamentSpec(decks="random:2:8", bots=FIELD[:2]), catalog), store)
    tid = base.tournament_id
    assert base.played == 4
    one = run(add_entrants(store, tid, [FIELD[2]], catalog), store)
    assert (one.stored_before, one.played) == (4, 8)
    grown = add_entrants(store, tid, [SLEEPER, "crasher"], catalog)
    assert len(grown.spec.additions) == 2
    two = run(grown, store)
    assert (two.stored_before, two.played + two.skipped) == (12, 28)  # 7 new pairs x 4
    assert store.tournament(tid).configuration["additions"] == [[FIELD[2]], [SLEEPER, "crasher"]]
    field = (*FIELD, SLEEPER, "crasher")
    assert len(plan_resume(store, tid, catalog).schedule) == schedule_size(field, 2)

    whole = Store(f"sqlite:///{tmp_path}/whole.db")
    same = TournamentSpec(decks="random:2:8", bots=field, secret=store.secret(tid))
    assert run(plan_tournament(same, catalog), whole)
    assert stored(store, tid) == stored(whole, 1)  # crasher faults in 8 games, short of 10


@pytest.mark.slow
def test_a_grown_tournament_with_disqualifications_does_not_depend_on_workers_or_interruptions(
    catalog: Catalog, tmp_path: Path
) -> None:
    spec = TournamentSpec(
        decks="random:2:1",
        bots=("honest", "crasher", "uniform"),
        max_faults=2,
        secret=draw_secret_seed(),  # both runs with the same secret
    )
    records = []
    for name, workers, block, stop in [("a", 1, 1, None), ("b", 2, 3, 3)]:
        store = Store(f"sqlite:///{tmp_path}/{name}.db")
        tid = run(plan_tournament(spec, catalog), store, workers, block_size=block).tournament_id
        grown = add_entrants(store, tid, ["liar", SLEEPER], catalog)
        if stop is not None:
            part = run(grown, store, workers, block_size=block, progress=StopAfter(12 + stop))
            assert part.interrupted
            assert [e.name for e in store.tournament(tid).entrants][-2:] == ["liar", SLEEPER]
            grown = plan_resume(store, tid, catalog)  # the additions are stored: resume them
        assert run(grown, store, workers, block_size=block).complete
        records.append(stored(store, tid))
    assert records[0] == records[1]
    crasher = [
        kind
        for seats, *_, faults in records[0].values()
        for seat, kind, _ in faults
        if seats[seat] == "crasher"
    ]
    assert crasher.count("crash") == 2 and "disqualified" in crasher


def test_adding_checks_the_new_entrants(catalog: Catalog, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/t.db")
    spec = TournamentSpec(decks="random:1:2", bots=("honest", "uniform", "warm"), players=3)
    tid = run(plan_tournament(spec, catalog), store).tournament_id
    for bots, needle in [
        (["honest"], "bot 'honest' is already entered in tournament 1"),
        (["warm[]"], "bot 'warm' is already entered"),
        ([SLEEPER, SLEEPER], "entered twice"),
        (["nosuchbot"], "nosuchbot"),
        (["twoonly"], "tables of 3"),
        (["dp"], "classic variant"),
        ([], "at least one bot"),
    ]:
        with pytest.raises(ArenaError, match=needle) as caught:
            add_entrants(store, tid, bots, catalog)
        assert "\n" not in str(caught.value)
    with pytest.raises(StoreError, match="no tournament with id 42"):
        add_entrants(store, 42, ["honest"], catalog)
    assert [e.name for e in store.tournament(tid).entrants] == list(spec.bots)


@pytest.mark.slow
def test_secret_decks_are_kept_for_an_addition_and_a_finished_one_takes_none(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/t.db")
    plan = plan_tournament(TournamentSpec(decks="balanced:2", bots=FIELD[:2]), catalog, store)
    part = run(plan, store, progress=StopAfter(1), block_size=1)
    assert part.interrupted
    grown = add_entrants(store, part.tournament_id, [FIELD[2]], catalog)
    assert (grown.deck_secret, grown.decks) == (plan.deck_secret, plan.decks)
    assert run(grown, store).complete
    with pytest.raises(TournamentError, match="secret decks are published"):
        add_entrants(store, part.tournament_id, [SLEEPER], catalog)


# --- gauntlets --------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3])
def test_a_gauntlet_plays_exactly_the_tables_with_its_bot(catalog: Catalog, players: int) -> None:
    field = ("honest", "uniform", "warm", "crasher")
    spec = TournamentSpec(decks="random:2:3", bots=field, players=players, gauntlet=SLEEPER)
    plan = plan_tournament(spec, catalog)
    everyone = [*field, SLEEPER]
    assert [e.name for e in plan.entrants] == everyone
    expected = {frozenset(t) for t in combinations(everyone, players) if SLEEPER in t}
    assert tables(plan) == expected
    assert len(plan.schedule) == len(expected) * players * 2
    assert len(plan.schedule) == schedule_size(everyone, 2, players, gauntlet=SLEEPER)
    assert plan.configuration["gauntlet"] == SLEEPER
    assert plan.name == f"random:2:3 classic {players}p, gauntlet of {SLEEPER}"
    round_robin = plan_tournament(TournamentSpec(decks="random:2:3", bots=tuple(everyone)), catalog)
    assert round_robin.configuration.get("gauntlet") is None
    # the bot named by --gauntlet may be one of --bots, by any spelling of its name
    inside = plan_tournament(
        TournamentSpec(decks="random:2:3", bots=field, gauntlet="warm[]"), catalog
    )
    assert [e.name for e in inside.entrants] == list(field)
    assert all("warm" in game.seats for game in inside.schedule)


@pytest.mark.slow
def test_an_entrant_added_to_a_gauntlet_meets_only_the_gauntlets_bot(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/t.db")
    spec = TournamentSpec(decks="random:1:3", bots=("honest", "uniform"), gauntlet=SLEEPER)
    tid = run(plan_tournament(spec, catalog), store).tournament_id
    grown = add_entrants(store, tid, ["warm"], catalog)
    new = grown.schedule[4:]
    assert {frozenset(game.seats) for game in new} == {frozenset({"warm", SLEEPER})}
    assert run(grown, store).played == 2
    assert plan_resume(store, tid, catalog).spec.gauntlet == SLEEPER


# --- the commands -----------------------------------------------------------------------------

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
COMMON = ["--sandbox", "none", "--workers", "2", "--quiet"]


@pytest.fixture
def command_env(faulty_site: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(faulty_site), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def arena(env: dict[str, str], db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args, "--db", db], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.slow
def test_the_add_command(command_env: dict[str, str], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    create = ["tournament", "--decks", "random:2:6", "--bots", ",".join(FIELD), *COMMON]
    done = arena(command_env, db, *create)
    assert done.returncode == 0, done.stderr
    assert "12 games played" in done.stderr
    added = arena(command_env, db, "tournament", "--resume", "1", "--add", SLEEPER, *COMMON)
    assert added.returncode == 0, added.stderr
    assert f"adding {SLEEPER} (12 new games)" in added.stderr
    assert "12 games played" in added.stderr and "24 of 24 stored" in added.stderr
    assert SLEEPER in added.stdout  # the leaderboard of the grown field
    again = arena(command_env, db, *create)  # the creating command finds the grown tournament
    assert again.returncode == 0, again.stderr
    assert (
        "0 games played" in again.stderr
        and f"4 bots ({', '.join(FIELD)}, {SLEEPER})" in again.stderr
    )
    for args, needle in [
        (("--resume", "1", "--add", "honest"), "bot 'honest' is already entered in tournament 1"),
        (("--resume", "9", "--add", "honest"), "no tournament with id 9"),
        (("--add", "honest"), "--add needs --resume ID"),
        (("--resume", "1", "--gauntlet", "honest"), "--gauntlet cannot be given with it"),
        (("--resume", "1", "--add", ","), "--add needs at least one bot"),
    ]:
        refused = arena(command_env, db, "tournament", *args, *COMMON)
        assert refused.returncode == 2, refused.stderr
        assert needle in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert len(Store(db).stored_games(1)) == 24


@pytest.mark.slow
def test_the_listing_tells_tournaments_apart(command_env: dict[str, str], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    many = [f"sleeper[seconds={k / 1000}]" for k in range(1, 9)]
    for args in [
        ["--decks", "random:1:1", "--bots", "honest,uniform", "--name", "club"],
        ["--decks", "random:1:2", "--bots", "honest,uniform", "--name", "club"],
        ["--decks", "random:1:1", "--bots", "honest,uniform", "--gauntlet", "warm"],
        ["--decks", "random:1:1", "--bots", ",".join(many), "--players", "2", "--name", "big"],
    ]:
        done = arena(command_env, db, "tournament", *args, *COMMON)
        assert done.returncode == 0, done.stderr
    added = arena(command_env, db, "tournament", "--resume", "2", "--add", "warm", *COMMON)
    assert added.returncode == 0, added.stderr

    listing = arena(command_env, db, "tournaments")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert len(lines) == 12  # three lines a tournament
    assert lines[0].startswith("   1  club  [finished]  created ")
    assert (
        lines[1] == "      decks random:1:1 (1 public), classic, 2 per table, seed 0; 2 of 2 games"
    )
    assert lines[2] == "      2 bots: honest, uniform"
    assert lines[3].startswith("   2  club  [finished]  created ")
    assert (
        lines[4] == "      decks random:1:2 (1 public), classic, 2 per table, seed 0; 6 of 6 games"
    )
    assert lines[5] == "      3 bots: honest, uniform, warm; added: warm"
    assert lines[6].startswith("   3  random:1:1 classic 2p, gauntlet of warm  [finished]")
    assert lines[8] == "      gauntlet of warm; 3 bots: honest, uniform, warm"
    assert lines[10].endswith("56 of 56 games")
    assert lines[11].startswith("      8 bots: sleeper[seconds=0.001], sleeper[seconds=0.002], ")
    assert lines[11].endswith(" more") and len(lines[11]) < 110

    data = json.loads(arena(command_env, db, "tournaments", "--json").stdout)
    assert [t["id"] for t in data] == [1, 2, 3, 4]
    assert data[1]["entrants"] == ["honest", "uniform", "warm"]
    assert data[1]["additions"] == [["warm"]]
    assert (data[1]["games"], data[1]["scheduled"]) == (6, 6)
    assert (data[1]["decks"], data[1]["deck_count"], data[1]["secret_decks"]) == (
        "random:1:2",
        1,
        False,
    )
    assert data[2]["gauntlet"] == "warm" and data[0]["gauntlet"] is None
    assert data[3]["entrants"] == many
    assert all(t["runner"] is None and t["status"] == "finished" for t in data)
    assert data[0]["created"] < data[1]["created"]


# --- names and the sandbox ----------------------------------------------------------------------


@pytest.mark.slow
def test_an_added_name_is_its_owners(installed: Callable[..., None], tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/t.db")
    installed("greedy_thief")
    catalog = load_catalog(SANDBOX)
    tid = start(
        plan_tournament(TournamentSpec(decks="random:1:3", bots=("uniform", "random")), catalog),
        store,
    )
    grown = add_entrants(store, tid, ["greedy", "pickpocket"], catalog)
    owners = {e.name: e.distribution for e in grown.added}
    assert owners == {"greedy": BUILTIN_DISTRIBUTION, "pickpocket": "arena-test-greedy-thief"}
    installed("twin_a", "twin_b")
    with pytest.raises(ArenaError) as refused:
        add_entrants(store, tid, ["twin"], load_catalog(SANDBOX))
    message = str(refused.value)
    assert "'twin'" in message and "arena-test-twin-a" in message and "arena-test-twin-b" in message
    assert "\n" not in message


@pytest.mark.slow
def test_an_added_third_party_bot_needs_the_sandbox(
    installed: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    installed("greedy_thief")
    create = ["tournament", "--decks", "random:1:3", "--quiet", "--db", db]
    done = CliRunner().invoke(cli, [*create, "--bots", "uniform,random", "--sandbox", "none"])
    assert done.exit_code == 0, done.output
    S._bwrap_error.cache_clear()
    monkeypatch.setattr(S.shutil, "which", lambda name: None)  # no bubblewrap here
    try:
        add = ["tournament", "--resume", "1", "--add", "pickpocket", "--db", db]
        refused = [
            CliRunner().invoke(cli, args)
            for args in (add, [*create, "--bots", "pickpocket,uniform"])
        ]
    finally:
        S._bwrap_error.cache_clear()
    lines = []
    for result in refused:  # adding it is refused as entering it in a new tournament is
        assert result.exit_code == 2, result.output
        (line,) = [x for x in result.output.splitlines() if x.startswith("arena: error: ")]
        lines.append(line)
    assert lines[0] == lines[1]
    assert "'pickpocket'" in lines[0] and "greedy-thief" in lines[0]
    assert [e.name for e in Store(db).tournament(1).entrants] == ["uniform", "random"]
