"""Playing blocks of scheduled games: what one tournament worker does, wherever it runs.

A :class:`BlockPlayer` keeps one host process per entrant it has met (at most ``max_hosts``,
the least recently used closed first) and plays each game of a :class:`BlockTask` under one
referee. Disqualification follows the fault counts the coordinator hands over with the block
(the faults of every game before it that it knows of) plus the faults met inside the block; the
coordinator checks the outcome against the full count (see
:mod:`arena.tournament.disqualification`).

Hosts start in the background where control groups keep a start off the CPU that play needs,
and a block's games whose hosts are ready go first (:mod:`arena.tournament.start_budget`: a
slow bot's restarts keep the field waiting ``restart_time`` seconds at most). A player is used
from one thread only.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial

from arena.errors import BotDisqualifiedError, MemoryShortageError
from arena.hosting import cgroups
from arena.hosting.hosted import MEMORY_MB, HostHandle
from arena.hosting.kernels import wait_compiled
from arena.hosting.sandbox import Sandbox, choose_sandbox
from arena.referee.play import Referee, unexpected_error
from arena.referee.records import INTERNAL, UNCOUNTED, Fault, GameRecord
from arena.tournament.schedule import ScheduledGame
from arena.tournament.start_budget import RESTART_TIME, BudgetedHost

#: Host processes a worker keeps alive at most (each holds a Python interpreter and its bot).
MAX_HOSTS = 40
#: How many of a block's next games a worker looks at for one whose hosts are ready.
LOOKAHEAD = 8
#: The most of a bot's output (stdout and stderr) a block reports, the latest bytes.
OUTPUT_BYTES = 8 * 1024
#: Seconds between looks when every one of them waits for a host to start.
WAIT_STEP = 0.02
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
    the arena plans it with :mod:`arena.tournament.memory`). A bot's games wait for its host's
    restart after a fault at most ``restart_time`` seconds (see
    :mod:`arena.tournament.start_budget`).
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
    restart_time: float = RESTART_TIME


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
    """The outcomes of a block's games, in order, the seconds the block took, and what each
    entrant's bot wrote to stdout or stderr meanwhile (at most :data:`OUTPUT_BYTES` each, the
    latest; entrants that wrote nothing left out)."""

    block: int
    outcomes: tuple[GameOutcome, ...]
    seconds: float
    output: dict[str, str] = field(default_factory=dict)


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
        self._hosts: OrderedDict[str, BudgetedHost] = OrderedDict()
        self._marks: dict[str, int] = {}  # per entrant, how much of its host's log was taken
        self._output: dict[str, str] = {}  # what hosts closed during this block wrote
        hierarchy = self.sandbox.hierarchy if self.sandbox.isolated else None
        if hierarchy is not None and setup.host_memory_mb:
            # without it the hosts' scores still make the kernel kill them first
            with contextlib.suppress(cgroups.CgroupError):
                cgroups.limit_hosts(hierarchy, setup.host_memory_mb << 20)

    def _handles(self, seats: Sequence[str], kept: Collection[str] = ()) -> list[BudgetedHost]:
        """The hosts of ``seats`` (kept alive from earlier games where possible), after closing
        the least recently used others while the worker holds more than ``max_hosts`` hosts or
        the others' memory (measured) and the full limits of the seats and of every host still
        starting (it may be building its bot's tables) are together more than
        ``host_memory_mb``; the hosts ``kept`` are not closed for them (see :meth:`_fit`)."""
        new = [name for name in seats if name not in self._hosts]
        handles = []
        for name in seats:
            handle = self._hosts.pop(name, None)
            if handle is None:
                plugin = self.setup.entrants.get(name)
                if plugin is None:
                    raise KeyError(f"entrant {name!r} is not in this tournament")
                bot = name.partition("[")[0]
                compiled = partial(wait_compiled, bot) if bot in self.setup.await_kernels else None
                host = HostHandle(
                    name, plugin, sandbox=self.sandbox, memory_mb=self.setup.memory_mb
                )
                handle = BudgetedHost(host, self.setup.restart_time, compiled)
            self._hosts[name] = handle
            handles.append(handle)
        if not new:  # the pool only grows when a host is added: nothing to measure
            return handles
        total = self.setup.host_memory_mb << 20
        if self._all_fit():
            return handles
        used = self._claims(seats, self._hosts)
        for name in list(self._hosts):
            if len(self._hosts) <= self.setup.max_hosts and sum(used.values()) <= total:
                break
            if name in seats or name in kept:
                continue
            self._close(name)
            used.pop(name)
        return handles

    def _all_fit(self) -> bool:
        """Whether the hosts held, each at its full limit, fit the worker's budget."""
        limit = self.setup.memory_mb << 20
        return bool(limit) and (
            len(self._hosts) <= self.setup.max_hosts
            and len(self._hosts) * limit <= self.setup.host_memory_mb << 20
        )

    def _claims(self, seats: Collection[str], names: Iterable[str]) -> dict[str, int]:
        """The memory each of the hosts ``names`` (held ones) may take: what it uses now, or
        its full limit for the ``seats`` (they may grow to it during the game) and for hosts
        still starting."""
        limit = self.setup.memory_mb << 20
        used = {}
        for name in names:
            handle = self._hosts[name]
            used[name] = handle.memory_bytes() or 0
            if name in seats or not handle.ready:
                used[name] = max(used[name], limit)
        return used

    def _fit(self, seats: Sequence[str], kept: Collection[str]) -> bool:
        """Whether hosts for ``seats`` fit beside the hosts ``kept`` (those of the games looked
        at before, which may be starting) with every other host closed: a game looked at
        ahead gets its hosts only so, or they would close the others' or overrun the budget."""
        if all(name in self._hosts for name in seats):
            return True
        limit = self.setup.memory_mb << 20
        staying = {name for name in (*seats, *kept) if name in self._hosts}
        taken = sum(self._claims(seats, staying).values())
        taken += limit * len(set(seats) - staying)
        staying.update(seats)
        return len(staying) <= self.setup.max_hosts and taken <= self.setup.host_memory_mb << 20

    def play(self, task: BlockTask) -> BlockResult:
        """Play the block's games and return their outcomes, in the block's order.

        A game whose hosts are still starting waits while later games whose hosts are ready
        are played (see :mod:`arena.tournament.start_budget`), but only where that cannot
        change who is disqualified in either: each game is played with exactly the fault
        counts of the games before it in the block's order.
        """
        begun = time.perf_counter()
        left = list(task.games)
        outcomes: dict[int, GameOutcome] = {}
        before = dict(task.fault_counts)  # with the faults of every game before left[0]
        ahead: dict[int, list[str]] = {}  # who faulted in each game played ahead of left[0]
        while left:
            game, counts = self._next(before, ahead, left)
            left.remove(game)
            self.referee.fault_counts = counts
            outcomes[game.index] = self._play_one(game)
            ahead[game.index] = faulted(outcomes[game.index].record)
            while ahead and (not left or min(ahead) < left[0].index):
                for name in ahead.pop(min(ahead)):
                    before[name] = before.get(name, 0) + 1
        ordered = tuple(outcomes[game.index] for game in task.games)
        for name in self._hosts:
            self._take_output(name)
        output, self._output = self._output, {}
        return BlockResult(task.block, ordered, time.perf_counter() - begun, output)

    def _take_output(self, name: str) -> None:
        """Add what ``name``'s host wrote since last taken to the block's output."""
        handle = self._hosts.get(name)
        if handle is None:
            return
        log = handle.host.log
        text, self._marks[name] = log.since(self._marks.get(name, 0), OUTPUT_BYTES)
        if text:
            both = self._output.get(name, "") + text
            self._output[name] = both[-OUTPUT_BYTES:]

    def _close(self, name: str) -> None:
        """Close ``name``'s host, keeping what it wrote; the next game starts a fresh one."""
        self._take_output(name)
        self._marks.pop(name, None)
        handle = self._hosts.pop(name, None)
        if handle is not None:
            with contextlib.suppress(Exception):
                handle.close()

    def _next(
        self, before: dict[str, int], ahead: dict[int, list[str]], left: list[ScheduledGame]
    ) -> tuple[ScheduledGame, dict[str, int]]:
        """The next game to play, and the fault counts to play it with, among the first
        :data:`LOOKAHEAD` of ``left`` whose disqualifications the games not yet played cannot
        change (starting the hosts of those it looks at): the first whose hosts are ready,
        else the first whose hosts are ready or late (a late bot forfeits it), else, once
        one is, after waiting (which counts against the restart allowance of every host
        waited for)."""
        while True:
            late: tuple[ScheduledGame, dict[str, int]] | None = None
            waiting: list[BudgetedHost] = []
            looked: set[str] = set()  # the seats of the games looked at: their hosts stay
            for game in left[:LOOKAHEAD]:
                counts = self._counts(before, ahead, game, left)
                if counts is None:
                    continue
                playing = [n for n in game.seats if not self._out(n, counts)]
                if looked and not self._fit(playing, looked):
                    continue
                hosts = self._handles(playing, looked) if playing else []
                looked.update(playing)
                for host in hosts:
                    host.begin()
                if all(host.ready for host in hosts):
                    return game, counts
                if late is None and all(host.ready or host.late for host in hosts):
                    late = game, counts
                waiting += [host for host in hosts if not host.ready]
            if late is not None:
                return late
            idle = time.monotonic()
            time.sleep(WAIT_STEP)
            for host in set(waiting):  # the field waits for them: their restarts' allowance
                host.charge(time.monotonic() - idle)

    def _counts(
        self,
        before: dict[str, int],
        ahead: dict[int, list[str]],
        game: ScheduledGame,
        left: list[ScheduledGame],
    ) -> dict[str, int] | None:
        """The fault counts ``game`` is played with (those of every game before it in the
        block's order), or ``None`` while a game before it not played yet could still change
        whether one of its seats is disqualified."""
        counts = dict(before)
        for index, names in ahead.items():
            if index < game.index:
                for name in names:
                    counts[name] = counts.get(name, 0) + 1
        unknown: dict[str, int] = {}
        for earlier in left:
            if earlier.index >= game.index:
                break
            for name in earlier.seats:
                unknown[name] = unknown.get(name, 0) + 1
        for name in game.seats:
            worst = {name: counts.get(name, 0) + unknown.get(name, 0)}
            if self._out(name, counts) != self._out(name, worst):
                return None
        return counts

    def _out(self, name: str, counts: dict[str, int]) -> bool:
        """Whether ``name`` is disqualified with ``counts``."""
        limit = self.setup.max_faults
        return limit is not None and counts.get(name, 0) >= limit

    def _play_one(self, game: ScheduledGame) -> GameOutcome:
        """Play ``game``. A game whose every seat is disqualified is not played: it is recorded
        as :data:`SKIPPED`, every seat with its ``disqualified`` fault. A game in which the
        kernel killed a host for the machine's memory shortage (a ``shortage`` fault, no bot's
        doing) is played again (a fresh host replaces the one killed), and after
        :data:`SHORTAGE_REPLAYS` replays recorded unplayed with a ``shortage`` fault for every
        seat still in the run. A game the referee
        cannot play (an error that is no bot's fault, recorded by the referee as an ``internal``
        fault of one seat or raised) is recorded with an ``internal`` fault for every seat still
        in the run and no winner, counted against no bot, its hosts are replaced, and the block
        goes on. An unplayed game has no winner and is not rated."""
        out = frozenset(n for n in game.seats if self.referee.disqualified(n))
        if len(out) == len(game.seats):
            message = "not played: every seat was disqualified"
            return GameOutcome(game.index, self._unplayed(game, out, message, SKIPPED), out)
        counts = dict(self.referee.fault_counts)
        for _ in range(1 + SHORTAGE_REPLAYS):
            self.referee.fault_counts = dict(counts)
            try:
                handles: Sequence[BudgetedHost] = self._handles(game.seats)
                deck = self.setup.decks[game.deck]
                for host in handles:  # a process never plays a deck twice (arena.hosting.epochs)
                    host.new_game(deck)
                record = self.referee.play_round(handles, deck=deck, seed=game.seed)
            except Exception as exc:
                message = f"the game could not be played: {unexpected_error(exc)}"
                self._drop_hosts(game.seats)
                self.referee.fault_counts = counts  # the arena's failure counts against no bot
                return GameOutcome(game.index, self._unplayed(game, out, message, INTERNAL), out)
            internal = [f for f in record.faults if f.kind == INTERNAL]
            if internal:  # the referee failed with one bot: the game has no fair result
                message = f"the game could not be played: {internal[0].message}"
                self._drop_hosts(game.seats)
                self.referee.fault_counts = counts
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
            self._close(name)

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
