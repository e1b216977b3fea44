"""Teams (``--teams``, docs/tournaments.md "Teams"): when the organizer says who owns which bot,
no table seats two bots of one owner, so no bot can feed a teammate; the report says when no
teams were given. Through the planner, and through the real commands."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.errors import ArenaError
from arena.hosting.catalog import Catalog, load_catalog
from arena.hosting.names import canonical
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.runner import (
    TournamentSpec,
    add_entrants,
    plan_resume,
    plan_tournament,
    scheduled_games,
    start,
)
from arena.tournament.schedule import grown_schedule, schedule_size
from arena.tournament.teams import tables_without_teammates
from leaderboard import participants as P
from leaderboard.store import Store

SANDBOX = choose_sandbox("none")
BUILTIN = ("random", "greedy", "strategic", "knowledge")
#: The faulty test package's bots: one distribution, so one team by package.
FAULTY = ("honest", "warm", "crasher")


@pytest.fixture
def catalog(faulty_bots: Path) -> Catalog:
    return load_catalog(SANDBOX)


def tables(plan: object) -> set[frozenset[str]]:
    return {frozenset(game.seats) for game in plan.schedule}  # type: ignore[attr-defined]


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "teams.txt"
    path.write_text(text)
    return str(path)


def test_a_teams_file_keeps_teammates_apart_and_every_other_table_plays(
    catalog: Catalog, tmp_path: Path
) -> None:
    teams = write(
        tmp_path, "# class of 2026\nalice: random, greedy   # her two bots\nbob: strategic\n"
    )
    plan = plan_tournament(TournamentSpec(decks="random:2:1", bots=BUILTIN, teams=teams), catalog)
    pairs = {frozenset(t) for t in itertools.combinations(BUILTIN, 2)}
    assert tables(plan) == pairs - {frozenset({"random", "greedy"})}
    assert len(plan.schedule) == 5 * 2 * 2
    assert plan.configuration["teams"] == {
        "from": teams,
        "of": {"random": "alice", "greedy": "alice", "strategic": "bob"},
    }


def test_at_larger_tables_no_table_seats_two_of_a_team(catalog: Catalog, tmp_path: Path) -> None:
    teams = write(tmp_path, "a: random, greedy\n")
    field = (*BUILTIN, "riskmatrix")
    spec = TournamentSpec(decks="random:1:1", bots=field, players=3, teams=teams)
    plan = plan_tournament(spec, catalog)
    expected = {
        frozenset(t) for t in itertools.combinations(field, 3) if not {"random", "greedy"} <= set(t)
    }
    assert tables(plan) == expected
    assert len(plan.schedule) == schedule_size(field, 1, 3, teams=dict(plan.spec.team_of))


def test_a_bot_name_puts_every_entrant_of_that_bot_in_the_team(
    catalog: Catalog, tmp_path: Path
) -> None:
    teams = write(tmp_path, "carol: montecarlo\n")
    bots = ("montecarlo[playouts=10]", "montecarlo[playouts=20]", "random")
    plan = plan_tournament(TournamentSpec(decks="random:1:1", bots=bots, teams=teams), catalog)
    assert tables(plan) == {frozenset({bots[0], "random"}), frozenset({bots[1], "random"})}


def test_by_package_a_distribution_s_bots_are_one_team(catalog: Catalog) -> None:
    bots = (*FAULTY, "random", "greedy")
    plan = plan_tournament(TournamentSpec(decks="random:1:1", bots=bots, teams="packages"), catalog)
    for a, b in itertools.combinations(FAULTY, 2):
        assert frozenset({a, b}) not in tables(plan)
    assert frozenset({"random", "greedy"}) in tables(plan)  # the arena's own: each alone
    assert len(tables(plan)) == 3 * 2 + 1


def test_by_owners_a_participant_s_distributions_are_one_team(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/owners.db")
    store.create_schema()
    P.add_participant(store, "dana")
    dana = P.participants(store)[0].id
    P.claim(store, canonical("arena-test-faulty-bots"), dana)
    spec = TournamentSpec(decks="random:1:1", bots=(*FAULTY, "random"), teams="owners")
    plan = plan_tournament(spec, catalog, store)
    assert dict(plan.spec.team_of) == dict.fromkeys(FAULTY, "participant dana")
    assert tables(plan) == {frozenset({b, "random"}) for b in FAULTY}
    with pytest.raises(ArenaError, match="--teams owners needs the database"):
        plan_tournament(spec, catalog)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("alice random, greedy\n", "line 1: expected 'TEAM: bot, bot, ...'"),
        ("\n: random\n", "line 2: expected 'TEAM: bot, bot, ...'"),
        ("alice:\n", "line 1: team 'alice' names no bot"),
        ("alice: random, randm\n", "line 1: 'randm' is no installed bot"),
        ("a: random\nb: greedy, random\n", "line 2: 'random' is in team 'a' already (line 1)"),
    ],
)
def test_a_mistake_in_a_teams_file_is_one_line_naming_its_line(
    catalog: Catalog, tmp_path: Path, text: str, said: str
) -> None:
    teams = write(tmp_path, text)
    with pytest.raises(ArenaError, match=None) as caught:
        plan_tournament(TournamentSpec(decks="random:1:1", bots=BUILTIN, teams=teams), catalog)
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_teams_file_may_name_installed_bots_this_tournament_does_not_enter(
    catalog: Catalog, tmp_path: Path
) -> None:
    teams = write(tmp_path, "whole class: random, riskmatrix, dp\n")
    plan = plan_tournament(TournamentSpec(decks="random:1:1", bots=BUILTIN, teams=teams), catalog)
    assert dict(plan.spec.team_of) == {"random": "whole class"}


def test_teams_are_part_of_the_fingerprint_and_kept_when_resumed_and_grown(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/grown.db")
    teams = write(tmp_path, "alice: random, greedy, riskmatrix\n")
    spec = TournamentSpec(decks="random:1:1", bots=("random", "strategic", "greedy"), teams=teams)
    plan = plan_tournament(spec, catalog, store)
    tid = start(plan, store)
    assert plan_tournament(spec, catalog, store).tournament_id == tid
    untyped = plan_tournament(TournamentSpec(decks="random:1:1", bots=spec.bots), catalog, store)
    assert untyped.tournament_id is None  # the same bots without teams are another tournament
    assert tables(plan_resume(store, tid, catalog)) == tables(plan)
    grown = add_entrants(store, tid, ["riskmatrix", "knowledge"], catalog)
    added = [g.seats for g in grown.schedule[len(plan.schedule) :]]
    assert {frozenset(s) for s in added} == {
        frozenset(t)
        for t in [
            ("riskmatrix", "strategic"),
            ("knowledge", "random"),
            ("knowledge", "strategic"),
            ("knowledge", "greedy"),
            ("knowledge", "riskmatrix"),
        ]
    }
    assert grown.configuration["teams"]["of"]["riskmatrix"] == "alice"


def test_teams_cannot_be_given_when_adding_to_a_tournament_played_without(
    catalog: Catalog, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/plain.db")
    plan = plan_tournament(TournamentSpec(decks="random:1:1", bots=BUILTIN[:2]), catalog, store)
    tid = start(plan, store)
    with pytest.raises(ArenaError, match="was played without teams"):
        add_entrants(store, tid, ["strategic"], catalog, teams="packages")


def test_a_schedule_of_teammates_only_is_refused(catalog: Catalog, tmp_path: Path) -> None:
    teams = write(tmp_path, "alice: random, greedy\n")
    spec = TournamentSpec(decks="random:1:1", bots=("random", "greedy"), teams=teams)
    with pytest.raises(ArenaError, match="nothing to play") as caught:
        plan_tournament(spec, catalog)
    assert "alice: greedy, random" in str(caught.value)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_counted_schedule_is_the_made_one_for_any_teams(players: int) -> None:
    draw = random.Random(players)
    for _ in range(25):
        field = [f"b{i}" for i in range(draw.randint(players, 9))]
        teams = {b: f"t{draw.randint(0, 3)}" for b in field if draw.random() < 0.7}
        gauntlet = draw.choice([None, *field])
        made = grown_schedule([field], 2, players, 1, 0, gauntlet, teams=teams)
        assert len(made) == schedule_size(field, 2, players, 1, gauntlet, teams)
        for game in made:
            owned = [teams[s] for s in game.seats if s in teams]
            assert len(set(owned)) == len(owned)


def test_tables_without_teammates_counts_concrete_fields() -> None:
    assert tables_without_teammates([1, 1, 1, 1], 2) == 6
    assert tables_without_teammates([2, 1, 1], 2) == 5
    assert tables_without_teammates([2, 2], 2) == 4
    assert tables_without_teammates([3], 2) == 0
    assert tables_without_teammates([2, 2, 1], 3) == 4


# --- through the commands ---------------------------------------------------------------------


def invoke(args: list[str]) -> object:
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.mark.slow
def test_arena_tournament_with_teams_and_its_report(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/arena.db"
    teams = write(tmp_path, "alice: random, greedy\n")
    common = ["--decks", "random:2:5", "--bots", "random,greedy,strategic", "--workers", "1"]
    common += ["--sandbox", "none", "--db", db, "--quiet"]
    done = invoke(["tournament", *common, "--teams", teams, "--json"])
    assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    store = Store(db)
    info = store.tournaments()[-1]
    assert scheduled_games(info) == info.games == 8
    for game in store.stored_games(info.id):
        assert set(game.record.seats) != {"random", "greedy"}
    text = invoke(["report", "--tournament", str(info.id), "--db", db])
    said = " ".join(text.output.split())  # type: ignore[attr-defined]
    assert f"Teams: from {teams}: no table seated two bots of one team" in said
    assert "{}, team alice" in said  # each entrant's team in the provenance
    data = json.loads(invoke(["report", "--tournament", str(info.id), "--db", db, "--json"]).output)  # type: ignore[attr-defined]
    assert data["teams"] == {"from": teams, "teams": {"alice": ["greedy", "random"]}}

    plain = invoke(["tournament", *common])
    assert plain.exit_code == 0
    text = invoke(["report", "--db", db]).output  # type: ignore[attr-defined]
    said = " ".join(text.split())
    assert "Teams: no teams given: bots of one owner may have played each other" in said


def test_arena_match_between_teammates_is_one_line(tmp_path: Path) -> None:
    teams = write(tmp_path, "alice: random, greedy\n")
    args = ["match", "random", "greedy", "--games", "2", "--teams", teams]
    done = CliRunner().invoke(
        cli, [*args, "--sandbox", "none", "--db", f"sqlite:///{tmp_path}/m.db"]
    )
    assert done.exit_code == 2
    last = done.output.strip().splitlines()
    assert len(last) == 1 and "seats two bots of one team" in last[0], done.output


def test_bad_teams_sources_are_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/bad.db"
    args = ["tournament", "--decks", "random:1:1", "--bots", "random,greedy", "--sandbox", "none"]
    for source, said in [
        (str(tmp_path / "missing.txt"), "not packages, owners or a readable teams file"),
        (str(tmp_path), "not packages, owners or a readable teams file"),
    ]:
        done = CliRunner().invoke(cli, [*args, "--db", db, "--teams", source])
        assert done.exit_code == 2, done.output
        assert said in done.output and len(done.output.strip().splitlines()) == 1
    resumed = CliRunner().invoke(cli, ["tournament", "--resume", "1", "--teams", "owners"])
    assert resumed.exit_code == 2 and "--teams cannot be given with it" in resumed.output
