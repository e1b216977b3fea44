"""``arena match`` end to end: real bot hosts in worker processes, stored in real databases.

A clearly stronger bot is accepted as stronger (H1) long before the match's bound; two bots
that play alike are accepted as equal (H0); a fixed match plays whole pairs; a match
interrupted by Ctrl-C and run again gives the verdict of the uninterrupted match and plays only
what was missing; bad input is one line and exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from processes import interruptible, signal_when_stored
from stored_records import stored

from arena.cli.main import cli
from leaderboard.sprt import Sprt, count_game_pairs, pair_count_path
from leaderboard.store import Store

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
COMMON = ["--sandbox", "none", "--workers", "2", "--quiet"]
#: Two bots that play alike: both play the first legal action, so each pair is split one-one.
ALIKE = ["honest", "sleeper[seconds=0.002]"]
KEYS = {"result", "games", "pairs", "llr", "llr_lo", "llr_hi", "elo", "elo_lo", "elo_hi", "los"}


def arena(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def json_of(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def pairs_of(store: Store, tid: int, a: str) -> list[tuple[float, float]]:
    """A's scores on each deck stored in both seatings, in deck order."""
    by_deck: dict[int, dict[int, float]] = {}
    for game in store.stored_games(tid):
        assert game.deck is not None
        by_deck.setdefault(game.deck, {})[game.rotation] = game.record.score(
            game.record.seats.index(a)
        )
    out = []
    for deck in range(len(by_deck)):
        if len(by_deck.get(deck, {})) < 2:
            break
        out.append((by_deck[deck][0], by_deck[deck][1]))
    return out


@pytest.mark.slow
def test_a_stronger_bot_is_accepted_as_stronger_well_before_the_bound(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/m.db"
    args = ["match", "greedy", "random", "--sprt", "0,40", "--max-games", "1000"]
    out = json_of(arena(*args, "--decks", "random:500:1", *COMMON, "--db", db, "--json"))
    assert out["result"] == "H1"
    assert out["games"] == 2 * out["pairs"] < 400
    assert out["llr"] >= out["llr_hi"] == pytest.approx(2.944, abs=1e-3)
    assert out["llr_lo"] == pytest.approx(-2.944, abs=1e-3)
    assert 0 < out["elo_lo"] < out["elo"] < out["elo_hi"] and out["los"] > 0.99
    assert out["settings"]["sprt"] == [0.0, 40.0] and out["settings"]["max_games"] == 1000
    assert out.keys() >= KEYS
    # the verdict is the test's on the stored pairs, stopped at its first crossing
    store = Store(db)
    pairs = pairs_of(store, out["tournament"], "greedy")
    totals = [a + b for a, b in pairs]
    assert Sprt(0, 40, max_pairs=500).first_stop(pair_count_path(totals)) == ("H1", out["pairs"])
    assert count_game_pairs(pairs[: out["pairs"]]).counts == tuple(out["counts"])
    assert store.status(out["tournament"]) == "finished"
    # a text verdict, and the same command again plays nothing more
    kept = len(store.stored_games(out["tournament"]))
    again = arena(*args, "--decks", "random:500:1", *COMMON, "--db", db)
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(f"match {out['tournament']}: H1 accepted: greedy - random")
    assert "workers" not in again.stderr
    assert len(store.stored_games(out["tournament"])) == kept


def test_bots_that_play_alike_are_accepted_as_equal(faulty_bots: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/m.db"
    args = ["match", *ALIKE, "--sprt", "0,40", "--decks", "random:200:2", *COMMON]
    out = json_of(arena(*args, "--db", db, "--json"))
    assert out["result"] == "H0"
    assert out["counts"] == [0, 0, out["pairs"], 0, 0]  # every pair split one-one
    assert out["elo"] == pytest.approx(0.0) and out["llr"] <= out["llr_lo"]
    assert 10 < out["pairs"] < 100


def test_a_fixed_match_plays_whole_pairs_without_a_test(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/m.db"
    args = ["match", "random", "uniform", "--games", "21", "--decks", "random:40:3", *COMMON]
    out = json_of(arena(*args, "--db", db, "--json"))
    assert (out["games"], out["pairs"]) == (22, 11)
    assert out["result"] is None and out["llr"] is None and out["llr_lo"] is None
    assert out["elo_lo"] < out["elo"] < out["elo_hi"]
    store = Store(db)
    pairs = pairs_of(store, out["tournament"], "random")
    assert count_game_pairs(pairs[:11]).counts == tuple(out["counts"])
    assert store.status(out["tournament"]) == "finished"
    # what a researcher needs: wins, draws and losses, the score's interval, the pairs by
    # outcome and each bot's time per move, from the 22 games counted
    scores = [score for pair in pairs[:11] for score in pair]
    wins, losses = scores.count(1.0), scores.count(0.0)
    assert (out["wins"], out["draws"], out["losses"]) == (wins, 22 - wins - losses, losses)
    assert out["score_lo"] < out["score"] < out["score_hi"]
    assert sum(out["pairs_by_points"].values()) == 11
    assert list(out["pairs_by_points"]) == ["0", "0.5", "1", "1.5", "2"]
    counted = [g.record for g in store.stored_games(out["tournament"]) if g.deck < 11]
    for bot in ("random", "uniform"):
        clock = out["time_per_move"][bot]
        seats = [r.seats.index(bot) for r in counted]
        moves = sum(r.moves[s] for r, s in zip(counted, seats, strict=True))
        worst = max(r.slowest[s] for r, s in zip(counted, seats, strict=True))
        assert clock["moves"] == moves and clock["worst"] == pytest.approx(worst)
        assert 0 < clock["mean"] <= clock["worst"] < 1.25
    text = arena(*args, "--db", db)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[1].startswith(
        f"  random: {wins} wins, {22 - wins - losses} draws, {losses} losses"
    )
    assert lines[2].startswith("  pairs by random's points (of 2): ")
    assert lines[3].startswith("  random: mean ") and " worst " in lines[3]
    assert lines[4].startswith("  uniform: mean ") and lines[4].endswith(" moves")


# --- interrupted for real -------------------------------------------------------------------

SLOW = ["match", "honest", "sleeper[seconds=0.01]", "--sprt", "0,40", "--decks", "random:200:5"]
SLOW += [*COMMON, "--json"]
# both databases with one secret: the games' seeds derive from it
SLOW += ["--secret", "314159265358979323846264338327950288419"]


def run_command(db: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *SLOW, "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=db.parent,
        timeout=300,
    )


@pytest.mark.slow
def test_an_interrupted_match_resumes_to_the_same_verdict(
    faulty_site: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(faulty_site)}
    whole = tmp_path / "whole.db"
    done = run_command(whole, env)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["result"] == "H0" and verdict["pairs"] > 10

    parts = tmp_path / "parts.db"
    proc = subprocess.Popen(
        [*COMMAND, *SLOW, "--db", f"sqlite:///{parts}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        preexec_fn=interruptible,
    )
    signal_when_stored(proc, parts, 4)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume 1" in err
    store = Store(f"sqlite:///{parts}")
    before = {g.key: g.id for g in store.stored_games(1)}
    assert 4 <= len(before) < 2 * verdict["pairs"]
    assert store.status(1) == "interrupted"

    resumed = run_command(parts, env)
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    # The provenance grows by the resumed run's sandbox, and the two databases were made at
    # different moments; all else is the uninterrupted match's.
    runs = again["settings"].pop("sandboxes")
    assert len(runs) == 2 and runs[0] == verdict["settings"].pop("sandboxes")[0]
    assert again["settings"].pop("created") >= verdict["settings"].pop("created")
    # the same games counted; their thinking times were measured on two different runs' clocks
    timing = again.pop("time_per_move")
    assert timing.keys() == verdict.pop("time_per_move").keys()
    assert again == verdict
    after = {g.key: g.id for g in store.stored_games(1)}
    assert {k: after[k] for k in before} == before  # what was stored stays; nothing twice
    whole_records = stored(Store(f"sqlite:///{whole}"), 1)
    for key, record in stored(store, 1).items():
        assert record == whole_records.get(key, record)
    assert store.status(1) == "finished"
    # --resume ID says the same
    by_id_args = ["match", "--resume", "1", "--sprt", "0,40", "--json", "--sandbox", "none"]
    by_id = subprocess.run(
        [*COMMAND, *by_id_args, "--db", f"sqlite:///{parts}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert by_id.returncode == 0, by_id.stderr
    by_id_verdict = json.loads(by_id.stdout)
    assert len(by_id_verdict["settings"].pop("sandboxes")) >= 2
    by_id_verdict["settings"].pop("created")
    assert by_id_verdict.pop("time_per_move") == timing  # the same stored games
    assert by_id_verdict == verdict


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["greedy", "greedy"], "cannot play a match against itself"),
        (["greedy", "nosuchbot"], "unknown bot 'nosuchbot'"),
        (["greedy"], "a match needs two bots"),
        (["greedy", "random", "--sprt", "40,0"], "ELO0 must be below ELO1"),
        (["greedy", "random", "--sprt", "10,10"], "ELO0 must be below ELO1"),
        (["greedy", "random", "--sprt", "x"], "expected ELO0,ELO1"),
        (["greedy", "random", "--sprt", "0,inf"], "must be finite"),
        (["greedy", "random", "--sprt", "0,40", "--alpha", "0.5"], "--alpha must be between"),
        (["greedy", "random", "--sprt", "0,40", "--beta", "0"], "--beta must be between"),
        (["greedy", "random", "--sprt", "0,40", "--games", "10"], "cannot go with --sprt"),
        (["greedy", "random", "--max-games", "10"], "needs --sprt"),
        (["greedy", "random", "--decks", "nosuch:3"], "deck"),
        (["--resume", "7"], "no tournament with id 7"),
        (["--resume", "1", "greedy", "random"], "give none"),
    ],
)
def test_bad_input_is_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    result = arena("match", *args, "--sandbox", "none", "--db", f"sqlite:///{tmp_path}/m.db")
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("arena: error: ") and says in line, line


@pytest.mark.slow
def test_a_tournament_of_three_is_not_a_match(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    made = arena(
        "tournament", "--bots", "random,uniform,knowledge", "--decks", "random:1:1", *COMMON,
        "--db", db,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    result = arena("match", "--resume", "1", "--sandbox", "none", "--db", db)
    assert result.exit_code == 2
    assert result.stderr.strip() == "arena: error: tournament 1 is not a match of two bots"
