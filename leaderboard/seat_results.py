"""Results by seat: which decks favoured the first seat, and each bot's score by seat.

A seat is counted in turn order: position 0 moves first (``GameRecord.first``), position 1
next, and so on. Scores are shares of the round as in the standings (a win shared by ``k``
counts ``1/k``), over the rated games (:func:`~leaderboard.standings.game_result`), with 95%
Wilson intervals. Pure: no database, no I/O. See ``docs/reports.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from leaderboard.ratings import wilson_interval
from leaderboard.standings import game_result
from leaderboard.store import StoredGame

__all__ = ["SeatResults", "SeatScore", "seat_results"]


@dataclass(frozen=True)
class SeatScore:
    """``points`` scored in ``games`` games: ``score = points / games`` with its 95% Wilson
    interval ``[lo, hi]`` (all three ``None`` without games)."""

    games: int
    points: float

    @property
    def score(self) -> float | None:
        """The mean share, or ``None`` without games."""
        return self.points / self.games if self.games else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of :attr:`score`, or ``None`` without games."""
        if not self.games:
            return None
        return wilson_interval(min(self.points, float(self.games)), self.games)

    def against(self, chance: float) -> int:
        """+1 when the interval lies above ``chance``, -1 below it, 0 when it holds it."""
        interval = self.interval
        if interval is None:
            return 0
        lo, hi = interval
        return 1 if lo > chance else -1 if hi < chance else 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``games``, ``points``, ``score``, ``lo``, ``hi``."""
        lo, hi = self.interval or (None, None)
        return {
            "games": self.games,
            "points": self.points,
            "score": self.score,
            "lo": lo,
            "hi": hi,
        }


@dataclass(frozen=True)
class SeatResults:
    """Rated games by seat. ``players`` is the table size (chance is ``1 / players``);
    ``first`` the first seat's score over every game; ``decks[position]`` the first seat's
    score on each stored deck position (games on no stored deck are left out), by position;
    ``bots[bot][p]`` the bot's score from turn-order position ``p``, for bots in name order."""

    players: int
    first: SeatScore
    decks: dict[int, SeatScore]
    bots: dict[str, tuple[SeatScore, ...]]

    @property
    def chance(self) -> float:
        """A seat's expected share if seats did not matter: ``1 / players``."""
        return 1.0 / self.players

    def favoured(self, sign: int) -> list[int]:
        """The deck positions whose first-seat interval lies above chance (``sign`` +1) or
        below it (``sign`` -1)."""
        return [d for d, s in self.decks.items() if s.against(self.chance) == sign]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``players``, ``first``, ``decks`` (a list, each with its deck
        ``position``) and ``bots`` (per bot a list by turn-order position)."""
        return {
            "players": self.players,
            "first": self.first.to_dict(),
            "decks": [{"position": d, **s.to_dict()} for d, s in self.decks.items()],
            "bots": {b: [s.to_dict() for s in seats] for b, seats in self.bots.items()},
        }


def seat_results(games: Sequence[StoredGame], players: int) -> SeatResults:
    """The rated ``games`` of a tournament of ``players`` per table, by seat in turn order.

    A game at a table of another size (none in one tournament) is left out."""
    first_games = 0
    first_points = 0.0
    deck_games: dict[int, int] = {}
    deck_points: dict[int, float] = {}
    bot_games: dict[str, list[int]] = {}
    bot_points: dict[str, list[float]] = {}
    for game in games:
        result = game_result(game)
        record = game.record
        if result is None or len(record.seats) != players:
            continue
        share = result.scores[record.first % players]
        first_games += 1
        first_points += share
        if game.deck is not None:
            deck_games[game.deck] = deck_games.get(game.deck, 0) + 1
            deck_points[game.deck] = deck_points.get(game.deck, 0.0) + share
        for seat, bot in enumerate(record.seats):
            position = (seat - record.first) % players
            counts = bot_games.setdefault(bot, [0] * players)
            sums = bot_points.setdefault(bot, [0.0] * players)
            counts[position] += 1
            sums[position] += result.scores[seat]
    return SeatResults(
        players=players,
        first=SeatScore(first_games, first_points),
        decks={d: SeatScore(deck_games[d], deck_points[d]) for d in sorted(deck_games)},
        bots={
            b: tuple(SeatScore(n, p) for n, p in zip(bot_games[b], bot_points[b], strict=True))
            for b in sorted(bot_games)
        },
    )
