"""``arena bench``: the project's speed figures, each measured the same way every time.

Each benchmark is a function returning one number; :data:`BENCHMARKS` names them. They run in
this process pinned to one core (where the platform allows), after a warm-up that compiles and
loads what they use, for at least ``seconds`` each.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from arena.bench import commands as C
from arena.bench.goals import Goal


@dataclass(frozen=True)
class Benchmark:
    """A named figure: how to measure it, its unit, and the goal it is held to (``None``: no
    goal)."""

    key: str
    measure: Callable[[float], float]
    unit: str
    goal: Goal | None
    #: Whether it uses every core (the others run pinned to one).
    all_cores: bool = False


@contextmanager
def one_core() -> Iterator[None]:
    """Pin this process to one core while the block runs (no-op where unsupported)."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _repeat_until(seconds: float, step: Callable[[], int]) -> float:
    """Run ``step`` (returning a count) for ``seconds``; return the count per second."""
    count = 0
    begun = time.perf_counter()
    while True:
        count += step()
        spent = time.perf_counter() - begun
        if spent >= seconds:
            return count / spent


def engine_rounds_per_s(seconds: float) -> float:
    """Two-player classic rounds per second, uniform random play, entirely inside the engine."""
    from arena.engine.layout import VARIANT_CLASSIC
    from arena.engine.playout import play_uniform_rounds

    play_uniform_rounds(1000, 2, VARIANT_CLASSIC, 1)
    batch = 200_000
    seed = [0]

    def step() -> int:
        seed[0] += 1
        play_uniform_rounds(batch, 2, VARIANT_CLASSIC, seed[0])
        return batch

    return _repeat_until(seconds, step)


def referee_moves_per_s(seconds: float) -> float:
    """Moves per second through the referee, two uniform bots in this process."""
    from arena.referee.play import InProcessHandle, Referee
    from bots.uniform import UniformBot

    referee = Referee("classic", move_time=None)
    return _moves_per_s(
        referee, [InProcessHandle(UniformBot()), InProcessHandle(UniformBot())], seconds
    )


def _moves_per_s(referee: Any, handles: list[Any], seconds: float) -> float:
    """Rounds on fresh seeds through ``referee`` for ``seconds``, after one warm-up round."""
    referee.play_round(handles, seed=0)
    seed = [0]

    def step() -> int:
        seed[0] += 1
        return len(referee.play_round(handles, seed=seed[0]).actions)

    return _repeat_until(seconds, step)


def isolated_moves_per_s(seconds: float) -> float:
    """Moves per second through the referee, two uniform bots each in its own host process (in
    the sandbox a tournament would use here), pinned with the referee to one core."""
    from arena.hosting.hosted import HostHandle
    from arena.hosting.plugins import BUILTIN_PLUGIN
    from arena.hosting.sandbox import choose_sandbox
    from arena.referee.play import Referee

    box = choose_sandbox("auto")
    referee = Referee("classic", move_time=1.0)
    handles = [HostHandle("uniform", BUILTIN_PLUGIN, sandbox=box) for _ in range(2)]
    try:
        return _moves_per_s(referee, handles, seconds)
    finally:
        for handle in handles:
            handle.close()


def host_start_seconds(seconds: float) -> float:
    """Median seconds from starting a ``greedy`` host (a policy bot: the interpreter, the arena's
    modules and its compiled kernels, loaded from the trusted cache after the compile step) in
    the sandbox a tournament would use here until it says hello."""
    from arena.hosting.catalog import load_catalog
    from arena.hosting.kernels import compile_kernels, trusted_bots
    from arena.hosting.sandbox import choose_sandbox

    box = choose_sandbox("auto")
    entry = load_catalog(box).bots["greedy"]
    compile_kernels(trusted_bots([entry]), box)
    return _host_starts("greedy", entry.plugin, box, seconds)


#: The plugin of the pure-Python bot :func:`submitted_host_start_seconds` submits.
_SUBMITTED_PLUGIN = """
from arena.bot import Bot
from arena.hookspecs import hookimpl


class FirstLegal(Bot):
    def act(self, observation):
        return observation.legal_actions[0]


@hookimpl
def arena_register_bots(register):
    register("bench-submitted", FirstLegal, "a pure-Python bot, submitted")
"""


def _wheel(directory: str, distribution: str, files: dict[str, str]) -> str:
    """A pure-Python wheel of ``distribution`` 1.0 holding ``files`` (path -> text) besides its
    metadata (the ``*.dist-info/entry_points.txt`` among ``files``)."""
    from pathlib import Path

    from arena.kit.wheel import write_wheel

    return str(write_wheel(Path(directory), distribution, "1.0", files))


#: The files of ``arena-bench-submitted`` (besides its metadata): the bot of both host starts.
_BENCH_FILES = {
    "arena_bench_submitted/__init__.py": "",
    "arena_bench_submitted/plugin.py": _SUBMITTED_PLUGIN,
    "arena_bench_submitted-1.0.dist-info/entry_points.txt": (
        "[arena.bots]\nbench = arena_bench_submitted.plugin\n"
    ),
}


def _bench_wheel(directory: str) -> str:
    """A pure-Python wheel of ``arena-bench-submitted``."""
    return _wheel(directory, "arena-bench-submitted", _BENCH_FILES)


@contextmanager
def _submissions(scratch: str) -> Iterator[None]:
    """``ARENA_SUBMISSIONS`` set to a store in ``scratch`` (a temporary directory the caller
    removes), restored afterwards; the store's read-only snapshots made writable again so that
    they can be removed."""
    from pathlib import Path

    from arena.hosting.submissions import make_writable

    before = os.environ.get("ARENA_SUBMISSIONS")
    os.environ["ARENA_SUBMISSIONS"] = os.path.join(scratch, "submissions")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ARENA_SUBMISSIONS", None)
        else:
            os.environ["ARENA_SUBMISSIONS"] = before
        make_writable(Path(scratch) / "submissions")


@contextmanager
def _on_path(where: str) -> Iterator[None]:
    """``where`` (a directory of installed packages) on ``sys.path`` and ``PYTHONPATH`` (so that
    the catalog and every host see it), both restored afterwards."""
    import importlib
    import sys

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (where, before) if p)
    sys.path.insert(0, where)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(where)
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
        importlib.invalidate_caches()


def _host_starts(name: str, ref: str, box: Any, seconds: float) -> float:
    """Median seconds from starting the host of bot ``name`` (plugin ``ref``) in ``box`` until
    it says hello: at least 3 starts, then more (up to 20) for ``seconds``."""
    import statistics

    from arena.hosting.hosted import HostHandle

    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 20):
        handle = HostHandle(name, ref, sandbox=box)
        begun = time.perf_counter()
        handle.start(0, 2, "classic", 0)
        times.append(time.perf_counter() - begun)
        handle.close()
    return statistics.median(times)


def installed_host_start_seconds(seconds: float) -> float:
    """Median seconds from starting the host of the pure-Python bot of
    :func:`submitted_host_start_seconds`, installed (its package on ``PYTHONPATH`` in a temporary
    directory) rather than submitted, in the same sandbox, to its hello: the like-for-like
    counterpart of that figure."""
    import tempfile
    import zipfile

    from arena.hosting.catalog import load_catalog
    from arena.hosting.sandbox import choose_sandbox

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        site = os.path.join(scratch, "site")
        with zipfile.ZipFile(_bench_wheel(scratch)) as archive:
            archive.extractall(site)
        with _on_path(site):
            box = choose_sandbox("bwrap")
            entry = load_catalog(box).bots["bench-submitted"]
            return _host_starts("bench-submitted", entry.plugin, box, seconds)


def submitted_host_start_seconds(seconds: float) -> float:
    """Median seconds from starting the host of a submitted pure-Python bot (``arena submit`` of
    a wheel into a temporary store; the host sees its snapshot) in the sandbox to its hello:
    to compare with :func:`installed_host_start_seconds` (the same bot installed) and
    :func:`host_start_seconds`. Needs bubblewrap (a submission never runs without it)."""
    import tempfile

    from arena.hosting.build import submit
    from arena.hosting.sandbox import choose_sandbox
    from arena.hosting.submissions import Store, submission_ref

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch, _submissions(scratch):
        record = submit(_bench_wheel(scratch), Store()).record
        box = choose_sandbox("bwrap")
        ref = submission_ref(record.content, "bench")
        return _host_starts("bench-submitted", ref, box, seconds)


def submit_seconds(seconds: float) -> float:
    """Median seconds of the whole ``arena submit`` command (a process of its own, into a
    temporary store) of a small pure-Python source package: the project ``arena new-bot
    benchsub`` writes (:func:`~arena.kit.scaffold.write_bot_package`), built into a wheel with
    setuptools in the sandbox, installed, copied out of it, its plugin listed, its version
    stored: at least 3 submits, then more (up to 10) for ``seconds``. Needs bubblewrap."""
    import statistics
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from arena.kit.scaffold import Layout, write_bot_package

    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch, _submissions(scratch):
        project = write_bot_package(Layout.of(("benchsub",)), Path(scratch) / "project")
        command = [sys.executable, "-c", "from arena.cli.main import main; main()", "submit"]
        deadline = time.perf_counter() + seconds
        while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 10):
            begun = time.perf_counter()
            subprocess.run([*command, str(project)], check=True, capture_output=True)
            times.append(time.perf_counter() - begun)
    return statistics.median(times)


def _simulate_rounds_per_s(bots: list[str], seconds: float) -> float:
    """Rounds per second of ``arena simulate`` (2-player classic) between ``bots``."""
    from bots.simulate import simulate

    simulate(bots, 1000, "classic", seed=0)
    seed = [0]

    def step() -> int:
        seed[0] += 1
        simulate(bots, 200_000, "classic", seed=seed[0])
        return 200_000

    return _repeat_until(seconds, step)


def simulate_random_random_rounds_per_s(seconds: float) -> float:
    """``random`` against ``random`` in the simulator (numba policies on the seats' views)."""
    return _simulate_rounds_per_s(["random", "random"], seconds)


def simulate_strategic_random_rounds_per_s(seconds: float) -> float:
    """``strategic`` against ``random`` in the simulator."""
    return _simulate_rounds_per_s(["strategic", "random"], seconds)


def dp_build_seconds(seconds: float) -> float:
    """Seconds to build the Dynamic Programming solver's ``huibers`` table (compiled kernels,
    never from the disk cache): the best of at least three builds, for at least ``seconds``."""
    from solver import build_table

    build_table()  # warm-up: compile or load the kernels
    best = float("inf")
    builds = 0
    begun = time.perf_counter()
    while builds < 3 or time.perf_counter() - begun < seconds:
        best = min(best, build_table().build_seconds)
        builds += 1
    return best


def dp_states(seconds: float) -> float:
    """Slots the Dynamic Programming solver computes for the ``huibers`` table."""
    from solver import build_table

    return float(build_table().states)


#: The 2-player classic opening position of the search benchmarks: Countess set aside, Guard,
#: Handmaid and Prince face up; seat 0 holds a Guard and draws a Baron (8 legal actions), seat 1
#: holds the King.
SEARCH_BENCH_DECK = (7, 1, 4, 5, 1, 6, 3, 1, 1, 1, 2, 2, 3, 4, 5, 8)


def _search_iterations_per_s(name: str, seconds: float) -> float:
    """MCTS iterations per second of whole decisions (tree allocation, determinizations and the
    vote included) of the search bot ``name`` with its default parameters, from seat 0 of
    :data:`SEARCH_BENCH_DECK`: its ``iterations`` (times its ``determinizations``, if any) per
    decision."""
    import numpy as np

    from arena.engine.rng import new_rng
    from arena.game import Game
    from bots.policy import policies

    info = policies()[name]
    params = info.param_array()
    per_decision = int(info.params["iterations"]) * int(info.params.get("determinizations", 1))
    policy = info.kernel()
    table = info.table()
    obs = Game(2, "classic", deck=SEARCH_BENCH_DECK).observation(0)
    view = obs.to_view()
    legal = np.asarray(obs.legal_packed(), dtype=np.int32)
    rng = new_rng(1)
    policy(view, legal, len(legal), rng, params, table)  # compile or load

    def step() -> int:
        policy(view, legal, len(legal), rng, params, table)
        return per_decision

    return _repeat_until(seconds, step)


def ismcts_iterations_per_s(seconds: float) -> float:
    """SO-ISMCTS iterations per second (``ismcts``, 1000 iterations per decision, one new
    determinization each) in a 2-player classic opening position."""
    return _search_iterations_per_s("ismcts", seconds)


def pimc_iterations_per_s(seconds: float) -> float:
    """PIMC iterations per second (``pimc``: 50 determinizations of 160 UCT iterations per
    decision) in a 2-player classic opening position."""
    return _search_iterations_per_s("pimc", seconds)


def montecarlo_ms_per_round(seconds: float) -> float:
    """Milliseconds per whole 2-player classic round of ``montecarlo`` (default parameters: 1000
    playouts per option) against ``random`` in the simulator, seat 0 first (Huibers' thesis: one
    million such rounds in 181 minutes, 10.9 ms each)."""
    from bots.simulate import simulate

    bots = ["montecarlo", "random"]
    simulate(bots, 2, "classic", seed=0)  # compile or load
    rounds = 0
    spent = 0.0
    seed = 0
    while spent < seconds:
        seed += 1
        result = simulate(bots, 20, "classic", seed=seed)
        rounds += result.games
        spent += result.games / result.rounds_per_s
    return 1000.0 * spent / rounds


def ace_ms_per_move(seconds: float) -> float:
    """Milliseconds ``ace`` (default parameters) takes per move on average, its opponent-model
    tables measured and its kernels loaded first: whole 2-player ``classic`` rounds against
    ``greedy`` through the referee in this process, both seatings of each deal, the time of
    ``ace``'s own moves (its belief from the events, its search, the conversions) over its
    moves (forced moves, played without searching, counted too)."""
    from arena.game.deck import shuffled_deck
    from arena.referee.play import InProcessHandle, Referee
    from bots.ace import AceBot
    from bots.policy import policy_bot

    ace = AceBot()
    ace.warm_up()
    opponent = policy_bot("greedy")()
    referee = Referee("classic", None)
    spent = 0.0
    moves = 0
    deal = 0
    while spent < seconds:
        deal += 1
        deck = shuffled_deck(deal, "classic")
        for seating in (0, 1):
            handles = [InProcessHandle(ace, "ace"), InProcessHandle(opponent, "greedy")]
            if seating:
                handles.reverse()
            record = referee.play_round(handles, deck=deck, seed=2 * deal + seating)
            seat = record.seats.index("ace")
            spent += record.times[seat]
            moves += record.moves[seat]
    return 1000.0 * spent / max(1, moves)


#: The simple reference bots (no search) that ``tournament_games_per_s`` plays.
SIMPLE_BOTS = ("random", "strategic", "knowledge", "greedy", "riskmatrix")


def tournament_games_per_s(seconds: float) -> float:
    """Games per second of a round-robin of the simple reference bots on ``fixed36`` (each
    played as often as needed to last about ``seconds``), every bot isolated in its own host,
    one worker per core, stored in a SQLite file: the whole path of ``arena tournament``
    once every worker has started its hosts."""
    import math
    import tempfile

    from arena.hosting.catalog import load_catalog
    from arena.hosting.sandbox import choose_sandbox
    from arena.tournament.pool import LocalPool, default_workers
    from arena.tournament.runner import (
        TournamentSpec,
        plan_tournament,
        run_tournament,
        worker_setup,
    )
    from arena.tournament.worker import BlockTask
    from leaderboard.store import Store

    sandbox = choose_sandbox("auto")
    catalog = load_catalog(sandbox)
    workers = default_workers()
    base = TournamentSpec(decks="fixed36", bots=SIMPLE_BOTS, max_faults=None)
    plan = plan_tournament(base, catalog)
    pool = LocalPool(worker_setup(plan, sandbox), workers)
    try:
        # every worker starts every bot's host on deck 0 first; those games are not counted
        warm_up = tuple(g for g in plan.schedule if g.deck == 0 and g.rotation == 0)
        for number in range(workers):
            pool.submit(BlockTask(-1 - number, warm_up))
        while pool.busy:
            pool.results(timeout=1.0)
        # how many repetitions fill about ``seconds``: time one pass over the schedule
        begun = time.perf_counter()
        for number in range(workers):
            pool.submit(BlockTask(-100 - number, plan.schedule[: len(plan.schedule) // workers]))
        while pool.busy:
            pool.results(timeout=1.0)
        per_pass = time.perf_counter() - begun
        repeat = max(1, math.ceil(seconds / max(per_pass, 1e-3)))
        timed = plan_tournament(TournamentSpec(**{**base.__dict__, "repeat": repeat}), catalog)
        with tempfile.TemporaryDirectory() as where:
            store = Store(f"sqlite:///{where}/bench.db")
            summary = run_tournament(timed, store, lambda: pool)
            store.close()
    finally:
        pool.terminate()
    return summary.played / summary.seconds


#: Seconds each field size of the scale benchmark plays at least (its hosts' starts included).
FIELD_SECONDS = 60.0
_field_results: dict[tuple[int, bool], tuple[float, float]] = {}


@dataclass
class FieldSettings:
    """How the field benchmarks run: ``workers`` (``None``: one per core) on the ``local``
    process pool or on a local ``ray`` instance (``arena bench --workers --executor``)."""

    workers: int | None = None
    executor: str = "local"


FIELD = FieldSettings()


def _process_tree_memory(root: int) -> int:
    """Bytes of memory (proportional set size, so shared pages count once) of ``root`` and
    every process below it."""
    from arena.hosting.cgroups import descendants

    total = 0
    for pid in [root, *descendants(root)]:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) << 10
                        break
        except OSError:
            continue
    return total


class _StopAfter:
    """A progress hook that ends a run (as Ctrl-C would) once it has lasted ``seconds``, and
    samples the memory of this process tree meanwhile."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.peak = 0
        self.done = 0
        self._stop = False
        import threading

        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, _process_tree_memory(os.getpid()))
            time.sleep(0.5)

    def update(self, done: int, total: int, faults: int) -> None:
        self.done = done
        if time.monotonic() >= self.deadline:
            raise KeyboardInterrupt

    def close(self) -> None:
        self._stop = True
        self._sampler.join()


def field_wheel(entrants: int, directory: str) -> str:
    """A wheel of the field package of ``entrants`` bots (:func:`arena.bench.field.install_field`)
    in ``directory``, for ``arena submit``."""
    from pathlib import Path

    from arena.bench.field import FIELD_BOT, install_field

    site = install_field(entrants, Path(directory) / "wheel-site")
    files = {
        path.relative_to(site).as_posix(): path.read_text()
        for path in sorted(site.rglob("*"))
        if path.is_file() and path.name != "METADATA"
    }
    return _wheel(directory, f"loveletter-{FIELD_BOT}", files)


def _field(entrants: int, seconds: float, submitted: bool = False) -> tuple[float, float]:
    """Games per second and peak memory (MiB) of a tournament of ``entrants`` copies of the
    scaffolded pure-Python bot on ``fixed36`` (repeated so that it lasts), with the default
    workers and sandbox, over at least ``seconds``: everything from starting the workers on,
    their hosts' starts included. The package is installed (on ``PYTHONPATH``) or, when
    ``submitted``, submitted with ``arena submit`` into a temporary store (and played from its
    snapshot, in bubblewrap)."""
    if (entrants, submitted) in _field_results:
        return _field_results[(entrants, submitted)]
    import math
    import tempfile
    from contextlib import ExitStack
    from pathlib import Path

    from arena.bench.field import field_names, install_field, use_field
    from arena.hosting.build import submit
    from arena.hosting.catalog import load_catalog
    from arena.hosting.sandbox import choose_sandbox
    from arena.hosting.submissions import Store as Submissions
    from arena.tournament.pool import LocalPool, default_workers
    from arena.tournament.runner import (
        TournamentSpec,
        plan_tournament,
        run_tournament,
        worker_setup,
    )
    from leaderboard.store import Store

    with ExitStack() as stack:
        where = stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-field-"))
        if submitted:
            stack.enter_context(_submissions(where))
            submit(field_wheel(entrants, where), Submissions())
            sandbox = choose_sandbox("bwrap")
        else:
            use_field(install_field(entrants, Path(where) / "site"))
            sandbox = choose_sandbox("auto")
        catalog = load_catalog(sandbox)
        pairs = entrants * (entrants - 1) // 2
        repeat = max(1, math.ceil(20_000 / (pairs * 72)))
        spec = TournamentSpec(
            decks="fixed36", bots=tuple(field_names(entrants)), repeat=repeat, max_faults=None
        )
        plan = plan_tournament(spec, catalog)
        store = Store(f"sqlite:///{where}/bench.db")
        setup = worker_setup(plan, sandbox)
        workers = FIELD.workers or default_workers()

        def executor() -> Any:
            if FIELD.executor == "ray":
                from arena.tournament.ray_executor import RayExecutor, plan_versions

                return RayExecutor(setup, None, workers, versions=plan_versions(plan))
            return LocalPool(setup, workers)

        watch = _StopAfter(seconds)
        try:
            summary = run_tournament(plan, store, executor, progress=watch)
        finally:
            watch.close()
            store.close()
    played = summary.total - summary.left - summary.stored_before
    _field_results[(entrants, submitted)] = (played / summary.seconds, watch.peak / (1 << 20))
    return _field_results[(entrants, submitted)]


def field_5_games_per_s(seconds: float) -> float:
    """Games per second of a 5-entrant field of the scaffolded pure-Python bot (see
    :func:`_field`)."""
    return _field(5, max(seconds, FIELD_SECONDS))[0]


def submitted_field_5_games_per_s(seconds: float) -> float:
    """The 5-entrant field played from a submission: the same package submitted with ``arena
    submit`` into a temporary store (see :func:`_field`); at least 85% of
    :func:`field_5_games_per_s`."""
    return _field(5, max(seconds, FIELD_SECONDS), submitted=True)[0]


def field_30_games_per_s(seconds: float) -> float:
    """The same with 30 entrants: at least half the 5-entrant figure."""
    return _field(30, max(seconds, FIELD_SECONDS))[0]


def field_100_games_per_s(seconds: float) -> float:
    """The same with 100 entrants: at least half the 5-entrant figure."""
    return _field(100, max(seconds, FIELD_SECONDS))[0]


def field_100_peak_mb(seconds: float) -> float:
    """Peak memory of every process of the 100-entrant run together, in MiB (proportional set
    size: pages shared between processes count once)."""
    return _field(100, max(seconds, FIELD_SECONDS))[1]


def field_300_games_per_s(seconds: float) -> float:
    """The same with 300 entrants (a club's field)."""
    return _field(300, max(seconds, FIELD_SECONDS))[0]


def field_300_peak_mb(seconds: float) -> float:
    """Peak memory of the 300-entrant run, in MiB (as :func:`field_100_peak_mb`)."""
    return _field(300, max(seconds, FIELD_SECONDS))[1]


def first_game_seconds_cold(seconds: float) -> float:
    """Seconds from starting the README's main command (``arena tournament --decks fixed36``,
    every installed bot) with empty caches (no compiled kernel, no solver table) until its
    first game is stored."""
    import signal
    import subprocess
    import sys
    import tempfile

    from leaderboard.store import Store

    with tempfile.TemporaryDirectory(prefix="arena-cold-") as where:
        env = {**os.environ, "XDG_CACHE_HOME": where, "ARENA_DB": f"sqlite:///{where}/a.db"}
        env.pop("NUMBA_CACHE_DIR", None)
        begun = time.monotonic()
        command = ["tournament", "--decks", "fixed36", "--quiet"]
        proc = subprocess.Popen(
            [sys.executable, "-c", "from arena.cli.main import main; main()", *command],
            env=env,
            cwd=where,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while proc.poll() is None and time.monotonic() - begun < 900:
                if os.path.exists(f"{where}/a.db") and _stored_games(Store(env["ARENA_DB"])):
                    return time.monotonic() - begun
                time.sleep(0.25)
            raise RuntimeError("the tournament stored no game")
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def serve_page_ms(seconds: float) -> float:
    """Milliseconds the slowest page of ``arena serve`` takes to load (its median over fresh
    connections) with a ladder of 111,200 games stored (:mod:`arena.bench.serve_pages`, which
    keeps every page's median in ``PAGE_MS``); needs the ``serve`` extra."""
    from arena.bench.serve_pages import serve_page_ms as measure

    return measure(seconds)


def _stored_games(store: Any) -> int:
    try:
        return sum(t.games for t in store.tournaments())
    except Exception:  # the schema may not exist yet
        return 0
    finally:
        store.close()


def _aec_moves_per_s(environment: Any, seconds: float) -> float:
    """Moves per second of a PettingZoo AEC environment of two-player classic rounds, every
    move a uniformly drawn legal action, in PettingZoo's loop (``agent_iter``, ``last``,
    ``step``; the ``None`` steps of the round's end and the next deal timed, not counted)."""
    import random

    import numpy as np

    choose = random.Random(0).random
    nonzero = np.flatnonzero

    def rounds(count: int) -> int:
        moves = 0
        for _ in range(count):
            environment.reset()
            for _agent in environment.agent_iter():
                seen, _, terminated, truncated, _ = environment.last()
                if terminated or truncated:
                    environment.step(None)
                    continue
                legal = nonzero(seen["action_mask"])
                environment.step(int(legal[int(choose() * len(legal))]))
                moves += 1
        return moves

    environment.reset(seed=1)
    rounds(100)
    return _repeat_until(seconds, lambda: rounds(1000))


def rl_aec_steps_per_s(seconds: float) -> float:
    """Moves per second of ``arena.rl.raw_env()`` (the PettingZoo environment, two-player
    classic) with random legal actions: each a kernel call that plays it and observes the next
    seat (docs/rl.md)."""
    from arena.rl import raw_env

    return _aec_moves_per_s(raw_env(), seconds)


def rl_aec_wrapped_steps_per_s(seconds: float) -> float:
    """The same through ``arena.rl.env()``: the environment inside PettingZoo's three usual
    wrappers for classic games (illegal moves, action bounds, call order)."""
    from arena.rl import env

    return _aec_moves_per_s(env(), seconds)


def rl_aec_api_steps_per_s(seconds: float) -> float:
    """Moves per second of ``arena.rl.env()`` as users step it through PettingZoo's public
    API, as ``api_test`` and training loops do: ``last()`` for the agent to move, its action
    drawn by ``env.action_space(agent).sample(mask)`` from the observation's action mask,
    ``step(action)``; at the round's end ``step(None)`` for each agent and ``reset()``."""
    from arena.rl import env

    environment = env()
    environment.reset(seed=1)
    environment.action_space("player_0").seed(0)
    environment.action_space("player_1").seed(1)

    def moves(count: int) -> int:
        done = 0
        while done < count:
            seen, _, terminated, truncated, _ = environment.last()
            if terminated or truncated:
                environment.step(None)
                if not environment.agents:
                    environment.reset()
                continue
            agent = environment.agent_selection
            environment.step(environment.action_space(agent).sample(seen["action_mask"]))
            done += 1
        return done

    moves(1000)
    return _repeat_until(seconds, lambda: moves(2000))


def rl_single_seat_steps_per_s(seconds: float) -> float:
    """Decisions per second of ``arena.rl.SingleSeatEnv("random")`` (Gymnasium, two-player
    classic, the learning seat drawn each round) with random legal actions: each step plays the
    seat's action and the compiled ``random`` policy's moves up to its next decision."""
    import random

    import numpy as np

    from arena.rl import SingleSeatEnv

    environment = SingleSeatEnv("random")
    choose = random.Random(0).random
    nonzero = np.flatnonzero
    environment.reset(seed=1)

    def episodes(count: int) -> int:
        steps = 0
        for _ in range(count):
            _, info = environment.reset()
            mask = info["action_mask"]
            terminated = False
            while not terminated:
                legal = nonzero(mask)
                _, _, terminated, _, info = environment.step(int(legal[int(choose() * len(legal))]))
                mask = info["action_mask"]
                steps += 1
        return steps

    episodes(100)
    return _repeat_until(seconds, lambda: episodes(1000))


def rl_vector_steps_per_s(seconds: float) -> float:
    """Environment steps per second of ``arena.rl.SingleSeatVectorEnv(64, "random")`` (Gymnasium's
    vector API, two-player classic, the learning seat drawn each round): ``num_envs`` steps a
    ``step()`` call, each a random legal action drawn from ``action_masks()`` (the step that
    deals a finished round again counted too, as Gymnasium's next-step autoreset makes it one)."""
    import numpy as np

    from arena.rl import SingleSeatVectorEnv

    environment = SingleSeatVectorEnv(64, "random")
    environment.reset(seed=1)
    uniform = np.random.default_rng(0).random

    def steps(count: int) -> int:
        for _ in range(count):
            masks = environment.action_masks()
            drawn = (uniform(len(masks)) * masks.sum(axis=1)).astype(np.int64)
            environment.step(np.argmax(masks.cumsum(axis=1) > drawn[:, None], axis=1))
        return count * environment.num_envs

    steps(100)
    return _repeat_until(seconds, lambda: steps(100))


def openspiel_steps_per_s(seconds: float) -> float:
    """Moves per second of the OpenSpiel game ``python_love_letter`` (two-player classic),
    random legal actions through pyspiel's ``apply_action``; the deal's sixteen chance nodes are
    timed, not counted."""
    import random

    import pyspiel

    import arena.rl.openspiel  # noqa: F401 - registers the game

    game = pyspiel.load_game("python_love_letter")
    rng = random.Random(0)

    def rounds(count: int) -> int:
        moves = 0
        for _ in range(count):
            state = game.new_initial_state()
            while state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(rng.choices(outcomes, [p for _, p in outcomes])[0][0])
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
                moves += 1
        return moves

    rounds(20)
    return _repeat_until(seconds, lambda: rounds(100))


BENCHMARKS: dict[str, Benchmark] = {
    b.key: b
    for b in (
        Benchmark("engine_rounds_per_s", engine_rounds_per_s, "rounds/s", Goal(">=", 1_000_000)),
        Benchmark("referee_moves_per_s", referee_moves_per_s, "moves/s", None),
        Benchmark("isolated_moves_per_s", isolated_moves_per_s, "moves/s", Goal(">=", 5_000)),
        Benchmark("host_start_seconds", host_start_seconds, "s", None),
        Benchmark("installed_host_start_seconds", installed_host_start_seconds, "s", None),
        Benchmark("submitted_host_start_seconds", submitted_host_start_seconds, "s", None),
        Benchmark("submit_seconds", submit_seconds, "s", None),
        Benchmark(
            "simulate_random_random_rounds_per_s",
            simulate_random_random_rounds_per_s,
            "rounds/s",
            Goal(">=", 500_000, note="1M in 2 s"),
        ),
        Benchmark(
            "simulate_strategic_random_rounds_per_s",
            simulate_strategic_random_rounds_per_s,
            "rounds/s",
            Goal(">=", 250_000, note="1M in 4 s"),
        ),
        Benchmark("rl_aec_steps_per_s", rl_aec_steps_per_s, "steps/s", Goal(">=", 50_000)),
        Benchmark("rl_aec_wrapped_steps_per_s", rl_aec_wrapped_steps_per_s, "steps/s", None),
        Benchmark("rl_aec_api_steps_per_s", rl_aec_api_steps_per_s, "steps/s", Goal(">=", 20_000)),
        Benchmark("rl_single_seat_steps_per_s", rl_single_seat_steps_per_s, "steps/s", None),
        Benchmark("rl_vector_steps_per_s", rl_vector_steps_per_s, "steps/s", None),
        Benchmark("openspiel_steps_per_s", openspiel_steps_per_s, "steps/s", None),
        Benchmark("dp_build_seconds", dp_build_seconds, "s", Goal("<=", 1.0)),
        Benchmark("dp_states", dp_states, "states", None),
        Benchmark("montecarlo_ms_per_round", montecarlo_ms_per_round, "ms", Goal("<=", 5)),
        Benchmark("ace_ms_per_move", ace_ms_per_move, "ms", Goal("<=", 100)),
        Benchmark(
            "ismcts_iterations_per_s", ismcts_iterations_per_s, "iterations/s", Goal(">=", 100_000)
        ),
        Benchmark(
            "pimc_iterations_per_s", pimc_iterations_per_s, "iterations/s", Goal(">=", 100_000)
        ),
        # The goal of a full reference round-robin under 10 minutes is timed separately (the
        # whole command, every bot): this figure plays the simple bots only.
        Benchmark(
            "tournament_games_per_s", tournament_games_per_s, "games/s", None, all_cores=True
        ),
        Benchmark("field_5_games_per_s", field_5_games_per_s, "games/s", None, all_cores=True),
        Benchmark(
            "submitted_field_5_games_per_s",
            submitted_field_5_games_per_s,
            "games/s",
            Goal(">=", 0.85, of="field_5_games_per_s"),
            all_cores=True,
        ),
        Benchmark(
            "field_30_games_per_s",
            field_30_games_per_s,
            "games/s",
            Goal(">=", 0.5, of="field_5_games_per_s"),
            all_cores=True,
        ),
        Benchmark(
            "field_100_games_per_s",
            field_100_games_per_s,
            "games/s",
            Goal(">=", 0.5, of="field_5_games_per_s"),
            all_cores=True,
        ),
        Benchmark("field_100_peak_mb", field_100_peak_mb, "MiB", Goal("<", 6_144), all_cores=True),
        Benchmark("field_300_games_per_s", field_300_games_per_s, "games/s", None, all_cores=True),
        Benchmark("field_300_peak_mb", field_300_peak_mb, "MiB", None, all_cores=True),
        Benchmark(
            "serve_page_ms",
            serve_page_ms,
            "ms",
            Goal("<=", 200, note="100,000 games stored"),
            all_cores=True,
        ),
        Benchmark(
            "first_game_seconds_cold",
            first_game_seconds_cold,
            "s",
            Goal("<=", 45),
            all_cores=True,
        ),
        # how fast commands answer (arena.bench.commands): whole commands, as a shell runs them
        Benchmark("cmd_help_s", C.cmd_help_s, "s", Goal("<=", 0.3), all_cores=True),
        Benchmark("cmd_bots_s", C.cmd_bots_s, "s", Goal("<=", 1.0), all_cores=True),
        Benchmark("cmd_play_s", C.cmd_play_s, "s", Goal("<=", 1.0), all_cores=True),
        Benchmark(
            "cmd_tournament_2_games_s",
            C.cmd_tournament_2_games_s,
            "s",
            Goal("<=", 2.5),
            all_cores=True,
        ),
        Benchmark(
            "cmd_leaderboard_100k_s",
            C.cmd_leaderboard_100k_s,
            "s",
            Goal("<=", 1.0, note="111,200 games stored"),
            all_cores=True,
        ),
        Benchmark(
            "cmd_report_json_100k_s",
            C.cmd_report_json_100k_s,
            "s",
            Goal("<=", 1.0, note="111,200 games stored"),
            all_cores=True,
        ),
    )
}


def machine() -> dict[str, object]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numba
    import numpy

    from arena.hosting.sandbox import choose_sandbox

    return {
        "sandbox": choose_sandbox("auto").kind,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "platform": platform.platform(),
    }


def run(keys: list[str] | None = None, seconds: float = 2.0) -> dict[str, float]:
    """Measure the named benchmarks (all when ``keys`` is empty): each on one core, except
    those that use every core."""
    chosen = keys or list(BENCHMARKS)
    results = {}
    for key in chosen:
        if BENCHMARKS[key].all_cores:
            results[key] = BENCHMARKS[key].measure(seconds)
            continue
        with one_core():
            results[key] = BENCHMARKS[key].measure(seconds)
    return results
