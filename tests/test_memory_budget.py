"""The arena budgets memory and protects itself (docs/sandbox.md, docs/tournaments.md).

The attackers are ``tests/fixtures/memory_hogs``: six of its eight bots, each holding 717 MiB
(70% of a ``--memory-mb 1024`` limit) from its first move for as long as its host lives. Each
test runs
a real ``arena tournament`` inside a v1 memory control group capped by the test (3 GiB), as a
machine or a container short of memory would be: the tournament plans within the cap or refuses
in one line; no bot is faulted for the machine's shortage; when memory runs short anyway (a
balloon joins the group mid-run), the kernel kills hosts only, the games they were playing are
played again, and every scheduled game is stored. A runner killed outright never leaves its
tournament looking ``running``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from processes import stored_games, wait_until_stored

from arena.hosting import cgroups
from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.memory import (
    WORKER_RESERVE_MB,
    Available,
    MemoryPlanError,
    plan_host_memory,
    plan_workers,
)
from arena.tournament.runner import TournamentSpec, plan_tournament, worker_setup
from arena.tournament.worker import BlockPlayer, BlockTask
from leaderboard.store import Store

#: The cap of the control group a tournament runs in.
CAP = 3 << 30
HOGS = [f"hog{n}" for n in range(1, 7)]
#: How a test runs the arena's command (the module, so that PYTHONPATH decides the code run).
ARENA = [sys.executable, "-c", "from arena.cli.main import main; main()"]


def _memory_parent() -> Path:
    """This process's v1 memory group (where the test may make a capped child), or skip."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, group = line.split(":", 2)
        if "memory" in controllers.split(","):
            parent = Path("/sys/fs/cgroup/memory") / group.lstrip("/")
            if (parent / "memory.limit_in_bytes").exists() and os.access(parent, os.W_OK):
                return parent
    pytest.skip("no writable cgroup v1 memory controller here to cap a tournament's memory")


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[Path]:
    """A v1 memory group below this process's, limited to :data:`CAP`; everything left in it
    (and its subgroups) is killed and it is removed afterwards."""
    group = _memory_parent() / f"arena-test-cap-{os.getpid()}-{tmp_path.name}"
    group.mkdir()
    try:
        (group / "memory.limit_in_bytes").write_text(str(CAP))
        with contextlib.suppress(OSError):
            (group / "memory.memsw.limit_in_bytes").write_text(str(CAP))
        yield group
    finally:
        for _ in range(100):
            inner = sorted(group.rglob("cgroup.procs"), key=lambda p: -len(p.parts))
            pids = [int(x) for p in inner for x in p.read_text().split()]
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        for sub in sorted((p for p in group.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                sub.rmdir()
        group.rmdir()


def in_group(group: Path, argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """Start ``argv`` inside control group ``group`` (a shell joins it, then becomes it)."""
    return subprocess.Popen(
        ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group), *argv],
        env=env,
        cwd="/",  # the arena installed, not a checkout in the working directory
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.fixture
def hogs(installed: Callable[..., None], bubblewrap: None, tmp_path: Path) -> dict[str, str]:
    """The environment of a command that sees the memory hogs, with its own database."""
    installed("memory_hogs")
    return {**os.environ, "ARENA_DB": f"sqlite:///{tmp_path / 'arena.db'}"}


def members(group: Path) -> list[int]:
    """The processes in control group ``group`` itself."""
    return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]


def oom_scores(pids: list[int]) -> set[int]:
    """The ``oom_score_adj`` of the processes ``pids`` (of those still running)."""
    found = set()
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            found.add(int(Path(f"/proc/{pid}/oom_score_adj").read_text()))
    return found


def may_lower_scores() -> bool:
    """Whether this process (and so the command it starts) holds ``CAP_SYS_RESOURCE``, which
    lowering an ``oom_score_adj`` needs."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << 24))
    return False


def tournament(workers: int, decks: str = "random:1", start_s: float = 0.0) -> list[str]:
    """The six hogs' tournament at ``--memory-mb 1024`` (their hosts taking ``start_s``
    seconds more to start once they hold their memory)."""
    bots = [f"{hog}[start_s={start_s}]" if start_s else hog for hog in HOGS]
    return [
        *ARENA, "tournament", "--bots", ",".join(bots), "--memory-mb", "1024",
        "--decks", decks, "--workers", str(workers), "--quiet", "--json",
    ]  # fmt: skip


def faults(env: dict[str, str]) -> tuple[int, Counter[str], dict[str, str]]:
    """How many games the command's database stores, how many faults of each kind they hold,
    and a message of each kind."""
    store = Store(env["ARENA_DB"])
    try:
        kinds: Counter[str] = Counter()
        said: dict[str, str] = {}
        stored = store.stored_games(1)
        for game in stored:
            for fault in game.record.faults:
                kinds[fault.kind] += 1
                said.setdefault(fault.kind, fault.message)
        return len(stored), kinds, said
    finally:
        store.close()


@pytest.mark.slow
def test_hogs_under_a_cap_are_planned_for_or_refused_in_one_line_never_faulted(
    capped: Path, hogs: dict[str, str]
) -> None:
    # two workers would each need two hosts of 1024 MiB at once: more than 3 GiB holds
    refused = in_group(capped, tournament(workers=2), hogs)
    out, err = refused.communicate(timeout=300)
    assert refused.returncode == 2, err
    assert err.count("\n") == 1 and "not enough memory" in err and "--memory-mb 1024" in err, err
    assert stored_games(Path(hogs["ARENA_DB"].removeprefix("sqlite:///"))) == 0
    # one worker fits: every game is played and stored, and no hog is faulted for the machine,
    # though the worker looks ahead for games to play while hosts start (they hold their
    # memory once started, so only two may start at once)
    run = in_group(capped, tournament(workers=1, start_s=0.3), hogs)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    stored, kinds, said = faults(hogs)
    assert stored == 30, err  # 15 pairs x 1 deck x 2 seatings
    assert not kinds, said
    assert all(row["faults"] == 0 for row in json.loads(out)["standings"]), out


@pytest.mark.slow
def test_when_memory_runs_short_the_kernel_kills_hosts_never_the_arena(
    capped: Path, hogs: dict[str, str]
) -> None:
    db = Path(hogs["ARENA_DB"].removeprefix("sqlite:///"))
    run = in_group(capped, tournament(workers=1, decks="random:2"), hogs)
    try:
        wait_until_stored(run, db, 6)
        # the kernel's order: hosts (in their groups below the capped one) first, the arena's
        # processes (in the capped group itself) last: -900 where lowering a score is allowed
        # (CAP_SYS_RESOURCE, which a container may lack), else as they were
        lowered = {-900} if may_lower_scores() else {0}
        assert oom_scores(members(capped)) == lowered
        hosts = [pid for group in capped.glob("arena-*/host-*") for pid in members(group)]
        assert oom_scores(hosts) == {1000}
        # another tenant of the group takes 2 GiB for a few seconds: hosts must make room
        balloon = in_group(
            capped,
            [
                sys.executable, "-c",
                "import time; b = bytearray(2048 << 20)\n"
                "for i in range(0, len(b), 4096): b[i] = 1\n"
                "time.sleep(6)",
            ],
            hogs,
        )  # fmt: skip
        balloon.communicate(timeout=120)
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    # the coordinator and its worker lived (a worker's death fails the run), and every
    # scheduled game is stored; games the shortage left unplayed are said, and the run exits 1
    stored, kinds, said = faults(hogs)
    store = Store(hogs["ARENA_DB"])
    try:
        unplayed = sum(g.record.end_reason == "shortage" for g in store.stored_games(1))
    finally:
        store.close()
    assert run.returncode == (1 if unplayed else 0), err
    if unplayed:
        assert "could not be played for the arena's own reasons" in err
        assert "ran short of memory" in err
    assert stored == 60, err
    assert set(kinds) - {"shortage"} == set(), (kinds, said)
    assert kinds["shortage"], said  # the kernel did kill hosts, and it was not their fault
    assert all(row["faults"] == 0 for row in json.loads(out)["standings"]), out


@pytest.mark.slow
def test_a_tournament_whose_runner_was_killed_is_never_shown_running(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    env = {**os.environ, "ARENA_DB": f"sqlite:///{db}"}
    run = subprocess.Popen(
        [*ARENA, "tournament", "--bots", "random,greedy", "--decks", "random:5000", "--quiet"],
        env=env,
        cwd="/",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_stored(run, db, 4)
        os.kill(run.pid, signal.SIGKILL)  # the runner alone, as the kernel's OOM killer would
        run.wait()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)  # its workers
    listed = subprocess.run(
        [*ARENA, "tournaments", "--json"], env=env, cwd="/", capture_output=True
    )
    assert [t["status"] for t in json.loads(listed.stdout)] == ["interrupted"], listed.stderr
    for command in (["tournaments"], ["leaderboard"]):
        shown = subprocess.run([*ARENA, *command], env=env, cwd="/", capture_output=True, text=True)
        assert "running" not in shown.stdout and "[interrupted]" in shown.stdout, shown


def test_the_plan_reads_the_arena_groups_limit_and_shares_it_among_workers(capped: Path) -> None:
    probe = in_group(
        capped,
        [
            sys.executable, "-c",
            "from arena.tournament.memory import available_memory as a; m = a(); "
            "print(m.mb, m.source)",
        ],
        dict(os.environ),
    )  # fmt: skip
    out, err = probe.communicate(timeout=60)
    mb, source = out.split(" ", 1)
    assert 2500 < int(mb) <= CAP >> 20 and source.strip().endswith(capped.name), (out, err)
    seen = Available(int(mb), source.strip())
    share = plan_host_memory(1, 2, 1024, seen)
    assert share == int(mb) - WORKER_RESERVE_MB
    with pytest.raises(MemoryPlanError, match=r"^not enough memory: 2 workers .* --memory-mb"):
        plan_host_memory(2, 2, 1024, seen)
    assert plan_host_memory(2, 2, 0, seen) is None  # no limit per bot: nothing to plan
    # without --workers, as many workers as fit; with it, that many or the refusal
    assert plan_workers(None, 2, 2, 1024, seen) == (1, share)
    assert plan_workers(None, 2, 2, 512, seen) == (2, (int(mb) - 2 * WORKER_RESERVE_MB) // 2)
    with pytest.raises(MemoryPlanError, match=r"^not enough memory: a worker needs .* most \d+$"):
        plan_workers(None, 2, 2, 4096, seen)


def test_a_worker_looking_ahead_starts_no_more_hosts_than_its_budget_holds(
    bubblewrap: None, installed: Callable[..., None]
) -> None:
    """While a game's hosts start, the worker looks ahead for a game it can play, starting
    that game's hosts too; a host still starting counts at its full limit (it may take its
    memory any moment), so with room for two hosts no third one is ever started beside them
    (before, a starting hog measured nothing, every game looked at started its hosts, and
    the kernel killed them all for the shortage once they took their memory)."""
    installed("memory_hogs")
    sandbox = choose_sandbox("bwrap")
    if sandbox.hierarchy is None:
        pytest.skip(f"no control groups here: {sandbox.cgroup_reason}")
    bots = tuple(f"hog{n}[mb=150,start_s=0.3]" for n in range(1, 5))
    plan = plan_tournament(
        TournamentSpec(decks="random:1", bots=bots, seed=2), load_catalog(sandbox)
    )
    setup = worker_setup(plan, sandbox, memory_mb=200, host_memory_mb=450)
    alive: list[set[str]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            alive.append(hogs_running())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    player = BlockPlayer(setup)
    watcher.start()
    try:
        block = player.play(BlockTask(0, tuple(plan.schedule)))
    finally:
        done.set()
        watcher.join()
        player.close()
        # the limit is on every host this process starts: lift it for the tests after this one
        cgroups.limit_hosts(sandbox.hierarchy, 1 << 50)
    assert max(len(hogs) for hogs in alive) == 2, [sorted(h) for h in alive if len(h) > 2][:3]
    assert not [f for o in block.outcomes if o.record for f in o.record.faults]


def hogs_running() -> set[str]:
    """The hogs whose hosts have a process running now."""
    found = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            line = (entry / "cmdline").read_bytes()
            if b"arena.hosting.host" in line and b"hog" in line:
                found.update(re.findall(r"hog\d", line.decode(errors="replace")))
    return found
