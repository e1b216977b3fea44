"""How the ratings settled as games came in: the rating fit on prefixes of the stored games.

:func:`rating_history` fits :func:`~leaderboard.ratings.fit_ratings` on the first ``n`` games
in the order they were stored, for a few dozen ``n`` from :func:`prefix_sizes`, so a report can
draw each bot's rating and interval against the games played. Pure: no database, no I/O. See
``docs/reports.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from leaderboard.ratings import BASE_ELO, GameResult, Ratings, fit_ratings
from leaderboard.standings import game_result
from leaderboard.store import StoredGame

__all__ = [
    "HISTORY_POINTS",
    "HistoryPoint",
    "RatingHistory",
    "prefix_sizes",
    "rating_history",
]

#: How many prefixes :func:`rating_history` fits at most.
HISTORY_POINTS = 24
#: The smallest prefix is about this fraction of all games (at least 2 games).
_FIRST_FRACTION = 1 / 500


def prefix_sizes(total: int, points: int = HISTORY_POINTS) -> list[int]:
    """At most ``points`` prefix sizes from about ``total / 500`` (at least 2) to ``total``,
    spaced geometrically, increasing, ``total`` last (empty when ``total`` is 0).

    Geometric spacing puts the points where ratings move most, the early games, and keeps the
    work bounded: the sizes sum to a few times ``total`` whatever ``points`` is, so fitting
    every prefix costs a few full fits, not ``points / 2`` of them.
    """
    if total <= 0:
        return []
    start = min(total, max(2, math.ceil(total * _FIRST_FRACTION)))
    if points <= 1 or start == total:
        return [total]
    ratio = (total / start) ** (1.0 / (points - 1))
    sizes = {min(total, round(start * ratio**k)) for k in range(points)}
    return sorted(sizes | {total})


@dataclass(frozen=True)
class HistoryPoint:
    """The ratings after the first ``games`` stored games: ``elo[bot]`` with its 95% interval
    ``lo[bot]``/``hi[bot]`` (``None`` when unbounded: fewer than two decks played yet), for
    every bot with a rated game among them."""

    games: int
    elo: dict[str, float]
    lo: dict[str, float | None]
    hi: dict[str, float | None]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``games`` and, per bot, ``[elo, lo, hi]``."""
        return {
            "games": self.games,
            "ratings": {b: [self.elo[b], self.lo[b], self.hi[b]] for b in self.elo},
        }


@dataclass(frozen=True)
class RatingHistory:
    """The ratings on growing prefixes of the stored games, smallest first. ``anchor`` is the
    bot pinned at ``base`` (prefixes where it has no rated game are left out), or ``None``
    when the mean rating is ``base``."""

    points: tuple[HistoryPoint, ...]
    anchor: str | None
    base: float

    @property
    def bots(self) -> tuple[str, ...]:
        """Every bot rated in any point, by name."""
        return tuple(sorted({b for p in self.points for b in p.elo}))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``anchor``, ``base`` and ``points``."""
        return {
            "anchor": self.anchor,
            "base": self.base,
            "points": [p.to_dict() for p in self.points],
        }


def _bounded(x: float) -> float | None:
    """``x``, or ``None`` for an unbounded interval end."""
    return x if math.isfinite(x) else None


def rating_history(
    games: Sequence[StoredGame],
    *,
    anchor: str | None = None,
    anchor_elo: float = BASE_ELO,
    points: int = HISTORY_POINTS,
    final: Ratings | None = None,
) -> RatingHistory:
    """The rating fit of :func:`~leaderboard.standings.compute_standings` (same rated games,
    same unit, same ``anchor``) on the first ``n`` of ``games`` in the order given (the order
    they were stored), for each ``n`` of :func:`prefix_sizes`; the last point is the fit over
    every game. A prefix whose fit fails, or without the anchor, is left out. ``final`` is
    that last fit when it is already made (``Standings.ratings``), so it is not made again."""
    results: list[GameResult | None] = [game_result(g) for g in games]
    base = anchor_elo if anchor is not None else BASE_ELO
    out: list[HistoryPoint] = []
    for n in prefix_sizes(len(games), points):
        rated = [r for r in results[:n] if r is not None]
        if not rated or (anchor is not None and all(anchor not in r.players for r in rated)):
            continue
        if n == len(games) and final is not None:
            fit = final
        else:
            try:
                fit = fit_ratings(rated, anchor, base=base)
            except (RuntimeError, ValueError):
                continue
        out.append(
            HistoryPoint(
                games=n,
                elo={r.name: r.elo for r in fit.ratings},
                lo={r.name: _bounded(r.lo) for r in fit.ratings},
                hi={r.name: _bounded(r.hi) for r in fit.ratings},
            )
        )
    return RatingHistory(tuple(out), anchor, base)
