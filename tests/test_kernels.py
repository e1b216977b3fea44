"""Compiled kernels: each bot's host loads its own, freshness follows what a kernel imports, and
sandboxed hosts load what the trusted compile step stored instead of compiling again."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.engine import jitcache
from arena.hosting import sandbox as S
from arena.hosting.catalog import load_catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.kernels import compile_kernels, is_compiled, trusted_bots
from arena.referee.play import InProcessHandle, Referee
from bots.policy import policies
from bots.uniform import UniformBot

ENGINE = Path(jitcache.__file__).resolve().parent


def source(name: str) -> Path:
    """The module file of reference bot ``name``."""
    path = policies()[name].path
    assert path is not None
    return path


BOTS = source("greedy").parent


def names(paths: tuple[Path, ...]) -> set[str]:
    return {f"{p.parent.name}/{p.name}" for p in paths}


def test_a_policy_depends_on_what_it_imports_and_nothing_else() -> None:
    greedy = names(jitcache.closure(source("greedy")))
    assert {"bots/greedy.py", "bots/views.py", "engine/rules.py"} <= greedy
    assert not {"bots/minimax.py", "bots/ismcts.py", "bots/simulate.py"} & greedy
    ismcts = names(jitcache.closure(source("ismcts")))
    assert {"bots/mcts_tree.py", "bots/determinize.py", "bots/playout.py"} <= ismcts
    assert "bots/greedy.py" not in ismcts
    # the simulator calls the policies through function pointers: its kernel holds none of them
    simulator = names(jitcache.closure(BOTS / "simulate.py"))
    assert not {f"bots/{source(n).name}" for n in policies()} & simulator
    assert names(jitcache.closure(ENGINE / "rules.py")) == {"engine/layout.py", "engine/rules.py"}


def test_editing_one_bot_changes_the_stamps_of_its_dependents_only(tmp_path: Path) -> None:
    """The stamp hashes the closure's files: the same closure with one file changed differs."""
    stamp = jitcache.closure_stamp(source("greedy"))
    assert stamp == jitcache.closure_stamp(source("greedy"))
    closures = {n: set(jitcache.closure(source(n))) for n in policies()}
    edited = source("greedy")
    affected = {n for n, files in closures.items() if edited in files}
    assert affected == {"greedy"}
    assert edited not in jitcache.closure(BOTS / "simulate.py")
    # dp falls back on the strategic player's rule: editing strategic recompiles both
    edited = source("strategic")
    assert {n for n, files in closures.items() if edited in files} == {"strategic", "dp"}


#: A reference bot outside the package's directory (its policy: the first or last legal action).
EDITED_BOT = """
from numba import types

from arena.engine.jit import njit
from bots.policy import PolicyInfo

BOT = PolicyInfo(name="edited", description="edited between two simulations")


@njit(cache=True)
def edited_policy(view, legal, nlegal, rng, params, table):
    return types.int64(legal[{index}])
"""


@pytest.mark.slow
def test_the_simulator_plays_a_bot_as_its_module_is_now(tmp_path: Path) -> None:
    """Edited between two runs, a bot plays its new policy in the simulator, whose own
    compiled kernel (in the cache) stays as it was."""
    code = (
        f"import bots; bots.__path__.append({str(tmp_path)!r})\n"
        "from bots.simulate import simulate\n"
        "print(simulate(['edited', 'random'], 3000, seed=4).wins)"
    )
    wins = []
    for index in ("0", "nlegal - 1"):
        (tmp_path / "edited.py").write_text(EDITED_BOT.format(index=index))
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        wins.append(run.stdout.strip())
    assert wins[0] != wins[1]


def test_a_host_imports_only_its_own_policy() -> None:
    code = (
        "import sys; from bots.policy import policy_bot; policy_bot('greedy')()\n"
        "print(sorted(m for m in sys.modules if m.startswith('bots.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bots.greedy', 'bots.policy', 'bots.views']"
    # as a host builds it: through the plugin, which reads every bot's declaration
    code = (
        "import sys; from arena.hosting.plugins import load_registry\n"
        "load_registry(only='reference').build('greedy')[1].warm_up()\n"
        "print(sorted(m for m in sys.modules if m.startswith('bots.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bots.greedy', 'bots.plugin', 'bots.policy', 'bots.views']"


def test_a_reference_host_plays_without_scipy(tmp_path: Path) -> None:
    # numba would import SciPy only to probe for linear algebra, which no reference kernel uses
    seen = tmp_path / "seen"
    code = (
        "import sys; from arena.hosting import host\n"
        "host.main(['--plugin', 'loveletter-arena:reference', '--list'])\n"
        "from arena.hosting.plugins import load_registry\n"
        "load_registry(only='reference').build('greedy')[1].warm_up()\n"
        f"open({str(seen)!r}, 'w').write(repr(['numba' in sys.modules, sys.modules['scipy']]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert '"name":"greedy"' in out.stdout
    assert seen.read_text() == "[True, None]"


def test_a_pure_python_host_imports_neither_numba_nor_numpy() -> None:
    code = (
        "import sys; import arena.hosting.host; from arena.hosting.plugins import load_registry\n"
        "from arena.game import Observation\n"
        "load_registry(only='reference').build('uniform')\n"
        "print('numba' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_the_trusted_step_takes_every_bot_of_ours_with_kernels_and_only_those() -> None:
    catalog = load_catalog(S.choose_sandbox("none"))
    taken = {b.name for b in trusted_bots(catalog.bots.values())}
    assert "ace" in taken  # a plain bot, but its search runs kernels
    assert "greedy" in taken and "uniform" not in taken  # no kernels: nothing to compile


@pytest.mark.parametrize("name", ["greedy", "ace"])
def test_sandboxed_hosts_load_what_the_trusted_step_compiled(
    name: str, monkeypatch: pytest.MonkeyPatch, bubblewrap: None
) -> None:
    box = S.choose_sandbox("bwrap")
    entry = load_catalog(box).bots[name]
    assert compile_kernels(trusted_bots([entry]), box) == {}
    assert is_compiled(name)
    # numba's own cache log, let through to the host for this test only
    monkeypatch.setattr(S, "ENV_KEEP", (*S.ENV_KEEP, "NUMBA_DEBUG_CACHE"))
    monkeypatch.setenv("NUMBA_DEBUG_CACHE", "1")
    host = HostHandle(name, entry.plugin, sandbox=box)
    try:
        begun = time.monotonic()
        Referee(move_time=30).play_round([host, InProcessHandle(UniformBot(), "u")], seed=3)
        assert time.monotonic() - begun < 30
        time.sleep(0.1)
        log = host.log.text()
    finally:
        host.close()
    assert "[cache] data loaded from '/tmp/numba/" in log
    assert "data saved" not in log  # nothing compiled in the sandbox
