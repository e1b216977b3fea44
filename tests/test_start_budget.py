"""A slow bot pays for its own slowness (issue 22, item 5).

The attacker is a real installed package (``tests/fixtures/slow_starter``): its ``slow-crasher``
sleeps SECONDS in ``warm_up`` at every start of its host and crashes in every second round the
host plays, so that every restart costs the whole start again. Before the start budget, a
worker restarted it inside the game that needed it, and the field waited: a 72-game tournament
with ``slow-crasher[seconds=20]`` took 135 s where the same field without it took 11 s. Now its
restarts start in the background, its games wait for a restart at most ``--restart-time``
seconds after the fault, and the games whose hosts are ready are played meanwhile, without
changing a record (``test_records_do_not_depend_on_the_order_games_are_played_in``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stored_records import stored

from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.pool import LocalPool
from arena.tournament.runner import TournamentSpec, plan_tournament, run_tournament, worker_setup
from leaderboard.store import Store

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
#: The field the slow crasher joins: 3 pairs without it, 6 with it; 6 decks x 2 seatings each.
FIELD = "greedy,random,strategic"
DECKS = ["--decks", "random:6:1", "--workers", "2", "--seed", "5", "--quiet", "--json"]


def tournament(db: Path, bots: str, *extra: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``arena tournament`` with ``bots`` on a fresh database (``extra`` options after
    :data:`DECKS`, the last of each option counting); its seconds and result."""
    begun = time.monotonic()
    done = subprocess.run(
        [*COMMAND, "tournament", "--bots", bots, *DECKS, *extra, "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=900,
    )
    return time.monotonic() - begun, done


def exported(db: Path) -> list[dict[str, Any]]:
    """Every stored game of tournament 1 of ``db``, as ``arena export`` writes it."""
    done = subprocess.run(
        [*COMMAND, "export", "1", "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def crasher_faults(games: list[dict[str, Any]], crasher: str) -> list[tuple[str, str]]:
    """The crasher's faults (kind, message) in schedule order."""
    faults = []
    for game in sorted(games, key=lambda g: g["key"]):
        for fault in game["faults"]:
            if game["seats"][fault["seat"]] == crasher:
                faults.append((fault["kind"], fault["message"]))
    return faults


def check_slow_crasher(
    tmp_path: Path, seconds: float, installed: Callable[..., None], bound: Callable[[float], float]
) -> None:
    """The slow crasher's 72-game tournament, then the same without it: every game stored,
    its first start allowed, its late restarts faulted, and within ``bound`` of the time
    without it."""
    installed("slow_starter")
    crasher = f"slow-crasher[seconds={seconds:.1f}]"
    took, done = tournament(tmp_path / "crasher.db", f"{crasher},{FIELD}")
    assert done.returncode == 0, done.stderr
    alone, base = tournament(tmp_path / "field.db", FIELD)
    assert base.returncode == 0, base.stderr
    games = exported(tmp_path / "crasher.db")
    assert len(games) == 72
    faults = crasher_faults(games, crasher)
    kinds = [kind for kind, _ in faults]
    assert not any("to start" in message for _, message in faults)  # its first start waited for
    assert any(crasher in g["seats"] and not g["faults"] for g in games)  # and it played
    assert "crash" in kinds
    late = [m for kind, m in faults if kind == "timeout"]
    assert late and all("restart allowance of 10 s" in m for m in late)
    assert "disqualified" in kinds  # its faults, the late restarts among them, counted
    assert took <= bound(alone), f"{took:.1f} s with the slow crasher, {alone:.1f} s without"


def test_a_slow_crasher_does_not_hold_up_the_field(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """``slow-crasher[seconds=20]``: before the start budget 135 s against 11 s without it."""
    check_slow_crasher(tmp_path, 20.0, installed, lambda alone: 3 * alone)


@pytest.mark.slow
def test_the_110_s_crasher_of_the_issue(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """The issue's crasher (110 s at every start; 999 s for the 72 games before): its first
    start is allowed (120 s), so the tournament takes that long, and its restarts add at most
    one restart allowance per worker, not a start per crash."""
    check_slow_crasher(tmp_path, 110.0, installed, lambda alone: 110 + 10 + 3 * alone)


def test_a_restart_past_its_allowance_forfeits_and_plays_once_started(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """One worker, ``--restart-time 0.5``, never disqualified, a crasher taking 2 s to start
    and two bots: after its crash its next game waits 0.5 s and is a timeout fault, the games
    it is due in while its host still starts are forfeited at once (the others are played),
    and once its host is up it plays again (and crashes again every second round)."""
    installed("slow_starter")
    crasher = "slow-crasher[seconds=2.0]"
    args = (
        "--workers",
        "1",
        "--restart-time",
        "0.5",
        "--max-faults",
        "0",
        "--decks",
        "random:20:1",
    )
    _, done = tournament(tmp_path / "t.db", f"{crasher},random,ismcts[seconds=0.05]", *args)
    assert done.returncode == 0, done.stderr
    faults = crasher_faults(exported(tmp_path / "t.db"), crasher)
    late = [message for kind, message in faults if kind == "timeout"]
    assert late and all("restart allowance of 0.5 s" in message for message in late)
    assert [kind for kind, _ in faults].count("crash") >= 2  # up and playing after a late start


def test_a_bad_restart_time_is_one_line(tmp_path: Path) -> None:
    """``--restart-time`` must be a positive number of seconds: one line, exit code 2."""
    for bad in ("0", "-1", "soon"):
        done = subprocess.run(
            [*COMMAND, "tournament", "--restart-time", bad, "--db", f"sqlite:///{tmp_path}/t.db"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2
        assert "--restart-time" in done.stderr and "Traceback" not in done.stderr


def test_records_do_not_depend_on_the_order_games_are_played_in(
    bubblewrap: None, faulty_bots: Path, tmp_path: Path
) -> None:
    """In the sandbox, a worker plays a block's games whose hosts are ready before those
    waiting for a start (here the crasher's background restarts); with disqualification in
    play, the records are those of one game at a time in schedule order."""
    sandbox = choose_sandbox("bwrap")
    catalog = load_catalog(sandbox)
    spec = TournamentSpec(
        decks="random:3:1", bots=("honest", "crasher", "uniform", "warm"), seed=3, max_faults=3
    )
    plan = plan_tournament(spec, catalog)
    setup = worker_setup(plan, sandbox)
    results = []
    for name, workers, block in (("one", 1, 1), ("two", 2, 9)):
        store = Store(f"sqlite:///{tmp_path}/{name}.db")
        summary = run_tournament(
            plan, store, lambda w=workers: LocalPool(setup, w), block_size=block
        )
        assert summary.complete
        results.append((store, summary.tournament_id))
    (one, first), (two, second) = results
    assert stored(one, first) == stored(two, second)
    kinds = [
        f.kind
        for game in one.stored_games(first)
        for f in game.record.faults
        if game.record.seats[f.seat] == "crasher"
    ]
    assert kinds[:3] == ["crash"] * 3 and set(kinds[3:]) == {"disqualified"}
