"""A gauntlet's output says its bot's score against each opponent with its 95% interval, in
text and in ``--json``: the head-to-head figures of ``arena report`` (``Standings.pairs``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.store import Store

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
FIELD = ["--bots", "random,greedy", "--gauntlet", "uniform", "--decks", "random:6:1"]
COMMON = ["--sandbox", "none", "--workers", "2", "--quiet"]


def _gauntlet(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    db = f"sqlite:///{tmp_path}/t.db"
    done = subprocess.run(
        [*COMMAND, "tournament", *FIELD, *COMMON, "--db", db, *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_the_gauntlet_prints_each_opponent_s_score_and_interval(tmp_path: Path) -> None:
    from leaderboard.standings import compute_standings

    text = _gauntlet(tmp_path).stdout
    assert "uniform against each opponent (its score, 95% interval):" in text
    store = Store(f"sqlite:///{tmp_path}/t.db")
    detail = store.tournament(1)
    standings = compute_standings(store.stored_games(1), detail.entrants)
    for opponent in ("random", "greedy"):
        pair = standings.pairs["uniform"][opponent]
        assert pair.games == 12 and pair.score is not None
        line = next(x for x in text.splitlines() if x.startswith(opponent + " "))
        assert line.split()[1:3] == ["12", f"{100 * pair.score:.1f}"]
        assert f"[{100 * pair.lo:.1f}, {100 * pair.hi:.1f}]" in line
    assert len(json.dumps(standings.pairs["uniform"]["greedy"].to_dict())) > 0

    again = subprocess.run(
        [*COMMAND, "leaderboard", "--json", "--db", f"sqlite:///{tmp_path}/t.db"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["gauntlet"]["bot"] == "uniform"
    found = {row["opponent"]: row for row in data["gauntlet"]["opponents"]}
    assert set(found) == {"random", "greedy"}
    for opponent, row in found.items():
        pair = standings.pairs["uniform"][opponent]
        assert (row["games"], row["score"], row["lo"], row["hi"]) == (
            pair.games,
            pair.score,
            pair.lo,
            pair.hi,
        )


@pytest.mark.slow
def test_a_gauntlet_s_json_has_its_opponents(tmp_path: Path) -> None:
    data = json.loads(_gauntlet(tmp_path, "--json").stdout)
    assert data["gauntlet"]["bot"] == "uniform"
    rows = data["gauntlet"]["opponents"]
    assert {row["opponent"] for row in rows} == {"random", "greedy"}
    assert all(row["lo"] <= row["score"] <= row["hi"] for row in rows)


@pytest.mark.slow
def test_a_round_robin_has_no_gauntlet_lines(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    done = subprocess.run(
        [*COMMAND, "tournament", "--bots", "random,uniform", "--decks", "random:2:1", *COMMON,
         "--db", db, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "gauntlet" not in json.loads(done.stdout)
