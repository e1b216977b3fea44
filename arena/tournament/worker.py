"""Playing blocks of scheduled games: what one tournament worker does, wherever it runs.

A :class:`BlockPlayer` keeps one host process per entrant it has met (at most ``max_hosts``,
the least recently used closed first) and plays each game of a :class:`BlockTask` under one
referee. Disqualification follows the fault counts the coordinator hands over with the block
(the faults of every game before it that it knows of) plus the faults met inside the block; the
coordinator checks the outcome against the full count (see
:mod:`arena.tournament.disqualification`).

Host processes must be started from the thread that keeps using them (see
:class:`~arena.hosting.hosted.HostHandle`), so a player is used from one thread only.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.errors import BotDisqualifiedError, MemoryShortageError
from arena.hosting import cgroups
from arena.hosting.hosted import MEMORY_MB, HostHandle
from arena.hosting.kernels import wait_compiled
from arena.hosting.sandbox import Sandbox, choose_sandbox
from arena.referee.play import INTERNAL, UNCOUNTED, Referee, unexpected_error
from arena.referee.records import Fault, GameRecord
from arena.tournament.schedule import ScheduledGame

#: Host processes a worker keeps alive at most (each holds a Python interpreter and its bot).
MAX_HOSTS = 40
#: Memory the host processes of one worker may hold together (MiB), by default: 40% of the
#: machine's memory shared among the default number of workers.
HOST_MEMORY_SHARE = 0.4
#: Times a game whose host the kernel killed for the machine's memory shortage is played again
#: (with fresh hosts) before it is recorded as the arena's, unplayed.
SHORTAGE_REPLAYS = 2
#: The ``end_reason`` of a game not played because every seat was disqualified.
SKIPPED = "skipped"


def default_host_memory_mb(workers: int | None = None) -> int:
    """Memory (MiB) one worker's hosts may hold together by default: :data:`HOST_MEMORY_SHARE`
    of the machine's memory, shared among ``workers`` (default: one per core)."""
    count = workers or len(os.sched_getaffinity(0))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # pragma: no cover - not Linux
        total = 8 << 30
    return max(512, int(total * HOST_MEMORY_SHARE / count) >> 20)


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker of a tournament needs: the rules, limits, entrants and decks.

    ``entrants`` maps each entrant name (its canonical bot spec) to the plugin that registers
    it, as its host is told to load it (``DISTRIBUTION:ENTRY_POINT``, see
    :func:`~arena.hosting.plugins.plugin_ref`); ``decks`` are card values, top first, indexed by
    deck position; ``sandbox`` is how hosts start (default:
    :func:`~arena.hosting.sandbox.choose_sandbox` ``("auto")``). A worker keeps at most
    ``max_hosts`` hosts, using at most ``host_memory_mb`` together (measured where control groups
    count it), alive between games: before each game, the hosts it does not seat, as measured,
    and its seats' hosts at their full ``memory_mb`` fit in ``host_memory_mb``, which is also
    the kernel's limit on the worker's hosts together (:func:`~arena.hosting.cgroups.limit_hosts`;
    the arena plans it with :mod:`arena.tournament.memory`).
    """

    variant: str
    move_time: float | None
    max_faults: int | None
    entrants: dict[str, str]
    decks: tuple[tuple[int, ...], ...]
    sandbox: Sandbox | None = None
    memory_mb: int = MEMORY_MB
    max_hosts: int = MAX_HOSTS
    host_memory_mb: int = field(default_factory=default_host_memory_mb)
    #: The arena's own bots whose kernels the trusted compile step is still compiling while the
    #: tournament starts: a worker waits for a bot's kernels before starting its host.
    await_kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class BlockTask:
    """A block of games to play in order, and every entrant's fault count before the block."""

    block: int
    games: tuple[ScheduledGame, ...]
    fault_counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GameOutcome:
    """How one scheduled game went: its record (for a game skipped because every seat was
    disqualified, one with :data:`SKIPPED` as its ``end_reason``; ``None`` only from older
    workers) and the entrants that were disqualified when it began."""

    index: int
    record: GameRecord | None
    disqualified: frozenset[str]


@dataclass(frozen=True)
class BlockResult:
    """The outcomes of a block's games, in order, and the seconds the block took."""

    block: int
    outcomes: tuple[GameOutcome, ...]
    seconds: float


def faulted(record: GameRecord | None) -> list[str]:
    """The entrants that committed a fault in ``record`` that counts towards disqualification
    (a disqualification, or a host killed for the machine's memory shortage, is not one)."""
    if record is None:
        return []
    return [record.seats[f.seat] for f in record.faults if f.kind not in UNCOUNTED]


def skipped(record: GameRecord | None) -> bool:
    """Whether ``record`` is of a game skipped because every seat was disqualified."""
    return record is None or record.end_reason == SKIPPED


class BlockPlayer:
    """Plays :class:`BlockTask` s for one tournament with long-lived bot hosts."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.sandbox = setup.sandbox if setup.sandbox is not None else choose_sandbox()
        for name, plugin in setup.entrants.items():  # e.g. a cluster node without bubblewrap
            distribution, colon, _ = plugin.partition(":")
            self.sandbox.check(name, distribution if colon else "")
        self.referee = Referee(setup.variant, setup.move_time, setup.max_faults)
        self._hosts: OrderedDict[str, HostHandle] = OrderedDict()
        hierarchy = self.sandbox.hierarchy if self.sandbox.isolated else None
        if hierarchy is not None and setup.host_memory_mb:
            # without it the hosts' scores still make the kernel kill them first
            with contextlib.suppress(cgroups.CgroupError):
                cgroups.limit_hosts(hierarchy, setup.host_memory_mb << 20)

    def _handles(self, seats: Sequence[str]) -> list[HostHandle]:
        """The hosts of ``seats`` (kept alive from earlier games where possible), after closing
        the least recently used others while the worker holds more than ``max_hosts`` hosts or
        the others' memory (measured) and the seats' full limits together are more than
        ``host_memory_mb``."""
        handles = []
        added = False
        for name in seats:
            handle = self._hosts.pop(name, None)
            if handle is None:
                added = True
                plugin = self.setup.entrants.get(name)
                if plugin is None:
                    raise KeyError(f"entrant {name!r} is not in this tournament")
                bot = name.partition("[")[0]
                if bot in self.setup.await_kernels:
                    wait_compiled(bot)
                handle = HostHandle(
                    name, plugin, sandbox=self.sandbox, memory_mb=self.setup.memory_mb
                )
            self._hosts[name] = handle
            handles.append(handle)
        if not added:  # the pool only grows when a host is added: nothing to measure
            return handles
        total, limit = self.setup.host_memory_mb << 20, self.setup.memory_mb << 20
        fewer = len(self._hosts) <= self.setup.max_hosts
        if limit and fewer and len(self._hosts) * limit <= total:
            return handles  # every host at its full limit fits: nothing to measure
        used = {name: h.memory_bytes() or 0 for name, h in self._hosts.items()}
        for name in seats:  # they may grow to their limits during the game; the others wait
            used[name] = max(used[name], limit)
        for name in list(self._hosts):
            if len(self._hosts) <= self.setup.max_hosts and sum(used.values()) <= total:
                break
            if name in seats:
                continue
            self._hosts.pop(name).close()
            used.pop(name)
        return handles

    def play(self, task: BlockTask) -> BlockResult:
        """Play the block's games in order and return their outcomes."""
        begun = time.perf_counter()
        self.referee.fault_counts = dict(task.fault_counts)
        outcomes = [self._play_one(game) for game in task.games]
        return BlockResult(task.block, tuple(outcomes), time.perf_counter() - begun)

    def _play_one(self, game: ScheduledGame) -> GameOutcome:
        """Play ``game``. A game whose every seat is disqualified is not played: it is recorded
        as :data:`SKIPPED`, every seat with its ``disqualified`` fault. A game in which the
        kernel killed a host for the machine's memory shortage (a ``shortage`` fault, no bot's
        doing) is played again (a fresh host replaces the one killed), and after
        :data:`SHORTAGE_REPLAYS` replays recorded unplayed with a ``shortage`` fault for every
        seat still in the run. A game the referee
        cannot play (an error that is no bot's fault, which it did not record itself) is
        recorded with an ``internal`` fault for every seat still in the run and no winner, its
        hosts are replaced, and the block goes on. An unplayed game has no winner and is not
        rated."""
        out = frozenset(n for n in game.seats if self.referee.disqualified(n))
        if len(out) == len(game.seats):
            message = "not played: every seat was disqualified"
            return GameOutcome(game.index, self._unplayed(game, out, message, SKIPPED), out)
        counts = dict(self.referee.fault_counts)
        for _ in range(1 + SHORTAGE_REPLAYS):
            self.referee.fault_counts = dict(counts)
            try:
                handles: Sequence[HostHandle] = self._handles(game.seats)
                deck = self.setup.decks[game.deck]
                for host in handles:  # a process never plays a deck twice (arena.hosting.epochs)
                    host.new_game(deck)
                record = self.referee.play_round(handles, deck=deck, seed=game.seed)
            except Exception as exc:
                message = f"the game could not be played: {unexpected_error(exc)}"
                self._drop_hosts(game.seats)
                for name in game.seats:
                    if name not in out:
                        counts[name] = counts.get(name, 0) + 1
                self.referee.fault_counts = counts  # exactly the faults of the record
                return GameOutcome(game.index, self._unplayed(game, out, message, INTERNAL), out)
            short = [f for f in record.faults if f.kind == MemoryShortageError.kind]
            if not short:
                return GameOutcome(game.index, record, out)
        self.referee.fault_counts = counts
        message = (
            f"the game could not be played: {short[0].message} "
            f"({1 + SHORTAGE_REPLAYS} attempts; no bot's fault)"
        )
        return GameOutcome(
            game.index, self._unplayed(game, out, message, MemoryShortageError.kind), out
        )

    def _drop_hosts(self, names: Sequence[str]) -> None:
        """Close the hosts of ``names`` (the next game starts fresh ones)."""
        for name in names:
            handle = self._hosts.pop(name, None)
            if handle is not None:
                with contextlib.suppress(Exception):
                    handle.close()

    def _unplayed(
        self, game: ScheduledGame, out: frozenset[str], message: str, reason: str
    ) -> GameRecord:
        """The record of ``game`` not played for ``reason`` (its ``end_reason``): no move, no
        winner, each seat's fault (with ``message``) ``disqualified`` for the entrants in
        ``out`` and ``reason`` for the others."""
        faults = [
            Fault(seat, BotDisqualifiedError.kind if name in out else reason, message, 0)
            for seat, name in enumerate(game.seats)
        ]
        n = len(game.seats)
        decks = self.setup.decks
        return GameRecord(
            variant=self.setup.variant,
            players=n,
            seats=list(game.seats),
            deck=list(decks[game.deck]) if game.deck < len(decks) else [],
            first=0,
            seed=game.seed,
            events=[],
            actions=[],
            winners=[],
            end_reason=reason,
            times=[0.0] * n,
            moves=[0] * n,
            faults=faults,
        )

    def close(self) -> None:
        """Stop every host."""
        while self._hosts:
            _, handle = self._hosts.popitem()
            handle.close()
