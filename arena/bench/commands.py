"""How fast commands answer a person at the terminal: the wall time of ``arena ARGS`` from its
start to its exit, the best of three runs after one unmeasured run (warm caches: compiled
kernels, plugin listings, the operating system's file cache), each in a fresh process exactly as
a shell starts it.

The figures: ``cmd_help_s`` (``arena --help``), ``cmd_bots_s`` (``arena bots``),
``cmd_play_s`` (``arena play random greedy``: one round), ``cmd_tournament_2_games_s`` (a
two-game ``arena tournament`` of ``random`` and ``greedy`` on a new database, until it has
stored both games, rated them and printed the table), ``cmd_leaderboard_100k_s`` and
``cmd_report_json_100k_s`` (``arena leaderboard`` and ``arena report --json`` over the
111,200 real games of :func:`arena.bench.serve_pages.build_ladder`, built once per ``arena
bench`` run in a temporary directory, about 90 s on two cores).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

#: How a shell starts the ``arena`` command (its console script does the same; ``-P``: as the
#: script, with no current directory on ``sys.path``, where a checkout's ``*.egg-info`` would
#: add a second copy of the arena's distribution, whose plugin listing is asked every time).
ARENA = [sys.executable, "-P", "-c", "from arena.cli.main import main; main()"]
#: Measured runs of each command (the figure is the fastest), after one unmeasured run.
RUNS = 3

_ladder: dict[str, object] = {}  # the 100,000-game database, built once per process


def _once(args: Sequence[str], env: dict[str, str] | None) -> float:
    """Seconds one run of ``arena ARGS`` takes; a run that fails raises
    :class:`RuntimeError` with its last line."""
    begun = time.perf_counter()
    done = subprocess.run([*ARENA, *args], env=env, capture_output=True, text=True, check=False)
    spent = time.perf_counter() - begun
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing)"])[-1]
        raise RuntimeError(f"arena {' '.join(args)} exited {done.returncode}: {last}")
    return spent


def command_seconds(
    args: Sequence[str] | Callable[[int], Sequence[str]], env: dict[str, str] | None = None
) -> float:
    """The fastest of :data:`RUNS` runs of ``arena ARGS`` (after one unmeasured run), in
    seconds; ``args`` may be a function of the run's number (0 is the unmeasured one)."""
    runs = [_once(args(k) if callable(args) else args, env) for k in range(RUNS + 1)]
    return min(runs[1:])


def cmd_help_s(seconds: float) -> float:
    """Seconds ``arena --help`` takes."""
    return command_seconds(["--help"])


def cmd_bots_s(seconds: float) -> float:
    """Seconds ``arena bots`` takes (every plugin's listing remembered)."""
    return command_seconds(["bots"])


def cmd_play_s(seconds: float) -> float:
    """Seconds ``arena play random greedy`` (one round) takes."""
    return command_seconds(["play", "random", "greedy", "--seed", "1"])


def cmd_tournament_2_games_s(seconds: float) -> float:
    """Seconds a two-game ``arena tournament`` takes, each run on a new database."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-cmd-") as where:
        return command_seconds(
            lambda k: [
                *("tournament", "--bots", "random,greedy", "--decks", "random:1:1", "--quiet"),
                *("--db", f"sqlite:///{where}/t{k}.db"),
            ]
        )


def _ladder_url() -> str:
    """The database of :func:`arena.bench.serve_pages.build_ladder`'s default ladder (111,200
    games), built on first use in a temporary directory kept until this process exits."""
    if "url" not in _ladder:
        from arena.bench.serve_pages import ladder_database

        where = tempfile.TemporaryDirectory(prefix="arena-bench-ladder-")
        _ladder.update(url=ladder_database(Path(where.name)), directory=where)
    return str(_ladder["url"])


def cmd_leaderboard_100k_s(seconds: float) -> float:
    """Seconds ``arena leaderboard`` takes over 111,200 stored games."""
    return command_seconds(["leaderboard", "--db", _ladder_url()], env=dict(os.environ))


def cmd_report_json_100k_s(seconds: float) -> float:
    """Seconds ``arena report --json`` takes over 111,200 stored games."""
    return command_seconds(["report", "--json", "--db", _ladder_url()], env=dict(os.environ))
