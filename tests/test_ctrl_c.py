"""Ctrl-C held back where it must not cut: a block of games is stored whole.

A ``KeyboardInterrupt`` raised inside the store's transaction left SQLite's lock for the final
status write to wait out (30 s), and the run ended in "database is locked". Here the Ctrl-C comes
while a real run stores its first block, in the middle of the store's call.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.ctrl_c import ctrl_c_held
from arena.tournament.pool import LocalPool
from arena.tournament.runner import TournamentSpec, plan_tournament, run_tournament, worker_setup
from leaderboard.store import Store


@pytest.fixture(autouse=True)
def ctrl_c_raises() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test (a test runner started in the background has
    SIGINT ignored, and then so would these)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_while_held_is_raised_when_the_block_ends() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), ctrl_c_held():
        signal.raise_signal(signal.SIGINT)
        done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_nothing_is_raised_without_a_ctrl_c() -> None:
    with ctrl_c_held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_while_a_block_is_stored_keeps_the_block_and_ends_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = choose_sandbox("none")
    store = Store(f"sqlite:///{tmp_path}/held.db")
    plan = plan_tournament(
        TournamentSpec(decks="random:4:5", bots=("random", "greedy"), seed=1),
        load_catalog(sandbox),
        store,
    )
    original = Store.record_block

    def interrupted(self: Store, *args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C, in the middle of storing the block
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "record_block", interrupted)
    setup = worker_setup(plan, sandbox)
    begun = time.monotonic()
    summary = run_tournament(plan, store, lambda: LocalPool(setup, 1), block_size=2)
    took = time.monotonic() - begun
    assert summary.interrupted and not summary.complete
    tid = summary.tournament_id
    assert len(store.stored_games(tid)) == 2  # the block being stored, whole
    assert summary.left == 6
    assert store.tournament(tid).status == "interrupted"
    assert took < 20, f"the interrupted run took {took:.1f} s (a lock waited out?)"
