"""The memory a tournament's bots may use, planned against what the machine really has.

Each worker's hosts get one share of the memory available: the machine's (``MemAvailable``)
or, when tighter, what the arena's own control group and the groups above it leave it (their
limit less their use), less :data:`WORKER_RESERVE_MB` for each worker process itself. A game
needs one host per seat at once, each allowed ``--memory-mb``: when a share cannot hold that,
the tournament is refused with one line (:class:`MemoryPlanError`) before anything is stored;
without ``--workers``, fewer workers than cores are started when that is what fits.
The share becomes the worker's ``host_memory_mb``: the kernel's limit on its hosts together
(:func:`arena.hosting.cgroups.limit_hosts`) and the budget by which it keeps fewer hosts warm
(:class:`arena.tournament.worker.BlockPlayer`). The arena's own processes lower their
``oom_score_adj`` (:func:`protect_arena`) and hosts raise theirs, so that when memory runs out
anyway the kernel kills hosts, never the command, a worker or the referee.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from arena.hosting import cgroups
from arena.tournament.pool import default_workers

#: Memory (MiB) kept for each worker process (its interpreter, the referee, the engine's kernels).
WORKER_RESERVE_MB = 320
#: Where Linux says how much memory the machine can give without swapping.
MEMINFO = Path("/proc/meminfo")


class MemoryPlanError(ArenaError):
    """The tournament's workers cannot each run a game's hosts in the memory available."""


@dataclass(frozen=True)
class Available:
    """Memory available to the arena (MiB) and what limits it (``the machine`` or a control
    group)."""

    mb: int
    source: str


def available_memory() -> Available | None:
    """The memory available to this process now: the machine's ``MemAvailable``, or what its
    control groups leave it when that is less; ``None`` where neither can be read."""
    found: Available | None = None
    try:
        for line in MEMINFO.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                found = Available(int(value.split()[0]) >> 10, "the machine")
    except (OSError, ValueError, IndexError):
        found = None
    headroom = cgroups.memory_headroom()
    if headroom is not None and (found is None or headroom[0] >> 20 < found.mb):
        found = Available(headroom[0] >> 20, headroom[1])
    return found


def plan_host_memory(
    workers: int, players: int, memory_mb: int, available: Available | None
) -> int | None:
    """Memory (MiB) the hosts of each of ``workers`` workers may hold together, out of
    ``available``; ``None`` when nothing limits it (no memory limit per bot, or nothing
    known of the machine). Raises :class:`MemoryPlanError` (one line) when a share cannot
    hold one game's ``players`` hosts of ``memory_mb`` MiB each."""
    if available is None or memory_mb <= 0:
        return None
    share = (available.mb - workers * WORKER_RESERVE_MB) // workers
    if share >= players * memory_mb:
        return share
    most = (available.mb - WORKER_RESERVE_MB) // players
    if workers == 1:
        who, what = "a worker needs", f"and {WORKER_RESERVE_MB} MiB for itself"
        fix = f"lower --memory-mb to at most {most}" if most > 0 else "free some memory"
    else:
        who, what = f"{workers} workers each need", f"and {WORKER_RESERVE_MB} MiB a worker"
        fix = "lower --workers or --memory-mb" + (
            f" (one worker fits bots of at most {most} MiB)" if most > 0 else ""
        )
    raise MemoryPlanError(
        f"not enough memory: {who} {players} bots of --memory-mb {memory_mb} at once "
        f"({workers * players * memory_mb} MiB, {what}), but {available.source} leaves "
        f"{available.mb} MiB; {fix}"
    )


def plan_workers(
    workers: int | None, most: int, players: int, memory_mb: int, available: Available | None
) -> tuple[int, int | None]:
    """How many workers to start and each one's share (:func:`plan_host_memory`): ``workers``
    when given (or the refusal), else as many of ``most`` as fit, one at least."""
    if workers is not None:
        return workers, plan_host_memory(workers, players, memory_mb, available)
    for count in range(most, 1, -1):
        with contextlib.suppress(MemoryPlanError):
            return count, plan_host_memory(count, players, memory_mb, available)
    return 1, plan_host_memory(1, players, memory_mb, available)


def protect_arena() -> bool:
    """Make this process (and the workers it starts) the kernel's last choice when memory runs
    out (:data:`~arena.hosting.cgroups.ARENA_OOM_SCORE`; hosts raise their own to
    :data:`~arena.hosting.cgroups.HOST_OOM_SCORE`). False where lowering it is not allowed
    (it needs ``CAP_SYS_RESOURCE``): then only the hosts' higher scores protect the arena."""
    return cgroups.set_oom_score(cgroups.ARENA_OOM_SCORE)


def budget(workers: int | None, players: int, memory_mb: int) -> tuple[int, int | None]:
    """Plan this machine's workers (:func:`plan_workers`, one per core at most, against
    :func:`available_memory`) and protect the arena's processes (:func:`protect_arena`);
    returns the workers and each one's share."""
    planned = plan_workers(workers, default_workers(), players, memory_mb, available_memory())
    protect_arena()
    return planned
