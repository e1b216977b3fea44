"""The Ray executor: the blocks of a tournament played by Ray actors on a cluster's nodes.

:class:`RayExecutor` has the executor protocol of :class:`~arena.tournament.runner.Executor` (that
of :class:`~arena.tournament.pool.LocalPool`), so :func:`~arena.tournament.runner.run_tournament`
drives it exactly like the local pool: the coordinator plans, hands out blocks, checks them and is
the only one to write to the database; progress, Ctrl-C and resume are unchanged. See
``docs/cluster.md``.

- One actor per CPU of the cluster (``num_cpus=1`` each), each holding one
  :class:`~arena.tournament.worker.BlockPlayer`, so a bot's host process lives from block to block
  as in a local worker. An actor pins itself to a core of its node that no other actor of the node
  holds (a lock file per core), and its hosts inherit the pin (``docs/benchmarks.md``).
- The actors are synchronous with ``max_concurrency=1``: Ray runs every method of such an actor
  on the worker process's main thread, which is what :class:`~arena.hosting.hosted.HostHandle` needs
  (bubblewrap ends a sandboxed host when the *thread* that started it exits). The actor checks
  that each block runs on the thread that made it and fails the block if not.
- The sandbox is chosen on each node (:func:`~arena.hosting.sandbox.choose_sandbox` with the mode
  and limits asked for and the paths bots must not see), not sent from the coordinator, whose
  package paths need not exist there. A node without bubblewrap plays the arena's own bots
  unsandboxed, as a machine without it does, and fails a block with a third-party entrant,
  naming itself (a third-party bot never runs unsandboxed unless ``--sandbox none``).
- Before its first block an actor checks that its node has the arena and every entrant's
  distribution in the coordinator's versions (:func:`plan_versions`), and fails the block with a
  one-line message naming the difference if not.
- A block whose actor dies (the process killed, its node lost, the object lost with the node) is
  simply played again by another actor: its games were never stored, and the coordinator's
  disqualification checks accept a block whenever it comes back. A dead actor is replaced while
  the cluster has a free CPU for it. A block lost :data:`MAX_LOSSES` times is an error.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata as md
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError
from arena.hosting.sandbox import Limits, SandboxError, choose_sandbox
from arena.tournament.pool import WorkerError, default_workers
from arena.tournament.worker import BlockPlayer, BlockResult, BlockTask, WorkerSetup

if TYPE_CHECKING:
    from arena.tournament.runner import Plan

#: The distribution of the arena itself (its version must match on every node too).
ARENA_DISTRIBUTION = "loveletter-arena"
#: Times one block may lose its actor before the run fails.
MAX_LOSSES = 3
#: Object store of a Ray instance this process starts, in MiB (a block's records are small).
OBJECT_STORE_MB = 200
#: Seconds between looks for room to replace a dead actor.
HEAL_INTERVAL = 1.0
#: Seconds :meth:`RayExecutor.close` waits for the actors to stop their hosts.
CLOSE_TIMEOUT = 10.0

#: How to install what ``--executor ray`` needs.
INSTALL_HINT = "pip install 'loveletter-arena[ray]'"


class RayUnavailableError(ArenaError):
    """Ray is not installed, or the cluster cannot be reached or used."""


def require_ray() -> Any:
    """The ``ray`` module; a one-line :class:`RayUnavailableError` if it is not installed."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def plan_versions(plan: Plan) -> dict[str, str]:
    """The distributions every node must have for ``plan``, with their versions: the arena and
    each entrant's distribution (what is not installed as a distribution is left out)."""
    versions = {}
    with contextlib.suppress(md.PackageNotFoundError):  # run from a source tree
        versions[ARENA_DISTRIBUTION] = md.version(ARENA_DISTRIBUTION)
    for entrant in plan.entrants:
        if entrant.distribution and entrant.version:
            versions[entrant.distribution] = entrant.version
    return versions


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """The errors of a block that was lost with its actor, its worker or its node."""
    ex = ray.exceptions
    names = (
        "RayActorError",  # the actor died or cannot be reached (its node is gone)
        "ObjectLostError",  # the result was lost with its node (and its owner-died kin)
        "WorkerCrashedError",
        "NodeDiedError",
        "OutOfMemoryError",  # Ray's memory monitor killed the worker
        "LocalRayletDiedError",
    )
    return tuple(getattr(ex, n) for n in names if hasattr(ex, n))


# --- the actor (runs on a node) ----------------------------------------------------------------


def _claim_core() -> tuple[int | None, int | None]:
    """Pin the calling thread to a core of this node that no other arena actor holds; returns
    the core and the file descriptor whose lock holds it (kept open for the process's life)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
        folder = Path(tempfile.gettempdir()) / "loveletter-arena-cores"
        folder.mkdir(exist_ok=True)
    except (AttributeError, OSError):  # pragma: no cover - not Linux, or no /tmp
        return None, None
    for core in cores:
        try:
            fd = os.open(folder / f"{core}.lock", os.O_CREAT | os.O_RDWR, 0o666)
        except OSError:
            return None, None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        with contextlib.suppress(OSError):  # pinning is an optimisation
            os.sched_setaffinity(0, {core})
        return core, fd
    return None, None


def _in_ray_actor() -> bool:
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():  # (asking for the context would start Ray)
        return False
    try:
        return ray.get_runtime_context().get_actor_id() is not None
    except Exception:
        return False


@dataclass(frozen=True)
class NodeSetup:
    """What an actor needs besides the :class:`~arena.tournament.worker.WorkerSetup` (whose
    ``sandbox`` is left out): the sandbox mode, the limits of each bot and the paths bots must not
    see, to choose the sandbox on the node, the distribution versions to check, and whether to pin
    to a core."""

    sandbox_mode: str = "auto"
    hide: tuple[str, ...] = ()
    versions: tuple[tuple[str, str], ...] = ()
    pin: bool = True
    limits: Limits = field(default_factory=Limits)


class BlockActor:
    """The body of one Ray actor: a :class:`~arena.tournament.worker.BlockPlayer` made on the node
    at the first block, used from one thread only (see the module docstring)."""

    def __init__(self, setup: WorkerSetup, node: NodeSetup) -> None:
        self.setup = setup
        self.node = node
        self.thread = threading.get_ident()
        self.host = socket.gethostname()
        self.player: BlockPlayer | None = None
        self.core: int | None = None
        self._core_lock: int | None = None
        if _in_ray_actor() and threading.current_thread() is threading.main_thread():
            # Ctrl-C at the coordinator's terminal is the coordinator's to handle
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if node.pin:
            self.core, self._core_lock = _claim_core()

    def _check_versions(self) -> None:
        wrong = []
        for name, wanted in self.node.versions:
            try:
                here = md.version(name)
            except md.PackageNotFoundError:
                here = "not installed"
            if here != wanted:
                wrong.append(f"{name} {here} (the coordinator has {wanted})")
        if wrong:
            raise ArenaError(
                f"node {self.host} has {', '.join(wrong)}; install the same versions on "
                "every node (docs/cluster.md)"
            )

    def play(self, task: BlockTask) -> BlockResult:
        """Play ``task``. Before the first block, check this node's versions and choose its
        sandbox: a :class:`~arena.hosting.sandbox.SandboxError` naming the node where a
        third-party entrant could not be sandboxed here."""
        if threading.get_ident() != self.thread:
            raise RuntimeError(
                "a block actor ran on another thread than the one that made it; bot hosts "
                "must be used from the thread that started them (use a synchronous actor "
                "with max_concurrency=1)"
            )
        if self.player is None:
            self._check_versions()
            sandbox = choose_sandbox(self.node.sandbox_mode, self.node.limits, self.node.hide)
            try:
                self.player = BlockPlayer(replace(self.setup, sandbox=sandbox))
            except SandboxError as exc:
                raise SandboxError(f"node {self.host}: {exc}") from None
        return self.player.play(task)

    def where(self) -> tuple[str, int, int | None, int]:
        """The node's host name, this process's id, the core it is pinned to and the thread
        that plays (for tests and diagnostics)."""
        return self.host, os.getpid(), self.core, self.thread

    def close(self) -> None:
        """Stop every bot host."""
        if self.player is not None:
            self.player.close()
            self.player = None


# --- the executor (runs in the coordinator) ----------------------------------------------------


@dataclass
class _Slot:
    number: int
    actor: Any
    task: BlockTask | None = None


def _check_reachable(address: str) -> None:
    """Fail at once, rather than after Ray's long retries, when a ``HOST:PORT`` address does
    not answer (``auto`` and ``ray://`` addresses are left to Ray)."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise RayUnavailableError(
            f"no Ray cluster answers at {address}: {exc.strerror or exc} (is `ray start --head` "
            "running there? see docs/cluster.md)"
        ) from None


class RayExecutor:
    """Plays blocks on Ray actors (see the module docstring).

    ``address`` ``None`` (or empty) starts a local Ray instance with ``workers`` CPUs (default:
    one per available core), no dashboard and a small object store; anything else is passed to
    ``ray.init(address=...)`` (``auto``: the cluster this machine belongs to; ``HOST:PORT``: the
    head node, checked at once). If this process is already connected to Ray, that connection
    is used. There is one actor per CPU of the cluster, or ``workers``. ``sandbox_mode``
    (``auto``, ``bwrap``, ``none``; default: the kind of ``setup.sandbox``, else ``auto``) is
    chosen on each node with ``setup.sandbox``'s limits, refusing to play where one of ``hide``
    (the database, a deck file) lies inside what the node's sandbox shows; ``versions`` (see
    :func:`plan_versions`) are checked on each node; ``pin`` pins each actor to a core of its
    own. Ray is shut down by :meth:`close` and :meth:`terminate` only if this executor started
    it.
    """

    def __init__(
        self,
        setup: WorkerSetup,
        address: str | None = None,
        workers: int | None = None,
        *,
        sandbox_mode: str | None = None,
        hide: Sequence[str] | None = None,
        versions: Mapping[str, str] | None = None,
        pin: bool = True,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError("a Ray executor needs at least one actor")
        ray = require_ray()
        self._ray = ray
        self._lost_errors = _lost_errors(ray)
        self._count = 0
        self._slots: list[_Slot] = []
        self._flight: dict[Any, _Slot] = {}
        self._lost: deque[BlockTask] = deque()
        self._losses: dict[int, int] = {}
        self._healed = 0.0
        #: Blocks played again because their actor was lost.
        self.lost_blocks = 0
        #: Actors started to replace dead ones.
        self.replaced = 0
        self.owns_ray = False
        if not ray.is_initialized():
            self._connect(address, workers)
        if workers is None:
            workers = int(ray.cluster_resources().get("CPU", 0))
            if workers < 1:
                self.terminate()
                raise RayUnavailableError("the Ray cluster has no CPU to play on")
        mode = sandbox_mode or (setup.sandbox.kind if setup.sandbox is not None else "auto")
        limits = setup.sandbox.limits if setup.sandbox is not None else Limits()
        self._setup = replace(setup, sandbox=None)
        self._node = NodeSetup(
            mode, tuple(hide or ()), tuple(sorted((versions or {}).items())), pin, limits
        )
        self._remote = ray.remote(BlockActor).options(
            num_cpus=1, max_concurrency=1, max_restarts=0, max_task_retries=0
        )
        #: How many actors to keep.
        self.target = workers
        for _ in range(workers):
            self._start_actor()

    def _connect(self, address: str | None, workers: int | None) -> None:
        ray = self._ray
        if address:
            _check_reachable(address)
        try:
            if address:
                ray.init(address=address, logging_level=logging.WARNING)
            else:
                ray.init(
                    num_cpus=workers or default_workers(),
                    include_dashboard=False,
                    object_store_memory=OBJECT_STORE_MB * 1024 * 1024,
                    logging_level=logging.WARNING,
                )
                self.owns_ray = True
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"at {address}" if address else "here"
            text = " ".join(str(exc).split())
            raise RayUnavailableError(f"cannot start or reach Ray {where}: {text}") from None

    def _start_actor(self) -> _Slot:
        slot = _Slot(self._count, self._remote.remote(self._setup, self._node))
        self._count += 1
        self._slots.append(slot)
        return slot

    # --- the executor protocol -----------------------------------------------------------------

    @property
    def size(self) -> int:
        """How many actors there are (placed or waiting for room)."""
        return len(self._slots)

    @property
    def idle(self) -> int:
        """How many more blocks it can take now: free actors not needed for lost blocks."""
        free = sum(1 for s in self._slots if s.task is None)
        return max(0, free - len(self._lost))

    @property
    def free(self) -> int:
        """How many actors have no block (every block waits for none: the same as idle)."""
        return self.idle

    @property
    def busy(self) -> int:
        """How many blocks it is playing, or holds to play again."""
        return len(self._flight) + len(self._lost)

    def submit(self, task: BlockTask) -> None:
        """Give ``task`` to a free actor."""
        for slot in self._slots:
            if slot.task is None:
                self._send(slot, task)
                return
        raise RuntimeError("no idle actor")

    def _send(self, slot: _Slot, task: BlockTask) -> None:
        slot.task = task
        self._flight[slot.actor.play.remote(task)] = slot

    def actor_playing(self, block: int) -> Any | None:
        """The handle of the actor playing block ``block`` (``None`` if none is): for tests
        and tools that need to kill one."""
        for slot in self._flight.values():
            if slot.task is not None and slot.task.block == block:
                return slot.actor
        return None

    def results(self, timeout: float | None = None) -> list[BlockResult]:
        """The blocks finished within ``timeout`` seconds (waiting for the first one only).
        Blocks lost with their actor are sent to the next free actor meanwhile."""
        ray = self._ray
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._heal()
            self._resend()
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            step = HEAL_INTERVAL if left is None else min(left, HEAL_INTERVAL)
            if self._flight:
                refs = list(self._flight)
                ready, rest = ray.wait(refs, num_returns=1, timeout=step)
                if ready and rest:
                    ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
                finished = self._collect(ready)
                if finished:
                    return finished
            elif self._lost:
                time.sleep(step)
            else:
                return []
            if deadline is not None and time.monotonic() >= deadline:
                return []

    def _collect(self, ready: list[Any]) -> list[BlockResult]:
        ray = self._ray
        finished: list[BlockResult] = []
        for ref in ready:
            slot = self._flight.pop(ref)
            task = slot.task
            assert task is not None
            try:
                result = ray.get(ref)
            except self._lost_errors as exc:
                self._lose(slot, task, exc)
                continue
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, ArenaError):
                    raise WorkerError(str(cause)) from None
                text = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
                raise WorkerError(
                    f"actor {slot.number} failed in block {task.block}: {text.splitlines()[0]}"
                ) from None
            slot.task = None
            finished.append(result)
        return finished

    def _lose(self, slot: _Slot, task: BlockTask, exc: BaseException) -> None:
        """``slot``'s actor is gone with ``task``: drop the actor, keep the task to play again."""
        losses = self._losses.get(task.block, 0) + 1
        self._losses[task.block] = losses
        self._slots.remove(slot)
        with contextlib.suppress(Exception):
            self._ray.kill(slot.actor, no_restart=True)
        if losses >= MAX_LOSSES:
            text = " ".join(str(exc).split())[:200]
            raise WorkerError(
                f"block {task.block} was lost with its actor {losses} times; last: "
                f"{type(exc).__name__}: {text}"
            )
        self.lost_blocks += 1
        self._lost.append(task)
        self._healed = 0.0  # look for room for a new actor at once

    def _resend(self) -> None:
        """Give the lost blocks to free actors."""
        for slot in self._slots:
            if not self._lost:
                return
            if slot.task is None:
                self._send(slot, self._lost.popleft())

    def _heal(self) -> None:
        """Start actors in place of dead ones while the cluster has free CPUs for them."""
        missing = self.target - len(self._slots)
        now = time.monotonic()
        if missing <= 0 or now - self._healed < HEAL_INTERVAL:
            return
        self._healed = now
        try:
            free = int(self._ray.available_resources().get("CPU", 0))
        except Exception:  # pragma: no cover - the cluster is unreachable for a moment
            return
        for _ in range(min(missing, free)):
            self._start_actor()
            self.replaced += 1

    def close(self) -> None:
        """Let every actor stop its hosts, then end the actors (and Ray, if this started it)."""
        ray = self._ray
        stops = [s.actor.close.remote() for s in self._slots if s.task is None]
        if stops:
            with contextlib.suppress(Exception):
                ray.wait(stops, num_returns=len(stops), timeout=CLOSE_TIMEOUT)
        self.terminate()

    def terminate(self) -> None:
        """End every actor now (their bot hosts end with them), and Ray if this started it."""
        ray = self._ray
        for slot in self._slots:
            with contextlib.suppress(Exception):
                ray.kill(slot.actor, no_restart=True)
        self._slots.clear()
        self._flight.clear()
        self._lost.clear()
        if self.owns_ray:
            self.owns_ray = False
            with contextlib.suppress(Exception):
                ray.shutdown()
