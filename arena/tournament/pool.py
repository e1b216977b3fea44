"""The local executor: worker processes on this machine, each playing one block at a time.

Each worker is pinned to one core, and the bot hosts it starts inherit the pin: a referee and
the bots it waits for then hand the processor to each other on the same core, which is several
times faster than waking a process on another core (docs/benchmarks.md). Workers ignore Ctrl-C
(the coordinator decides what to keep), from their very start, and end when the coordinator
goes away.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from arena.errors import ArenaError
from arena.tournament.ctrl_c import ctrl_c_held
from arena.tournament.worker import BlockPlayer, BlockResult, BlockTask, WorkerSetup


class WorkerError(ArenaError):
    """A worker process failed: it died, or playing a block raised an unexpected error."""


def available_cores() -> list[int]:
    """The cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return list(range(os.cpu_count() or 1))


def default_workers() -> int:
    """The default number of workers: one per available core."""
    return len(available_cores())


@contextlib.contextmanager
def _starting_held() -> Iterator[None]:
    """Hold Ctrl-C back while workers start (:func:`arena.tournament.ctrl_c.ctrl_c_held`): a
    worker started in it inherits the held signal and lets it go only once it ignores it (a
    Ctrl-C while its interpreter still imports would print a traceback)."""
    # multiprocessing's resource tracker, started with the first worker, unblocks Ctrl-C
    resource_tracker.ensure_running()
    with ctrl_c_held():
        yield


def _receive_tasks(conn: Connection, tasks: queue.SimpleQueue[BlockTask | None]) -> None:
    """Move each block the coordinator sends into ``tasks``, then ``None`` once it stops or
    is gone."""
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            task = None
        tasks.put(task)
        if task is None:
            return


def _worker_main(conn: Connection, setup: WorkerSetup | None, core: int | None) -> None:
    """A worker's life: play each block sent until told to stop or the coordinator is gone.
    A worker started early (``setup`` ``None``, :func:`prestart`) loads the engine's kernels
    first and then waits for its setup, the first thing sent (``None``: not needed after all).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a Ctrl-C held since the start
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if core is not None:
        with contextlib.suppress(AttributeError, OSError):  # pinning is an optimisation
            os.sched_setaffinity(0, {core})
    if setup is None:
        from arena.game import Game

        Game(2)  # the engine's kernels load while the coordinator plans
        try:
            setup = conn.recv()
        except (EOFError, OSError):
            return
        if setup is None:
            return
    player = BlockPlayer(setup)
    tasks: queue.SimpleQueue[BlockTask | None] = queue.SimpleQueue()
    # the pipe is always read, so the coordinator never waits to send the next block while
    # this worker sends the last one's results (each waiting for the other)
    threading.Thread(target=_receive_tasks, args=(conn, tasks), daemon=True).start()
    try:
        while True:
            task = tasks.get()
            if task is None:
                return
            try:
                result = player.play(task)
            except Exception as exc:
                lines = traceback.format_exception(exc)
                conn.send(("error", f"{type(exc).__name__}: {exc}", "".join(lines)))
                return
            conn.send(("done", result))
    finally:
        player.close()
        from arena.hosting.cgroups import sweep

        sweep([os.getpid()])


#: Blocks a worker holds at once: the one it plays and the next, already sent, so that it never
#: waits while the coordinator stores what it played.
QUEUED = 2


@dataclass
class _Worker:
    number: int
    process: BaseProcess
    conn: Connection
    tasks: deque[BlockTask] = field(default_factory=deque)


#: Workers started before their tournament was planned (:func:`prestart`), by core.
_early: list[tuple[int | None, BaseProcess, Connection]] = []


def prestart(pin: bool = True) -> None:
    """Start the first worker process now, before the tournament is planned: it imports and
    loads the engine while this process reads the catalog and plans (seconds of a small
    tournament's start), then waits for its setup; the :class:`LocalPool` made next adopts it.
    One that is not adopted is stopped by :func:`discard_prestarted`, or when this process
    exits (it is a daemon)."""
    if _early:
        return
    context = multiprocessing.get_context("spawn")
    core = available_cores()[0] if pin else None
    ours, theirs = context.Pipe()
    process = context.Process(
        target=_worker_main, args=(theirs, None, core), name="arena-worker-0", daemon=True
    )
    with _starting_held():
        process.start()
    theirs.close()
    _early.append((core, process, ours))


def discard_prestarted() -> None:
    """Stop the workers :func:`prestart` started that no pool adopted (at once: without a
    setup they hold nothing, no host and no block)."""
    while _early:
        _, process, conn = _early.pop()
        process.kill()
        process.join(5)
        conn.close()


def _adopt(core: int | None, setup: WorkerSetup) -> tuple[BaseProcess, Connection] | None:
    """A worker :func:`prestart` started on ``core``, given ``setup``; ``None`` if none is."""
    for index, (early_core, process, conn) in enumerate(_early):
        if early_core == core and process.is_alive():
            del _early[index]
            try:
                conn.send(setup)
            except (OSError, ValueError):
                process.kill()
                return None
            return process, conn
    return None


class LocalPool:
    """``workers`` worker processes for one tournament (see the module docstring).

    Hand out blocks with :meth:`submit` while :attr:`idle` is non-zero (each worker takes
    :data:`QUEUED` blocks: the next one waits in its pipe while it plays one), collect finished
    blocks with :meth:`results`; :meth:`close` lets the workers finish and stop their hosts,
    :meth:`terminate` stops everything at once.
    """

    def __init__(self, setup: WorkerSetup, workers: int, pin: bool = True) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        context = multiprocessing.get_context("spawn")
        cores = available_cores()
        self._workers: list[_Worker] = []
        for number in range(workers):
            core = cores[number % len(cores)] if pin else None
            adopted = _adopt(core, setup)
            if adopted is not None:
                self._workers.append(_Worker(number, *adopted))
                continue
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_worker_main,
                args=(theirs, setup, core),
                name=f"arena-worker-{number}",
                daemon=True,
            )
            with _starting_held():
                process.start()
            theirs.close()
            self._workers.append(_Worker(number, process, ours))
        discard_prestarted()

    @property
    def size(self) -> int:
        """How many workers there are."""
        return len(self._workers)

    @property
    def idle(self) -> int:
        """How many more blocks the workers can take now."""
        return sum(QUEUED - len(w.tasks) for w in self._workers)

    @property
    def free(self) -> int:
        """How many workers have no block."""
        return sum(1 for w in self._workers if not w.tasks)

    @property
    def busy(self) -> int:
        """How many blocks the workers hold (playing, or next in line)."""
        return sum(len(w.tasks) for w in self._workers)

    def submit(self, task: BlockTask) -> None:
        """Give ``task`` to the worker with the fewest blocks (a free one first)."""
        worker = min(self._workers, key=lambda w: len(w.tasks))
        if len(worker.tasks) >= QUEUED:
            raise RuntimeError("no idle worker")
        worker.tasks.append(task)
        worker.conn.send(task)

    def results(self, timeout: float | None = None) -> list[BlockResult]:
        """The blocks finished within ``timeout`` seconds (waiting for the first one only)."""
        waiting: dict[Any, _Worker] = {}
        for worker in self._workers:
            if worker.tasks:
                waiting[worker.conn] = worker
                waiting[worker.process.sentinel] = worker
        if not waiting:
            return []
        finished: list[BlockResult] = []
        answered: set[int] = set()  # a worker's pipe and its sentinel may both be ready
        for ready in wait(list(waiting), timeout):
            worker = waiting[ready]
            if worker.number in answered:
                continue
            answered.add(worker.number)
            block = worker.tasks[0].block
            if ready is not worker.conn and not worker.conn.poll():
                worker.process.join(1)
                raise WorkerError(
                    f"worker {worker.number} died (exit code {worker.process.exitcode}) "
                    f"while playing block {block}"
                )
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join(1)
                raise WorkerError(
                    f"worker {worker.number} died (exit code {worker.process.exitcode}) "
                    f"while playing block {block}"
                ) from None
            if message[0] == "error":
                raise WorkerError(f"worker {worker.number} failed in block {block}: {message[1]}")
            worker.tasks.popleft()
            finished.append(message[1])
        return finished

    def close(self, timeout: float = 10.0) -> None:
        """Ask every worker to stop (after its block) and wait; terminate the ones that hang."""
        for worker in self._workers:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
        for worker in self._workers:
            worker.process.join(timeout)
        self.terminate()

    def terminate(self) -> None:
        """Kill every worker now; their bot hosts end with them, and their hosts' control
        groups are removed here (a killed worker cannot remove them)."""
        for worker in self._workers:
            if worker.process.is_alive():
                worker.process.kill()
        for worker in self._workers:
            worker.process.join(5)
            worker.conn.close()
        from arena.hosting.cgroups import sweep

        sweep(w.process.pid for w in self._workers if w.process.pid is not None)
