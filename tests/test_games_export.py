"""Finding stored games (``arena games``) and exporting a tournament's games (``arena export``),
on stores of real tournaments played by real bot hosts; every ``--json`` about a tournament
carries its id and settings.

The module plays, once: a public tournament of three bots of which one crashes every game, a
match of two bots (``arena match``), and a tournament on secret decks stopped before its end.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from postgres import postgres_database
from processes import StopAfter

from arena.cli.main import cli
from arena.game.round import Game
from arena.hosting.catalog import Catalog, load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.referee.records import GameRecord
from arena.tournament.pool import LocalPool
from arena.tournament.runner import (
    Plan,
    RunSummary,
    TournamentSpec,
    plan_tournament,
    run_tournament,
    worker_setup,
)
from leaderboard.exports import CSV_COLUMNS
from leaderboard.store import GameQuery, Store, StoredGame

SANDBOX = choose_sandbox("none")
FIELD = ("honest", "uniform", "crasher")


def play(plan: Plan, store: Store, **kw: Any) -> RunSummary:
    setup = worker_setup(plan, SANDBOX)
    return run_tournament(plan, store, lambda: LocalPool(setup, 1), **kw)


def arena(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ok(*args: str) -> Result:
    result = arena(*args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def bots(faulty_site: Path) -> Iterator[Catalog]:
    """The faulty test bots, visible to this process and to bot hosts, and their catalog."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(faulty_site))
        outer = os.environ.get("PYTHONPATH")
        patch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(faulty_site), outer) if p))
        importlib.invalidate_caches()
        yield load_catalog(SANDBOX)


@pytest.fixture(scope="module")
def played(bots: Catalog, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One database: tournament ``field`` (3 bots, 2 public decks, crasher faults in every
    game it plays), match ``match`` (honest against uniform, 4 games) and tournament
    ``secret`` (2 secret decks, stopped after 2 of its 4 games)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('games')}/games.db"
    store = Store(url)
    # a fixed secret: the crasher moves (and faults) in each of its games, not always so
    spec = TournamentSpec(decks="random:2:1", bots=FIELD, seed=4, secret=4, max_faults=None)
    field = play(plan_tournament(spec, bots, store), store)
    assert field.complete
    match = ok(
        "match", "honest", "uniform", "--games", "4", "--decks", "random:2:5",
        "--sandbox", "none", "--workers", "1", "--quiet", "--json", "--db", url,
    )  # fmt: skip
    spec = TournamentSpec(decks="random:2", bots=("honest", "uniform"), seed=9)
    secret_plan = plan_tournament(spec, bots, store)
    assert not secret_plan.public_decks
    secret = play(secret_plan, store, block_size=2, progress=StopAfter(2))
    assert secret.interrupted and not secret.complete
    return {
        "url": url,
        "store": store,
        "field": field.tournament_id,
        "match": json.loads(match.stdout),
        "secret": secret.tournament_id,
        "secret_decks": secret_plan.decks,
    }


def listed(url: str, *args: str) -> list[dict[str, Any]]:
    """The games ``arena games --json`` lists with ``args`` (all of them)."""
    data = json.loads(ok("games", "--json", "--limit", "0", *args, "--db", url).stdout)
    return list(data["games"])


def ids(games: list[StoredGame], keep: Any = lambda g: True) -> list[int]:
    return [g.id for g in games if keep(g)]


def test_each_filter_and_their_combinations(played: dict[str, Any]) -> None:
    url, store, tid = played["url"], played["store"], played["field"]
    games = store.stored_games(tid)
    assert len(games) == 12  # 3 pairs x 2 decks x 2 seatings

    def seats(g: StoredGame) -> set[str]:
        return set(g.record.seats)

    def got(*args: str) -> list[int]:
        return [g["id"] for g in listed(url, "--tournament", str(tid), *args)]

    assert got() == ids(games)
    assert got("--bot", "crasher") == ids(games, lambda g: "crasher" in seats(g))
    assert len(got("--bot", "crasher")) == 8
    assert got("--bot", "honest", "--vs", "crasher") == ids(
        games, lambda g: seats(g) == {"honest", "crasher"}
    )
    assert len(got("--bot", "honest", "--vs", "crasher")) == 4
    # crasher crashes in every game it plays, and no other bot faults
    assert got("--faults") == got("--bot", "crasher")
    assert all(g["faults"] for g in listed(url, "--tournament", str(tid), "--faults"))
    assert got("--bot", "honest", "--vs", "uniform", "--faults") == []
    assert got("--bot", "uniform", "--vs", "crasher", "--faults") == ids(
        games, lambda g: seats(g) == {"uniform", "crasher"}
    )
    # without --tournament: every tournament, the latest first, each in the order played
    everything = listed(url)
    order = [(g["tournament"], g["id"]) for g in everything]
    assert order == sorted(order, key=lambda p: (-p[0], p[1]))
    assert {g["tournament"] for g in everything} == {
        tid,
        played["match"]["tournament"],
        played["secret"],
    }
    assert [g["id"] for g in listed(url, "--bot", "crasher")] == got("--bot", "crasher")
    honest = listed(url, "--bot", "honest")
    assert len(honest) == 8 + 4 + 2  # field, match, the secret tournament's stored games
    # a row says what the record says
    row = listed(url, "--tournament", str(tid), "--limit", "1")[0]
    first = games[0]
    assert (row["key"], row["deck_position"], row["rotation"]) == (
        first.key,
        first.deck,
        first.rotation,
    )
    assert row["seats"] == first.record.seats and row["winners"] == first.record.winners


def test_the_text_listing_names_seats_result_and_faults(played: dict[str, Any]) -> None:
    url, store, tid = played["url"], played["store"], played["field"]
    out = ok("games", "--tournament", str(tid), "--bot", "crasher", "--db", url).stdout
    lines = out.splitlines()
    assert lines[0].split() == [
        "game",
        "tournament",
        "deck",
        "rotation",
        "seats",
        "result",
        "faults",
    ]
    assert len(lines) == 1 + 8
    by_id = {g.id: g for g in store.stored_games(tid)}
    for line in lines[1:]:
        game = by_id[int(line.split()[0])].record
        assert " vs ".join(game.seats) in line
        assert f"{game.seats[game.winners[0]]} won" in line
        assert "crasher crash" in line
    assert (
        ok(
            "games",
            "--tournament",
            str(tid),
            "--bot",
            "honest",
            "--vs",
            "uniform",
            "--faults",
            "--db",
            url,
        ).stdout
        == "no games found\n"
    )


def test_limit_cuts_the_list_and_says_so(played: dict[str, Any]) -> None:
    url, tid = played["url"], played["field"]
    cut = ok("games", "--tournament", str(tid), "--limit", "5", "--json", "--db", url)
    data = json.loads(cut.stdout)
    assert len(data["games"]) == 5 and data["total"] == 12 and data["limit"] == 5
    assert "listing 5 of 12 games" in cut.stderr
    assert [g["id"] for g in data["games"]] == [
        g["id"] for g in listed(url, "--tournament", str(tid))
    ][:5]
    whole = ok("games", "--tournament", str(tid), "--limit", "12", "--db", url)
    assert whole.stderr == "" and len(whole.stdout.splitlines()) == 13
    assert "note" in ok("games", "--limit", "3", "--db", url).stderr


def test_csv_parses_back_to_the_records(played: dict[str, Any], tmp_path: Path) -> None:
    url, store, tid = played["url"], played["store"], played["field"]
    games = {g.id: g for g in store.stored_games(tid)}
    out = tmp_path / "field.csv"
    ok("export", str(tid), "--format", "csv", "--out", str(out), "--db", url)
    assert not out.with_name("field.csv.part").exists()
    with out.open(newline="") as stream:
        reader = csv.DictReader(stream)
        assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
        rows = list(reader)
    assert [int(r["game"]) for r in rows] == sorted(games)
    for row in rows:
        stored = games[int(row["game"])]
        record = stored.record
        assert (row["tournament"], row["key"]) == (str(tid), stored.key)
        assert (int(row["deck"]), int(row["rotation"])) == (stored.deck, stored.rotation)
        assert [row[f"seat_{s}"] for s in range(4)] == [*record.seats, "", ""]
        assert row["winners"] == ";".join(record.seats[s] for s in record.winners)
        assert [float(row[f"score_{s}"]) for s in range(2)] == [record.score(s) for s in range(2)]
        assert row["end_reason"] == record.end_reason
        assert int(row["faults"]) == len(record.faults)
        for fault in record.faults:
            assert (
                f"seat {fault.seat} ({record.seats[fault.seat]}) {fault.kind}"
                in row["fault_details"]
            )
        assert [float(row[f"time_{s}"]) for s in range(2)] == pytest.approx(record.times, abs=1e-4)
        assert row["deck_cards"] == "".join(map(str, record.deck))
    # arena games --csv gives the same rows
    listed_csv = ok("games", "--tournament", str(tid), "--csv", "--limit", "0", "--db", url).stdout
    assert listed_csv == out.read_text()


def replayed(record: GameRecord) -> Game:
    """``record`` played again through :class:`arena.game.round.Game`: its deck, its actions in
    order, and each fault's seat knocked out where the referee knocked it out."""
    game = Game(record.players, record.variant, deck=record.deck, first=record.first)
    for move in range(len(record.actions) + 1):
        for fault in record.faults:
            if fault.move == move and not game.over and game.alive[fault.seat]:
                game.forfeit(fault.seat)
        if move < len(record.actions):
            seat, action = record.actions[move]
            assert game.turn == seat
            game.play(action)
    return game


@pytest.mark.parametrize("which", ["field", "match"])
def test_jsonl_lines_are_replayable_records(played: dict[str, Any], which: str) -> None:
    url, store = played["url"], played["store"]
    tid = played[which] if which == "field" else played["match"]["tournament"]
    lines = ok("export", str(tid), "--format", "jsonl", "--db", url).stdout.splitlines()
    stored = store.stored_games(tid)
    assert len(lines) == len(stored) > 0
    for line, game in zip(lines, stored, strict=True):
        data = json.loads(line)
        assert (data["id"], data["tournament"], data["key"]) == (game.id, tid, game.key)
        assert data["hidden"] is False
        record = GameRecord.from_json(data)
        assert record.to_json() == game.record.to_json()
        again = replayed(record)
        assert again.over
        assert list(again.winners) == record.winners
        assert again.end_reason == record.end_reason
        assert [e.to_json() for e in again.events] == [e.to_json() for e in record.events]
        # what arena replay --json gives, but for the tournament's settings
        shown = json.loads(ok("replay", str(game.id), "--json", "--db", url).stdout)
        assert shown.pop("settings")["decks"] in ("random:2:1", "random:2:5")
        assert shown == data


def test_batches_stream_every_game_in_order(played: dict[str, Any]) -> None:
    store, tid = played["store"], played["field"]
    whole = store.stored_games(tid)
    assert [g.id for g in store.iter_games(tid, batch=5)] == [g.id for g in whole]
    assert [g.record.to_json() for g in store.iter_games(tid, batch=1)] == [
        g.record.to_json() for g in whole
    ]
    rows = list(store.iter_game_rows(tid, batch=4))
    assert [(r.id, r.key, r.seats) for r in rows] == [(g.id, g.key, g.record.seats) for g in whole]


def test_an_unfinished_secret_tournament_exports_only_what_every_seat_saw(
    played: dict[str, Any],
) -> None:
    url, store, tid = played["url"], played["store"], played["secret"]
    assert store.status(tid) == "interrupted"
    stored = store.stored_games(tid)
    jsonl = ok("export", str(tid), "--format", "jsonl", "--db", url).stdout
    table = ok("export", str(tid), "--format", "csv", "--db", url).stdout
    listing = ok("games", "--tournament", str(tid), "--csv", "--db", url).stdout
    lines = [json.loads(line) for line in jsonl.splitlines()]
    assert len(lines) == len(stored) == 2
    for data, game in zip(lines, stored, strict=True):
        assert data["hidden"] is True and data["deck"] is None
        assert data["events"] == [e.to_json() for e in game.record.events if e.public]
        assert len(data["events"]) < len(game.record.events)
        assert data["actions"] == [list(a) for a in game.record.actions]
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [r["deck_cards"] for r in rows] == ["", ""]
    assert listing == table
    for deck in played["secret_decks"]:
        for order in ("".join(map(str, deck)), json.dumps(list(deck))):
            for shown in (jsonl, table):
                assert order not in shown


def test_bad_input_is_one_line_and_exit_2(played: dict[str, Any]) -> None:
    url, tid = played["url"], str(played["field"])
    cases = [
        (["games", "--tournament", "99"], "no tournament with id 99"),
        (["games", "--bot", "nobody"], "no entrant 'nobody' in any stored tournament"),
        (
            ["games", "--tournament", tid, "--bot", "honest", "--vs", "deckspy"],
            f"no entrant 'deckspy' in tournament {tid}",
        ),
        (["games", "--vs", "honest"], "--vs B needs --bot A"),
        (["games", "--bot", "honest", "--vs", "honest"], "names the same entrants"),
        (["games", "--json", "--csv"], "give one"),
        (["games", "--limit", "-1"], "--limit"),
        (["export", "99", "--format", "jsonl"], "no tournament with id 99"),
        (["export", tid, "--format", "xml"], "'xml' is not one of"),
        (["export", tid, "--format", "csv", "--out", "/nonexistent/dir/x.csv"], "cannot write"),
    ]
    for args, says in cases:
        result = arena(*args, "--db", url)
        assert result.exit_code == 2, (args, result.output)
        assert says in result.output, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, (args, result.output)


def test_every_json_about_a_tournament_carries_its_id_and_settings(played: dict[str, Any]) -> None:
    url, store, tid = played["url"], played["store"], played["field"]
    expected = {
        "decks": "random:2:1",
        "deck_count": 2,
        "secret_decks": False,
        "variant": "classic",
        "players": 2,
        "seed": 4,
        "repeat": 1,
        "games_per_table": 4,
        "move_time": 1.0,
        "max_faults": None,
        "entrants": list(FIELD),
    }

    def check(data: dict[str, Any], tournament: int = tid) -> dict[str, Any]:
        assert data["tournament"] == tournament
        settings = data["settings"]
        if tournament == tid:
            assert expected.items() <= settings.items()
            assert settings["sandboxes"] == store.tournament(tid).sandboxes
        return settings

    check(json.loads(ok("leaderboard", "--tournament", str(tid), "--json", "--db", url).stdout))
    game = store.stored_games(tid)[0]
    check(json.loads(ok("replay", str(game.id), "--json", "--db", url).stdout))
    listing = json.loads(ok("games", "--tournament", str(tid), "--json", "--db", url).stdout)
    assert len(listing["tournaments"]) == 1
    check(listing["tournaments"][0])
    rows = json.loads(ok("tournaments", "--json", "--db", url).stdout)
    check({"tournament": rows[0]["id"], "settings": rows[0]["settings"]})
    # the finished tournament run again plays nothing and prints its standings
    again = ok(
        "tournament", "--resume", str(tid), "--sandbox", "none", "--quiet", "--json", "--db", url
    )
    check(json.loads(again.stdout))
    # a match: the tournament's settings and the test's
    match = played["match"]
    settings = check(match, match["tournament"])
    assert settings["entrants"] == ["honest", "uniform"] and settings["decks"] == "random:2:5"
    assert settings["sandboxes"][0]["sandbox"] == "none"  # the command stores how bots ran
    assert (settings["a"], settings["b"], settings["sprt"], settings["max_games"]) == (
        "honest",
        "uniform",
        None,
        4,
    )
    # a secret tournament says it is one, and publishes no seed
    secret = json.loads(
        ok("leaderboard", "--tournament", str(played["secret"]), "--json", "--db", url).stdout
    )
    assert check(secret, played["secret"])["secret_decks"] is True
    assert str(store.secret(played["secret"])) not in json.dumps(secret)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the PostgreSQL server, dropped after the test."""
    with postgres_database(postgres_server) as url:
        yield url


def test_postgresql_filters_as_sqlite_does(played: dict[str, Any], postgres_url: str) -> None:
    """The seat and fault filters are SQL of each database: the same games are found on a copy
    of the tournament in PostgreSQL."""
    source, tid = played["store"], played["field"]
    detail = source.tournament(tid)
    target = Store(postgres_url)
    target.create_schema()
    copy = target.start_tournament(
        detail.name,
        detail.configuration,
        detail.seed,
        detail.variant,
        detail.players,
        detail.entrants,
        detail.decks,
    )
    games = source.stored_games(tid)
    target.record_block(copy, [(g.key, g.deck, g.rotation, g.record) for g in games])

    def keys(store: Store, tournament: int, **filters: Any) -> list[str]:
        names = {k: frozenset(store.entrant_names([v], tournament)) for k, v in filters.items()}
        query = GameQuery(
            tournament, names.get("seated", frozenset()), names.get("against", frozenset())
        )
        return [r.key for r in store.find_games(query)]

    for filters in ({}, {"seated": "crasher"}, {"seated": "honest", "against": "uniform"}):
        assert keys(target, copy, **filters) == keys(source, tid, **filters)
        assert keys(source, tid, **filters)
    faulted = [r.key for r in target.find_games(GameQuery(copy, faulted=True))]
    assert faulted == [r.key for r in source.find_games(GameQuery(tid, faulted=True))]
    assert target.count_games(GameQuery(copy, faulted=True)) == len(faulted) == 8
