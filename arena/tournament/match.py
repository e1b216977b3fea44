"""Head-to-head matches: bot A against bot B on paired decks, as a 2-entrant tournament.

A match is a tournament of two entrants (:mod:`arena.tournament.runner`): its schedule plays deck by
deck, each deck in both seatings, so the two games of a deck (a *pair*) come one after the
other. :class:`MatchTally` follows the stored games and counts a pair once both of its games
are stored, in deck order: pair ``k`` counts only once pairs ``0 .. k-1`` do, so the sequence
of pairs the test sees, and therefore its verdict, is the same whatever the number of workers
and however often the match was interrupted. The test (:class:`leaderboard.sprt.Sprt`) or the
fixed number of pairs decides when the match is over; :meth:`MatchTally.add` is the
``stop`` hook of :func:`arena.tournament.runner.run_tournament`. See ``docs/match.md``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

from arena.errors import ArenaError
from arena.referee.records import GameRecord
from arena.tournament.progress import ProgressLine, format_duration, format_time
from leaderboard.sprt import (
    PAIR_TOTALS,
    PairCounts,
    Sprt,
    Verdict,
    count_pairs,
    estimate,
    pair_count_path,
    pair_total,
    summary_line,
)
from leaderboard.store import GameEntry, StoredGame

#: ``--max-games`` when not given: the most games a sequential test may take.
DEFAULT_MAX_GAMES = 2000
#: ``--games`` when not given and there is no test.
DEFAULT_GAMES = 200
#: Games per block: small, so that a match stops soon after its test decides.
MATCH_BLOCK = 16


class MatchError(ArenaError):
    """A match that cannot be played as asked."""


def parse_sprt(text: str) -> tuple[float, float]:
    """``ELO0,ELO1`` as two finite numbers with ``ELO0 < ELO1``; :class:`MatchError` else."""
    parts = text.split(",")
    try:
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise MatchError(f"--sprt: expected ELO0,ELO1 (two numbers), got {text!r}") from None
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise MatchError(f"--sprt: the Elo bounds must be finite, got {text!r}")
    if elo0 >= elo1:
        raise MatchError(f"--sprt: ELO0 must be below ELO1, got {elo0:g} and {elo1:g}")
    return elo0, elo1


def match_test(
    sprt: tuple[float, float] | None, alpha: float, beta: float, max_pairs: int
) -> Sprt | None:
    """The sequential test of ``sprt`` (``None``: no test) with its error rates, checked:
    ``alpha`` and ``beta`` must be in (0, 0.5)."""
    for name, value in (("--alpha", alpha), ("--beta", beta)):
        if not 0.0 < value < 0.5:
            raise MatchError(f"{name} must be between 0 and 0.5 (exclusive), got {value:g}")
    if sprt is None:
        return None
    return Sprt(sprt[0], sprt[1], alpha, beta, max_pairs)


def score_of(record: GameRecord, bot: str) -> float:
    """``bot``'s score in one game (1 a win, 0.5 a shared win, 0 a loss). A void game (neither
    bot could play, :attr:`~arena.referee.records.GameRecord.void`) counts as shared: its pair still
    counts, and neither gains from it."""
    return 0.5 if record.void else record.score(record.seats.index(bot))


class MatchTally:
    """The pairs of a match between ``a`` and ``b`` as their games are stored, and where its
    test stands. ``target_pairs`` is the most pairs the match plays (its deck set's size at
    most); ``test`` (optional) may decide earlier."""

    def __init__(self, a: str, b: str, test: Sprt | None, target_pairs: int) -> None:
        self.a, self.b = a, b
        self.test = test
        self.target_pairs = target_pairs
        self.totals: list[float] = []
        self.counts = PairCounts()
        self.result: Verdict | None = None
        self._games: dict[int, dict[int, float]] = {}
        # per deck and rotation, each bot's (thinking time, answers, slowest answer)
        self._clocks: dict[int, dict[int, dict[str, tuple[float, int, float]]]] = {}

    @property
    def games(self) -> int:
        """Games the test counted (two per pair)."""
        return self.counts.games

    @property
    def done(self) -> bool:
        """Whether the match is over: its test decided, or it has all its pairs."""
        return self.result is not None or self.counts.pairs >= self.target_pairs

    def load(self, stored: Iterable[StoredGame]) -> None:
        """Count the games already stored (a resumed match): the test walks their pairs in
        deck order (:meth:`~leaderboard.sprt.Sprt.first_stops`) and stops where it would
        have stopped had the match not been interrupted."""
        for game in stored:
            self._note(game.deck, game.rotation, game.record)
        totals = self._complete()
        if self.test is not None and totals:
            verdict, pairs = self.test.first_stop(pair_count_path(totals))
            if verdict is not None:
                totals = totals[:pairs]
                self.result = verdict
        totals = totals[: self.target_pairs]
        self.totals = totals
        self.counts = count_pairs(totals)

    def add(self, entries: Sequence[GameEntry]) -> bool:
        """Count a stored block's games, pair by pair, the test looking after each; whether
        the match is over (the ``stop`` hook of :func:`~arena.tournament.runner.run_tournament`)."""
        for _, deck, rotation, record in entries:
            self._note(deck, rotation, record)
        for total in self._complete()[len(self.totals) :]:
            if self.done:
                break
            self.totals.append(total)
            self.counts = self.counts.add(total)
            if self.test is not None:
                self.result = self.test.verdict(self.counts)
        return self.done

    def _note(self, deck: int | None, rotation: int, record: GameRecord) -> None:
        if deck is not None:
            self._games.setdefault(deck, {})[rotation] = score_of(record, self.a)
            slowest = record.slowest or [0.0] * len(record.seats)
            self._clocks.setdefault(deck, {})[rotation] = {
                name: (record.times[seat], record.moves[seat], slowest[seat])
                for seat, name in enumerate(record.seats)
            }

    def _counted(self) -> list[tuple[int, int]]:
        """The (deck, rotation) of every game the test counted."""
        return [(deck, rotation) for deck in range(len(self.totals)) for rotation in (0, 1)]

    def outcomes(self) -> tuple[int, int, int]:
        """``a``'s wins, draws (a shared win, or a game neither could play) and losses in the
        games counted."""
        scores = [self._games[deck][rotation] for deck, rotation in self._counted()]
        wins = sum(1 for x in scores if x == 1.0)
        losses = sum(1 for x in scores if x == 0.0)
        return wins, len(scores) - wins - losses, losses

    def clocks(self) -> dict[str, dict[str, float | int | None]]:
        """Each bot's time per move in the games counted: ``moves``, ``mean`` and ``worst``
        (seconds; the worst is ``None`` where only games stored before the slowest answer was
        kept were counted)."""
        found: dict[str, dict[str, float | int | None]] = {}
        for name in (self.a, self.b):
            clocks = [
                self._clocks[deck][rotation][name]
                for deck, rotation in self._counted()
                if name in self._clocks[deck][rotation]
            ]
            moves = sum(c[1] for c in clocks)
            worst = max((c[2] for c in clocks), default=0.0)
            found[name] = {
                "moves": moves,
                "mean": sum(c[0] for c in clocks) / moves if moves else None,
                "worst": worst if worst > 0 else None,
            }
        return found

    def _complete(self) -> list[float]:
        """The totals of the pairs complete in deck order, up to the first incomplete one."""
        totals: list[float] = []
        while len(self._games.get(len(totals), {})) == 2:
            scores = self._games[len(totals)]
            totals.append(pair_total(scores[0], scores[1]))
        return totals

    def verdict(self) -> Verdict | None:
        """The test's verdict, ``"inconclusive"`` when the match ended undecided, ``None``
        without a test."""
        if self.test is None:
            return None
        return self.result or "inconclusive"

    def line(self) -> str:
        """The live summary line (:func:`~leaderboard.sprt.summary_line`)."""
        return summary_line(self.counts, self.test)

    def to_dict(self) -> dict[str, Any]:
        """The figures of ``--json``: result, games, pairs, ``a``'s wins, draws and losses, its
        score with its interval, the pairs by ``a``'s points, LLR with its bounds, Elo with its
        interval and LOS (``None`` where there is no test or no pair yet), and each bot's time
        per move (:meth:`clocks`)."""
        e = estimate(self.counts) if self.counts.pairs else None
        lo, hi = self.test.bounds if self.test is not None else (None, None)
        wins, draws, losses = self.outcomes()
        return {
            "result": self.verdict(),
            "games": self.games,
            "pairs": self.counts.pairs,
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "score": self.counts.score if e else None,
            "score_lo": e.score_lo if e else None,
            "score_hi": e.score_hi if e else None,
            "counts": list(self.counts.counts),
            "pairs_by_points": {
                f"{points:g}": count
                for points, count in zip(PAIR_TOTALS, self.counts.counts, strict=True)
            },
            "time_per_move": self.clocks(),
            "llr": self.test.llr(self.counts) if self.test is not None else None,
            "llr_lo": lo,
            "llr_hi": hi,
            "elo": e.elo if e else None,
            "elo_lo": e.elo_lo if e else None,
            "elo_hi": e.elo_hi if e else None,
            "los": e.los if e else None,
        }

    def verdict_line(self) -> str:
        """One line: what the match found, and on how many games."""
        e = estimate(self.counts) if self.counts.pairs else None
        figures = f"{self.games} games ({self.counts.pairs} pairs)"
        if e is not None:
            figures += (
                f", score {self.counts.score:.1%}, Elo {e.elo:+.1f} "
                f"[{e.elo_lo:+.1f}, {e.elo_hi:+.1f}], LOS {e.los:.1%}"
            )
        test = self.test
        if test is None:
            return f"{self.a} vs {self.b}: {figures}"
        lo, hi = test.bounds
        llr = f"LLR {test.llr(self.counts):.2f} [{lo:.2f}, {hi:.2f}]"
        span = f"[{test.elo0:g}, {test.elo1:g}]"
        diff = f"{self.a} - {self.b} is"
        said = {
            "H1": f"H1 accepted: {diff} {test.elo1:g} Elo rather than {test.elo0:g}",
            "H0": f"H0 accepted: {diff} {test.elo0:g} Elo rather than {test.elo1:g}",
            "inconclusive": "inconclusive: neither hypothesis accepted",
        }[self.verdict() or "inconclusive"]
        return f"{said} (SPRT {span}, {llr}); {figures}"

    def detail_lines(self) -> list[str]:
        """What the verdict rests on, for the text report: ``a``'s wins, draws and losses with
        its score and interval, the pairs by ``a``'s points, and each bot's time per move."""
        if not self.counts.pairs:
            return []
        e = estimate(self.counts)
        wins, draws, losses = self.outcomes()
        pairs = ", ".join(
            f"{count} at {points:g}"
            for points, count in zip(PAIR_TOTALS, self.counts.counts, strict=True)
        )
        lines = [
            f"  {self.a}: {wins} wins, {draws} draws, {losses} losses; score "
            f"{self.counts.score:.1%} [{e.score_lo:.1%}, {e.score_hi:.1%}]",
            f"  pairs by {self.a}'s points (of 2): {pairs}",
        ]
        for name, clock in self.clocks().items():
            mean, worst = clock["mean"], clock["worst"]
            if mean is None:
                continue
            said = f"mean {format_time(float(mean))}"
            if worst is not None:
                said += f", worst {format_time(float(worst))}"
            lines.append(f"  {name}: {said} per move over {clock['moves']} moves")
        return lines


class MatchProgress(ProgressLine):
    """The live line of a match: :meth:`MatchTally.line` with the elapsed time and faults,
    redrawn on a terminal and printed every few seconds elsewhere (see
    :class:`~arena.tournament.progress.ProgressLine`)."""

    def __init__(self, tally: MatchTally, **kw: Any) -> None:
        super().__init__(**kw)
        self.tally = tally

    def text(self, done: int, total: int, faults: int, now: float | None = None) -> str:
        """The match's summary line for the games stored so far."""
        now = time.monotonic() if now is None else now
        parts = [self.tally.line(), f"elapsed {format_duration(now - self._start)}"]
        if faults:
            parts.append(f"faults {faults}")
        return " · ".join(parts)


def pairs_for(games: int) -> int:
    """The pairs that hold ``games`` games: ``games`` rounded up to whole pairs, halved."""
    return math.ceil(games / 2)
