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
from bots.policy import POLICIES, module_file
from bots.uniform import UniformBot

BOTS = Path(module_file("greedy")).parent
ENGINE = Path(jitcache.__file__).resolve().parent


def names(paths: tuple[Path, ...]) -> set[str]:
    return {f"{p.parent.name}/{p.name}" for p in paths}


def test_a_policy_depends_on_what_it_imports_and_nothing_else() -> None:
    greedy = names(jitcache.closure(module_file("greedy")))
    assert {"bots/greedy.py", "bots/views.py", "engine/rules.py"} <= greedy
    assert not {"bots/minimax.py", "bots/ismcts.py", "bots/dispatch.py"} & greedy
    ismcts = names(jitcache.closure(module_file("ismcts")))
    assert {"bots/mcts_tree.py", "bots/determinize.py", "bots/playout.py"} <= ismcts
    assert "bots/greedy.py" not in ismcts
    # the simulator's dispatcher calls every policy, so it depends on all of them
    dispatch = names(jitcache.closure(BOTS / "dispatch.py"))
    assert {f"bots/{module_file(n).name}" for n in POLICIES} <= dispatch
    assert names(jitcache.closure(ENGINE / "rules.py")) == {"engine/layout.py", "engine/rules.py"}


def test_editing_one_bot_changes_the_stamps_of_its_dependents_only(tmp_path: Path) -> None:
    """The stamp hashes the closure's files: the same closure with one file changed differs."""
    stamp = jitcache.closure_stamp(module_file("greedy"))
    assert stamp == jitcache.closure_stamp(module_file("greedy"))
    closures = {n: set(jitcache.closure(module_file(n))) for n in POLICIES}
    edited = module_file("greedy")
    affected = {n for n, files in closures.items() if edited in files}
    assert affected == {"greedy"}
    assert edited in jitcache.closure(BOTS / "dispatch.py")


def test_a_host_imports_only_its_own_policy() -> None:
    code = (
        "import sys; from bots.policy import policy_bot; policy_bot('greedy')()\n"
        "print(sorted(m for m in sys.modules if m.startswith('bots.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bots.greedy', 'bots.policy', 'bots.views']"


def test_a_pure_python_host_imports_neither_numba_nor_numpy() -> None:
    code = (
        "import sys; import arena.hosting.host; from arena.hosting.plugins import load_registry\n"
        "from arena.game import Observation\n"
        "load_registry(only='reference').build('uniform')\n"
        "print('numba' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_sandboxed_hosts_load_what_the_trusted_step_compiled(
    monkeypatch: pytest.MonkeyPatch, bubblewrap: None
) -> None:
    box = S.choose_sandbox("bwrap")
    entry = load_catalog(box).bots["greedy"]
    assert compile_kernels(trusted_bots([entry]), box) == {}
    assert is_compiled("greedy")
    # numba's own cache log, let through to the host for this test only
    monkeypatch.setattr(S, "ENV_KEEP", (*S.ENV_KEEP, "NUMBA_DEBUG_CACHE"))
    monkeypatch.setenv("NUMBA_DEBUG_CACHE", "1")
    host = HostHandle("greedy", entry.plugin, sandbox=box)
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
