"""Which entrants are disqualified in which game, decided in schedule order.

With ``max_faults`` set, an entrant is disqualified in game ``i`` when its faults in the games
before ``i`` (in schedule order) reach ``max_faults``; a game in which every seat is
disqualified is skipped (stored unplayed). Faults that are no bot's doing (a disqualification,
a host killed for the machine's memory shortage) do not count. Workers play blocks in parallel
knowing only the faults of games finished when their block was handed out, so the coordinator
checks each finished block here before storing it:

- a game's correct disqualifications are *determined* when they come out the same whether each
  unresolved earlier game holds no fault of an entrant or one (a seat commits at most one fault
  in a game: a fault knocks it out of the round);
- a block whose games are all determined and were played that way is stored;
- a block played otherwise is played again once every game before it is resolved (then the
  counts handed over are exact);
- anything else waits.

Without ``max_faults`` nothing is ever disqualified and every block is stored as it comes, so
the records never depend on the number of workers or the order blocks finish in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum

from arena.tournament.schedule import ScheduledGame


class Verdict(Enum):
    """What to do with a finished block."""

    STORE = "store"
    REPLAY = "replay"
    WAIT = "wait"


class DisqualificationLedger:
    """Fault counts over a schedule, as games get resolved (stored, or known to be skipped)."""

    def __init__(self, games: Sequence[ScheduledGame], max_faults: int | None) -> None:
        if max_faults is not None and max_faults < 1:
            raise ValueError("max_faults must be at least 1")
        self.games = games
        self.max_faults = max_faults
        self._faulted: list[tuple[str, ...] | None] = [None] * len(games)
        self.frontier = 0  # every game before it is resolved
        self._counts: dict[str, int] = {}  # faults in the games before the frontier

    def resolve(self, index: int, faulted: Iterable[str]) -> None:
        """Game ``index`` is resolved: stored with faults by ``faulted`` (or skipped: none)."""
        self._faulted[index] = tuple(faulted)
        while self.frontier < len(self.games) and self._faulted[self.frontier] is not None:
            for name in self._faulted[self.frontier] or ():
                self._counts[name] = self._counts.get(name, 0) + 1
            self.frontier += 1

    def resolved(self, index: int) -> bool:
        """Whether game ``index`` is resolved."""
        return self._faulted[index] is not None

    def exact_before(self, index: int) -> bool:
        """Whether every game before ``index`` is resolved."""
        return self.frontier >= index

    def _bounds(self, index: int) -> tuple[dict[str, int], dict[str, int]]:
        """Least and greatest possible fault counts of the games before ``index``."""
        low = dict(self._counts)
        high = dict(self._counts)
        for i in range(self.frontier, index):
            self._add(low, high, i)
        return low, high

    def _add(self, low: dict[str, int], high: dict[str, int], i: int) -> None:
        """Add game ``i``'s faults to both bounds; unresolved, each seat may have faulted."""
        done = self._faulted[i]
        for name in done if done is not None else ():
            low[name] = low.get(name, 0) + 1
        for name in done if done is not None else self.games[i].seats:
            high[name] = high.get(name, 0) + 1

    def known_counts(self, index: int) -> dict[str, int]:
        """Faults in the resolved games before ``index``: what a worker starting there gets
        (exact when :meth:`exact_before`)."""
        return self._bounds(index)[0]

    def at_risk(self, block: Sequence[ScheduledGame]) -> bool:
        """Whether a fault already known of one of ``block``'s entrants, with the games not yet
        resolved before the block, could disqualify it in the block: a block handed out now
        might then be played again (see :meth:`verdict`). Entrants without a known fault are
        taken not to fault, so that blocks of bots that never fault are handed out early."""
        if self.max_faults is None:
            return False
        low, high = self._bounds(block[0].index)
        within: dict[str, int] = {}
        for game in block:
            for name in game.seats:
                within[name] = within.get(name, 0) + 1
        return any(
            low.get(name, 0) > 0
            and low.get(name, 0) != high.get(name, 0)
            and high.get(name, 0) + count >= self.max_faults
            for name, count in within.items()
        )

    def verdict(
        self,
        block: Sequence[ScheduledGame],
        played: Sequence[tuple[frozenset[str], Sequence[str]]],
    ) -> Verdict:
        """Check a finished block: for each of its games (in order) the entrants it was played
        with as disqualified and the entrants that faulted in it."""
        if self.max_faults is None:
            return Verdict.STORE
        limit = self.max_faults
        low, high = self._bounds(block[0].index)
        position = block[0].index
        wrong = False
        for game, (used, faults) in zip(block, played, strict=True):
            # resolved games between this block's games (a resumed schedule has gaps)
            for i in range(position, game.index):
                self._add(low, high, i)
            position = game.index + 1
            for name in game.seats:
                out_low = low.get(name, 0) >= limit
                out_high = high.get(name, 0) >= limit
                if out_low != out_high:
                    return Verdict.WAIT
                if out_low != (name in used):
                    wrong = True
            for name in faults:
                low[name] = low.get(name, 0) + 1
                high[name] = high.get(name, 0) + 1
        if not wrong:
            return Verdict.STORE
        return Verdict.REPLAY if self.exact_before(block[0].index) else Verdict.WAIT
