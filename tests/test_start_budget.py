"""A slow bot pays for its own slowness (issue 22, item 5).

The attacker is a real installed package (``tests/fixtures/slow_starter``): its ``slow-crasher``
sleeps SECONDS in ``warm_up`` at every start of its host and crashes in every second round the
host plays, so that every restart costs the whole start again. Before the start budget, a
worker restarted it inside the game that needed it, and the field waited: a 72-game tournament
with ``slow-crasher[seconds=20]`` took 135 s where the same field without it took 11 s. Now its
restarts start in the background, the games wait for a restart ``--restart-time`` seconds at
most, and the games whose hosts are ready are played meanwhile, without changing a record
(``test_records_do_not_depend_on_the_order_games_are_played_in``). What stays is the crasher's
first start, which is its right: the tournament takes that start, one restart allowance and at
most 3 times the field's own time.
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
from stored_records import essence

from arena.hosting.catalog import load_catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.runner import TournamentSpec, plan_tournament, worker_setup
from arena.tournament.start_budget import BudgetedHost
from arena.tournament.worker import BlockPlayer, BlockTask, faulted

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
    tmp_path: Path,
    seconds: float,
    installed: Callable[..., None],
    bound: Callable[[float], float],
    restart: int = 10,
) -> None:
    """The slow crasher's 72-game tournament with ``--restart-time restart``, then the same
    without it: every game stored, its first start allowed, its late restarts faulted, and
    within ``bound`` of the time without it."""
    installed("slow_starter")
    # the entrant's name: its spec without parameters left at their defaults
    crasher = "slow-crasher" if seconds == 110 else f"slow-crasher[seconds={seconds:.1f}]"
    took, done = tournament(
        tmp_path / "crasher.db", f"{crasher},{FIELD}", "--restart-time", str(restart)
    )
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
    assert late and all(f"restart allowance of {restart} s" in m for m in late)
    assert "disqualified" in kinds  # its faults, the late restarts among them, counted
    assert took <= bound(alone), f"{took:.1f} s with the slow crasher, {alone:.1f} s without"


@pytest.mark.slow
@pytest.mark.alone
def test_a_slow_crasher_does_not_hold_up_the_field(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """``slow-crasher[seconds=20]``: before the start budget 135 s against 11 s without it (a
    whole start waited for at every crash). Its first start is its right (up to 120 s), and the
    field alone may take less than it; beyond that start and one restart allowance (here 3 s,
    the workers waiting in parallel), the tournament takes at most 3 times the field's time
    (here with starts of 8 s, to keep the suite short; the issue's 110 s in the slow run)."""
    check_slow_crasher(tmp_path, 8.0, installed, lambda alone: 8 + 3 + 3 * alone, restart=3)


@pytest.mark.slow
def test_the_110_s_crasher_of_the_issue(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """The issue's crasher (110 s at every start; 999 s for the 72 games before): its first
    start is allowed (120 s), so the tournament takes that long, and its restarts add one
    restart allowance (the workers waiting in parallel), not a start per crash."""
    check_slow_crasher(tmp_path, 110.0, installed, lambda alone: 110 + 10 + 3 * alone)


@pytest.mark.slow
def test_a_restart_past_its_allowance_forfeits_and_plays_once_started(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """One worker, ``--restart-time 0.5``, never disqualified, a crasher taking 2 s to start
    and two bots: after its crash its next game waits 0.5 s and is a timeout fault, the games
    it is due in while its host still starts are forfeited at once (the others are played),
    and once its host is up it plays again.

    37 decks: the schedule plays each seating's first 36 decks in a row (its crash comes early
    in them, and its host is not back before they run out), then the other two bots' 72 games,
    which give its restart seconds to finish, then each seating's last deck, which it plays
    (a fresh process for each seating: it does not crash again there).
    """
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
        "random:37:1",
    )
    _, done = tournament(tmp_path / "t.db", f"{crasher},random,ismcts[seconds=0.02]", *args)
    assert done.returncode == 0, done.stderr
    games = sorted(exported(tmp_path / "t.db"), key=lambda g: g["id"])  # the schedule's order
    faults = crasher_faults(games, crasher)
    late = [message for kind, message in faults if kind == "timeout"]
    assert late and all("restart allowance of 0.5 s" in message for message in late), faults
    crashed = next(g["id"] for g in games if g["faults"] and g["faults"][0]["kind"] == "crash")
    after = [g for g in games if g["id"] > crashed and crasher in g["seats"]]
    assert any(g["faults"] for g in after), "its games are forfeited while its host starts"
    assert not after[-1]["faults"], "once its host is up it plays again"


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


@pytest.mark.slow
def test_records_do_not_depend_on_the_order_games_are_played_in(
    bubblewrap: None, tmp_path: Path, installed: Callable[..., None]
) -> None:
    """In the sandbox, a worker plays a block's games whose hosts are ready before those
    waiting for a start (here the 2 s first start of the slow crasher), but never one that a
    game before it could still change: ``crasher`` is disqualified by its first crash, so the
    games it is in after one with the slow crasher wait for that one. The records are those
    of one game at a time in schedule order."""
    installed("faulty_bots", "slow_starter")
    sandbox = choose_sandbox("bwrap")
    catalog = load_catalog(sandbox)
    bots = ("crasher", "slow-crasher[seconds=2.0]", "honest")
    spec = TournamentSpec(decks="random:2:1", bots=bots, seed=3, max_faults=1)
    plan = plan_tournament(spec, catalog)
    slow = "slow-crasher[seconds=2.0]"
    assert [game.seats for game in plan.schedule[:5]] == [
        ("crasher", slow),
        ("crasher", slow),
        (slow, "crasher"),
        (slow, "crasher"),
        ("crasher", "honest"),
    ]
    setup = worker_setup(plan, sandbox)
    player = BlockPlayer(setup)
    try:
        block = player.play(BlockTask(0, tuple(plan.schedule)))
    finally:
        player.close()
    player = BlockPlayer(setup)
    one_by_one = []
    counts: dict[str, int] = {}
    try:
        for number, game in enumerate(plan.schedule):
            (outcome,) = player.play(BlockTask(number, (game,), dict(counts))).outcomes
            one_by_one.append(outcome)
            for name in faulted(outcome.record):
                counts[name] = counts.get(name, 0) + 1
    finally:
        player.close()
    assert [essence(o.record) if o.record else None for o in block.outcomes] == [
        essence(o.record) if o.record else None for o in one_by_one
    ]
    assert [o.disqualified for o in block.outcomes] == [o.disqualified for o in one_by_one]
    kinds = [
        f.kind
        for o in one_by_one
        if o.record is not None
        for f in o.record.faults
        if o.record.seats[f.seat] == "crasher"
    ]
    assert kinds[0] == "crash" and set(kinds[1:]) == {"disqualified"}


def test_a_host_starting_beside_play_has_the_least_cpu_weight(
    bubblewrap: None, installed: Callable[..., None]
) -> None:
    """A host started in the background (``idle_start``) has its control group's least CPU
    weight while it starts, so a start overlapping play takes no CPU a move needs, and the
    usual weight once it is up."""
    installed("slow_starter")
    sandbox = choose_sandbox("bwrap")
    if sandbox.hierarchy is None:
        pytest.skip(f"no control groups here: {sandbox.cgroup_reason}")
    host = HostHandle(
        "slow-crasher[seconds=2.0]", "arena-test-slow-starter:slow-starter", sandbox=sandbox
    )
    budgeted = BudgetedHost(host)
    try:
        budgeted.begin()
        deadline = time.monotonic() + 10
        while host._host is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert host._host is not None and host._host.group is not None
        group = host._host.group
        path, name, least, usual = (
            (group.dirs[""], "cpu.weight", "1", "100")
            if group.hierarchy.version == 2
            else (group.dirs["cpu"], "cpu.shares", "2", "1024")
        )
        assert not budgeted.ready
        assert (path / name).read_text().strip() == least
        while not budgeted.ready and time.monotonic() < deadline:
            time.sleep(0.05)
        assert budgeted.ready and host.running
        assert (path / name).read_text().strip() == usual
    finally:
        budgeted.close()
    assert not host.running
