"""Tournaments on Ray: the records of a run on Ray actors are those of a local run.

These start a real local Ray instance (two CPUs, no dashboard, a small object store) and skip,
saying why, where Ray is not installed (it is an optional extra: ``loveletter-arena[ray]``; the
``test`` extra installs it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from stored_records import stored

from arena.cli.main import cli
from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.pool import LocalPool
from arena.tournament.runner import (
    Plan,
    TournamentSpec,
    plan_tournament,
    run_tournament,
    worker_setup,
)
from arena.tournament.worker import BlockResult, BlockTask
from leaderboard.store import Store

SANDBOX = choose_sandbox("none")
#: A small tournament with a crashing bot, so that disqualification (which depends on the
#: order blocks come back in) is part of what must come out the same.
SPEC = TournamentSpec(
    decks="random:3:1",
    bots=("honest", "uniform", "crasher"),
    seed=11,
    max_faults=2,
    secret=161803398874989484820458683436563811772,  # the Ray run's too
)
RAY_OPTIONS = {
    "num_cpus": 2,
    "include_dashboard": False,
    "object_store_memory": 200 * 1024 * 1024,
}


def _ray() -> Any:
    return pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")


_planned: dict[str, Any] = {}


def planned(tmp_path: Path) -> tuple[Plan, dict[str, tuple[Any, ...]]]:
    """The plan of :data:`SPEC` and the records of a local run of it (made once per module:
    the faulty bots must be installed, so this is not a module fixture)."""
    if not _planned:
        plan = plan_tournament(SPEC, load_catalog(SANDBOX))
        store = Store(f"sqlite:///{tmp_path}/local.db")
        setup = worker_setup(plan, SANDBOX)
        summary = run_tournament(plan, store, lambda: LocalPool(setup, 1), block_size=3)
        assert summary.complete
        _planned.update(plan=plan, records=stored(store, summary.tournament_id))
    return _planned["plan"], _planned["records"]


def test_without_ray_the_command_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    result = CliRunner().invoke(cli, ["tournament", "--executor", "ray", "--db", "sqlite://"])
    assert result.exit_code == 2
    assert "pip install 'loveletter-arena[ray]'" in result.output
    assert "Traceback" not in result.output


def test_ray_address_needs_the_ray_executor() -> None:
    result = CliRunner().invoke(cli, ["tournament", "--ray-address", "auto", "--db", "sqlite://"])
    assert result.exit_code == 2
    assert "--ray-address needs --executor ray" in result.output


@pytest.mark.slow
def test_a_tournament_on_ray_stores_the_records_of_a_local_run(
    faulty_bots: Path, tmp_path: Path
) -> None:
    ray = _ray()
    if ray.is_initialized():  # pragma: no cover - another test left it running
        ray.shutdown()
    plan, expected = planned(tmp_path)
    assert len(plan.schedule) == 18
    url = f"sqlite:///{tmp_path}/ray.db"
    result = CliRunner().invoke(
        cli,
        [
            "tournament", "--executor", "ray", "--workers", "2", "--sandbox", "none",
            "--decks", SPEC.decks, "--bots", ",".join(SPEC.bots), "--seed", str(SPEC.seed),
            "--secret", str(SPEC.secret), "--max-faults", "2", "--db", url, "--quiet",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "a local Ray instance, 2 actors" in result.output
    store = Store(url)
    (detail,) = store.tournaments()
    assert detail.status == "finished"
    assert stored(store, detail.id) == expected
    assert not ray.is_initialized()  # the executor started Ray, so it shut it down


class KillFirstActor:
    """An executor that kills the actor playing the first block right after handing it out."""

    def __init__(self, inner: Any, ray: Any) -> None:
        self.inner = inner
        self.ray = ray
        self.killed: list[int] = []

    @property
    def idle(self) -> int:
        return int(self.inner.idle)

    @property
    def free(self) -> int:
        return int(self.inner.free)

    @property
    def busy(self) -> int:
        return int(self.inner.busy)

    def submit(self, task: BlockTask) -> None:
        self.inner.submit(task)
        if not self.killed:
            self.ray.kill(self.inner.actor_playing(task.block), no_restart=True)
            self.killed.append(task.block)

    def results(self, timeout: float | None = None) -> list[BlockResult]:
        return list(self.inner.results(timeout))

    def close(self) -> None:
        self.inner.close()

    def terminate(self) -> None:
        self.inner.terminate()


@pytest.mark.slow
def test_a_block_lost_with_its_actor_is_played_again(faulty_bots: Path, tmp_path: Path) -> None:
    ray = _ray()
    from arena.tournament.ray_executor import RayExecutor, plan_versions

    plan, expected = planned(tmp_path)
    if not ray.is_initialized():
        ray.init(**RAY_OPTIONS)
    try:
        made: list[Any] = []

        def factory() -> KillFirstActor:
            executor = RayExecutor(
                worker_setup(plan, SANDBOX), sandbox_mode="none", versions=plan_versions(plan)
            )
            made.append(executor)
            return KillFirstActor(executor, ray)

        store = Store(f"sqlite:///{tmp_path}/ray.db")
        summary = run_tournament(plan, store, factory, block_size=2)
        (executor,) = made
        assert summary.complete
        assert executor.target == 2  # one actor per CPU of the cluster
        assert executor.lost_blocks == 1
        assert not executor.owns_ray  # it joined the running instance, which stays up
        assert ray.is_initialized()
        assert stored(store, summary.tournament_id) == expected
    finally:
        ray.shutdown()


def test_a_node_without_bubblewrap_refuses_a_third_party_entrant_naming_itself(
    faulty_bots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from arena.hosting import sandbox as S
    from arena.tournament.ray_executor import BlockActor, NodeSetup

    plan, _ = planned(tmp_path)
    S._bwrap_error.cache_clear()
    monkeypatch.setattr(S.shutil, "which", lambda name: None)  # no bubblewrap on this node
    actor = BlockActor(worker_setup(plan, None), NodeSetup("auto", pin=False))
    try:
        with pytest.raises(
            S.SandboxError,
            match=rf"^node {socket.gethostname()}: bot 'honest' .* without a sandbox: "
            r"bubblewrap \(bwrap\) is not installed; install bubblewrap, or pass --sandbox none",
        ):
            actor.play(BlockTask(0, plan.schedule[:1]))
    finally:
        actor.close()
        S._bwrap_error.cache_clear()


def test_an_actor_refuses_a_node_with_other_versions(faulty_bots: Path, tmp_path: Path) -> None:
    from arena.errors import ArenaError
    from arena.tournament.ray_executor import BlockActor, NodeSetup

    plan, _ = planned(tmp_path)
    actor = BlockActor(
        worker_setup(plan, None),
        NodeSetup("none", versions=(("arena-test-faulty-bots", "0.9"),), pin=False),
    )
    with pytest.raises(ArenaError, match=r"arena-test-faulty-bots 1\.0 \(the coordinator has 0\.9"):
        actor.play(BlockTask(0, plan.schedule[:1]))
    actor.close()
    ray = sys.modules.get("ray")
    assert ray is None or not ray.is_initialized()  # an actor outside Ray does not start Ray


@pytest.mark.slow
def test_with_the_sandbox_ray_plays_the_records_of_a_local_run(
    bubblewrap: None, tmp_path: Path
) -> None:
    """The issue's command, small: the reference bots in the sandbox on Ray actors play the
    records of a local run. (Ray's workers block ``SIGINT``; hosts inherited the blocked signal,
    their held fork servers were refused for it, every bot was disqualified, and the command
    exited 0 with 120 games stored without a result.)"""
    ray = _ray()
    if ray.is_initialized():  # pragma: no cover - another test left it running
        ray.shutdown()
    args = [
        "tournament", "--sandbox", "bwrap", "--decks", "random:3:3",
        "--bots", "random,strategic,knowledge", "--seed", "4", "--secret", "5", "--quiet",
        "--workers", "2",
    ]  # fmt: skip
    records = []
    for executor in ("local", "ray"):
        url = f"sqlite:///{tmp_path}/{executor}.db"
        result = CliRunner().invoke(cli, [*args, "--executor", executor, "--db", url])
        assert result.exit_code == 0, result.output
        store = Store(url)
        (detail,) = store.tournaments()
        records.append(stored(store, detail.id))
        games = [g.record for g in store.stored_games(detail.id)]
        assert len(games) == 18 and not [g.faults for g in games if g.faults]
    assert records[0] == records[1]
