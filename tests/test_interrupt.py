"""Ctrl-C on a real ``arena tournament`` of a large field stops it within 5 s (on a quiet
machine: :func:`prompt`) with exit code 130
and nothing left running, in every phase: compiling kernels, starting the bots' hosts, playing
and storing blocks, and with more than 100 entrants."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from processes import interruptible, left_running, stored_games

from arena.bench.field import field_names, install_field

#: Seconds Ctrl-C may take to end the run on a quiet machine.
PROMPT = 5.0
#: Seconds the gauge of :func:`prompt` takes on a quiet machine (2 cores, warm caches).
QUIET_GAUGE = 3.4


def prompt() -> float:
    """Seconds Ctrl-C may take now: :data:`PROMPT`, scaled by how much slower than on a quiet
    machine a control measured in the same test runs (a fresh interpreter importing what a
    stopping run has imported: the engine and the tournament runner). On a machine busy with
    other work (load 7-12) every process is several times slower, the stopping run's too; the
    bound must hold what the product promises, not the machine's load."""
    begun = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import arena.game, arena.tournament.runner, leaderboard.ratings"],
        check=True,
    )
    return PROMPT * max(1.0, (time.perf_counter() - begun) / QUIET_GAUGE)


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory, bubblewrap: None) -> Path:
    """A package registering 120 copies of the scaffolded bot (which play in the default
    sandbox, so only where bubblewrap works)."""
    return install_field(120, tmp_path_factory.mktemp("field") / "site")


def interrupt(
    field: Path,
    tmp_path: Path,
    entrants: int,
    when: Callable[[list[str], Path], bool],
    extra: tuple[str, ...] = (),
    cache: Path | None = None,
) -> tuple[int, float, list[str]]:
    """Run a tournament of ``entrants`` field bots (and ``extra`` bots), send SIGINT to its
    process group as soon as ``when(stderr lines so far, database)`` holds, and return its exit
    code, the seconds it took to end after the signal, and its standard error."""
    db = tmp_path / "arena.db"
    env = {**os.environ, "PYTHONPATH": str(field), "ARENA_DB": f"sqlite:///{db}"}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    bots = ",".join([*field_names(entrants), *extra])
    command = ["tournament", "--decks", "fixed36", "--bots", bots]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli.main import main; main()", *command],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=interruptible,
    )
    lines: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
    reader.start()
    deadline = time.monotonic() + 240
    try:
        while not when(lines, db):
            assert proc.poll() is None, f"the run ended before the signal: {lines[-5:]}"
            assert time.monotonic() < deadline, f"the moment never came: {lines[-5:]}"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        code = proc.wait(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)
    time.sleep(0.5)
    assert left_running(str(field)) == [], "processes of the run are still running"
    return code, took, lines


def test_ctrl_c_while_kernels_compile(field: Path, tmp_path: Path) -> None:
    code, took, lines = interrupt(
        field,
        tmp_path,
        30,
        lambda lines, db: any("compiling kernels: random" in line for line in lines),
        extra=("random",),
        cache=tmp_path / "empty-cache",
    )
    assert code == 130 and took < prompt(), (code, took, lines[-3:])
    assert not any("Traceback" in line for line in lines), "".join(lines[-30:])


@pytest.mark.slow
def test_ctrl_c_while_hosts_start(field: Path, tmp_path: Path) -> None:
    code, took, lines = interrupt(
        field, tmp_path, 30, lambda lines, db: any("tournament 1 (" in line for line in lines)
    )
    assert code == 130 and took < prompt(), (code, took, lines[-3:])
    assert any("--resume" in line for line in lines)  # it says how to go on


@pytest.mark.slow
def test_ctrl_c_mid_run_keeps_what_is_stored(field: Path, tmp_path: Path) -> None:
    code, took, _ = interrupt(field, tmp_path, 30, lambda lines, db: stored_games(db) > 0)
    assert code == 130 and took < prompt(), (code, took)
    assert stored_games(tmp_path / "arena.db") > 0


@pytest.mark.slow
def test_ctrl_c_in_a_field_of_more_than_100(field: Path, tmp_path: Path) -> None:
    code, took, lines = interrupt(field, tmp_path, 120, lambda lines, db: stored_games(db) > 0)
    assert code == 130 and took < prompt(), (code, took, lines[-3:])


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.3])
def test_ctrl_c_while_workers_start_prints_no_traceback(
    field: Path, tmp_path: Path, delay: float
) -> None:
    # the workers' interpreters are still importing then: they must not print KeyboardInterrupt
    def moment(lines: list[str], db: Path) -> bool:
        if not any("compiling kernels: random" in line for line in lines):
            return False
        time.sleep(delay)
        return True

    code, took, lines = interrupt(
        field, tmp_path, 10, moment, extra=("random",), cache=tmp_path / "empty-cache"
    )
    assert code == 130 and took < prompt(), (code, took, lines[-3:])
    assert not any("Traceback" in line for line in lines), "".join(lines[-30:])
