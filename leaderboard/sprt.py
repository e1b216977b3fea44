"""Head-to-head statistics of a match on paired decks: pure functions, no I/O.

A match plays every deck twice with the seats swapped: a *pair* of games. The pair, not the game,
is the independent unit, as in fishtest and fastchess (the "pentanomial" model): a deck that
favours one seat helps each bot once, so the two games of a pair are correlated, and the pair's
total score for bot A is one of 0, 0.5, 1, 1.5 or 2 (a shared win is worth 0.5 to each).

- :class:`PairCounts` holds how many pairs ended with each total (:func:`count_pairs`,
  :func:`count_game_pairs`); :class:`GameCounts` counts single games as if independent
  (:func:`count_games`), for comparison.
- :func:`estimate` gives A's score, the Elo difference with its 95% interval and the likelihood
  of superiority (LOS) from the normal approximation to the mean pair score.
- :class:`Sprt` is the sequential probability ratio test of H0: ``elo = elo0`` against H1:
  ``elo = elo1``; :func:`llr` is its generalized log-likelihood ratio, computed as fishtest's
  ``LLR_logistic`` and fastchess compute it; :func:`llr_bounds` and :func:`verdict` stop it.
- :func:`summary_line` is the one-line live summary of a match.

Elo is logistic throughout: a score ``s`` is ``400 log10(s / (1 - s))`` Elo. ``docs/match.md``
("The statistics") has the formulas, the hand-worked examples and the simulations behind them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from leaderboard.ratings import ELO_PER_NAT

__all__ = [
    "CONFIDENCE",
    "EMPTY_CELL",
    "PAIR_TOTALS",
    "EloEstimate",
    "GameCounts",
    "OutcomeCounts",
    "PairCounts",
    "Sprt",
    "Verdict",
    "count_game_pairs",
    "count_games",
    "count_pairs",
    "elo_to_score",
    "estimate",
    "game_count_path",
    "llr",
    "llr_approx",
    "llr_array",
    "llr_bounds",
    "pair_count_path",
    "pair_total",
    "score_to_elo",
    "summary_line",
    "verdict",
]

#: The possible totals of a pair of games for one bot, in the order of :attr:`PairCounts.counts`.
PAIR_TOTALS: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)
#: The level of the Elo interval.
CONFIDENCE: float = 0.95
#: What an empty cell counts as in the log-likelihood ratio (fishtest's and fastchess's
#: regularization), so that every outcome keeps a little probability.
EMPTY_CELL: float = 1e-3

#: The outcome of a sequential test: H0 or H1 accepted, or no decision within the pairs allowed.
Verdict = Literal["H0", "H1", "inconclusive"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# The variance of one game's score when games are fair coin flips: the floor's reference.
_COIN_VARIANCE = 0.25
# At most this many Newton (or bisection) steps per maximisation; 20 or so are the rule.
_NEWTON_STEPS = 100


# --------------------------------------------------------------------------- counting


@dataclass(frozen=True)
class OutcomeCounts:
    """How many independent units ended in each outcome, outcomes ordered by A's score.

    A unit of ``GAMES_PER_UNIT`` games scores ``k / (cells - 1)`` per game in cell ``k``: the
    outcome values (:meth:`values`) are evenly spaced from 0 to 1. The subclasses fix the unit.
    """

    counts: tuple[int, ...]
    #: Games in one unit.
    GAMES_PER_UNIT: ClassVar[int] = 1
    #: Number of outcomes.
    CELLS: ClassVar[int] = 0

    def __post_init__(self) -> None:
        """Check the number of cells and that every count is a non-negative integer."""
        if len(self.counts) != self.CELLS:
            raise ValueError(
                f"{type(self).__name__} needs {self.CELLS} counts, got {len(self.counts)}"
            )
        for c in self.counts:
            if isinstance(c, bool) or not isinstance(c, int | np.integer) or c < 0:
                raise ValueError(f"counts must be non-negative integers, got {self.counts!r}")
        object.__setattr__(self, "counts", tuple(int(c) for c in self.counts))

    @classmethod
    def values(cls) -> FloatArray:
        """Each outcome's score per game: ``0, 1/(cells - 1), ..., 1``."""
        return np.linspace(0.0, 1.0, cls.CELLS)

    @property
    def units(self) -> int:
        """The number of independent units counted."""
        return sum(self.counts)

    @property
    def games(self) -> int:
        """The number of games counted."""
        return self.units * self.GAMES_PER_UNIT

    @property
    def points(self) -> float:
        """Bot A's points over all games (a win 1, a shared win 0.5)."""
        return float(np.dot(self.counts, self.values())) * self.GAMES_PER_UNIT

    @property
    def score(self) -> float:
        """Bot A's score per game, ``points / games``; 0.5 when nothing was counted."""
        return self.points / self.games if self.games else 0.5


@dataclass(frozen=True)
class PairCounts(OutcomeCounts):
    """The pentanomial: how many pairs gave bot A a total of 0, 0.5, 1, 1.5 and 2 points.

    ``counts[k]`` is the number of pairs with total ``PAIR_TOTALS[k] = k / 2``. A total of 1 is
    a win each (the deck decided) or two shared wins.
    """

    counts: tuple[int, ...] = (0, 0, 0, 0, 0)
    GAMES_PER_UNIT: ClassVar[int] = 2
    CELLS: ClassVar[int] = 5

    @property
    def pairs(self) -> int:
        """The number of pairs counted."""
        return self.units

    def add(self, total: float) -> PairCounts:
        """These counts with one more pair of the given total for A."""
        counts = list(self.counts)
        counts[int(_half_points(total, 4, "a pair's total"))] += 1
        return PairCounts(tuple(counts))


@dataclass(frozen=True)
class GameCounts(OutcomeCounts):
    """The trinomial: A's losses, shared wins and wins, every game counted as independent.

    This is the model that ignores the pairing; it is here to compare with the pair model.
    """

    counts: tuple[int, ...] = (0, 0, 0)
    GAMES_PER_UNIT: ClassVar[int] = 1
    CELLS: ClassVar[int] = 3


def _half_points(x: ArrayLike, top: int, what: str) -> IntArray:
    """``2 x`` as integers in ``0..top``, elementwise; ``ValueError`` naming ``what`` for any
    other value."""
    doubled = 2.0 * np.asarray(x, dtype=np.float64)
    k = np.rint(np.where(np.isfinite(doubled), doubled, -1.0))
    bad = (k < 0) | (k > top) | ~np.isclose(doubled, k, rtol=0.0, atol=1e-9)
    if np.any(bad):
        allowed = ", ".join(f"{h / 2:g}" for h in range(top + 1))
        shown = doubled[bad].flat[0] / 2.0
        raise ValueError(f"{what} must be one of {allowed}, got {shown:g}")
    return k.astype(np.int64)


def _tally(cells: IntArray, n: int) -> tuple[int, ...]:
    """How often each of ``0..n-1`` occurs in ``cells``."""
    return tuple(int(c) for c in np.bincount(cells.ravel(), minlength=n))


def pair_total(first: float, second: float) -> float:
    """Bot A's total over a pair of games, from its score in each (0, 0.5 or 1)."""
    return float(_half_points([first, second], 2, "a game's score").sum()) / 2.0


def count_pairs(totals: Iterable[float]) -> PairCounts:
    """The pentanomial counts of a sequence of pair totals (each 0, 0.5, 1, 1.5 or 2)."""
    cells = _half_points(np.fromiter(totals, dtype=np.float64), 4, "a pair's total")
    return PairCounts(_tally(cells, PairCounts.CELLS))


def count_game_pairs(pairs: Iterable[tuple[float, float]]) -> PairCounts:
    """The pentanomial counts of a sequence of pairs given as A's scores in their two games."""
    return PairCounts(_tally(_pair_cells(list(pairs)), PairCounts.CELLS))


def count_games(scores: Iterable[float]) -> GameCounts:
    """The trinomial counts (losses, shared wins, wins) of A's scores in single games."""
    cells = _half_points(np.fromiter(scores, dtype=np.float64), 2, "a game's score")
    return GameCounts(_tally(cells, GameCounts.CELLS))


def _pair_cells(pairs: ArrayLike) -> IntArray:
    """The pentanomial cell of each pair in an array of shape ``(..., 2)`` of game scores."""
    games = _game_cells(pairs)
    return games.sum(axis=-1)


def _game_cells(pairs: ArrayLike) -> IntArray:
    """The trinomial cell of each game in an array of shape ``(..., 2)`` of game scores."""
    scores = np.asarray(pairs, dtype=np.float64)
    if scores.size == 0:
        scores = scores.reshape(0, 2)
    if scores.shape[-1] != 2:
        raise ValueError(f"a pair is two games' scores, got shape {scores.shape}")
    return _half_points(scores, 2, "a game's score")


def _cumulative(cells: IntArray, n: int) -> IntArray:
    """Counts of ``0..n-1`` along the second-to-last axis, cumulated: ``cells`` has shape
    ``(..., steps, per_step)``; the result ``(..., steps, n)``."""
    onehot = (cells[..., None] == np.arange(n)).sum(axis=-2, dtype=np.int64)
    return np.cumsum(onehot, axis=-2)


def pair_count_path(totals: ArrayLike) -> IntArray:
    """The pentanomial counts after each pair: row ``i`` counts the first ``i + 1`` totals.

    The path a sequential test walks (see :meth:`Sprt.first_stops`): totals of shape
    ``(..., pairs)`` give counts of shape ``(..., pairs, 5)``.
    """
    cells = _half_points(totals, 4, "a pair's total")
    return _cumulative(cells[..., None], PairCounts.CELLS)


def game_count_path(pairs: ArrayLike) -> IntArray:
    """The trinomial counts after each pair, its two games counted as independent.

    A's scores of shape ``(..., pairs, 2)`` give counts of shape ``(..., pairs, 3)``: row
    ``i`` counts the ``2 (i + 1)`` games of the first ``i + 1`` pairs.
    """
    return _cumulative(_game_cells(pairs), GameCounts.CELLS)


# --------------------------------------------------------------------------- Elo and LOS


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected score: ``400 log10(s / (1 - s))``."""
    return float(ELO_PER_NAT * special.logit(score))


def elo_to_score(elo: float) -> float:
    """The expected score at a logistic Elo difference: ``1 / (1 + 10^(-elo / 400))``."""
    return float(special.expit(elo / ELO_PER_NAT))


@dataclass(frozen=True)
class EloEstimate:
    """Bot A's score per game with its interval, the Elo difference A - B with its interval, and
    the LOS.

    ``score_lo``/``score_hi`` bound the score's ``CONFIDENCE`` interval (within 0 and 1);
    ``elo_lo``/``elo_hi`` bound the same interval in Elo (not symmetric about ``elo``); ``los``
    is the probability that A is the stronger.
    """

    score: float
    elo: float
    elo_lo: float
    elo_hi: float
    los: float
    score_lo: float
    score_hi: float

    @property
    def error(self) -> float:
        """Half the interval's width: the "±" that fishtest and fastchess print."""
        return (self.elo_hi - self.elo_lo) / 2.0


def estimate(counts: OutcomeCounts, confidence: float = CONFIDENCE) -> EloEstimate:
    """Score, Elo difference with its interval, and LOS, from counts of independent units.

    With ``N`` units, frequencies ``f_k`` and outcome values ``a_k`` (a pair's mean score per
    game: 0, 0.25, 0.5, 0.75, 1)::

        s   = sum_k f_k a_k                   the score per game
        var = sum_k f_k (a_k - s)^2           the variance of one unit's score
        se  = sqrt(var / N)
        score interval [s - z se, s + z se] (within 0 and 1)
        Elo = elo(s), interval [elo(s - z se), elo(s + z se)], LOS = Phi((s - 0.5) / se)

    with ``z`` the normal quantile of ``confidence`` and ``elo(x) = 400 log10(x / (1 - x))``.
    The interval is the score's normal interval mapped to Elo (as fishtest's ``get_elo`` and
    fastchess compute it), so it is not symmetric about ``Elo``.

    Small and one-sided samples get a bounded answer:

    - ``var`` is at least ``v1 / (N + 1)``, where ``v1`` is the variance of one unit when every
      game is a fair coin flip (1/4 per game, 1/8 for a pair's mean). Only a sample whose units
      (nearly) all ended alike reaches this floor: all wins, all losses, or every pair split
      one-one (two identical deterministic bots). The interval then narrows as ``1/N``
      instead of collapsing to a point after one unit.
    - Scores are clamped to ``[e, 1 - e]`` with ``e = 1 / (2 (G + 1))`` for ``G`` games, so a
      perfect record of ``G`` games is reported at the continuity-corrected score
      ``(G + 1/2) / (G + 1)``: ``400 log10(2 G + 1)`` Elo, and every Elo this returns is
      within ``±400 log10(2 G + 1)``.

    Raises ``ValueError`` when nothing was counted or ``confidence`` is not in (0, 1).
    """
    n = counts.units
    if n == 0:
        raise ValueError("no games counted yet: there is nothing to estimate")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    freq = np.asarray(counts.counts, dtype=np.float64) / n
    values = counts.values()
    s = float(np.dot(freq, values))
    var = float(np.dot(freq, (values - s) ** 2))
    floor = _COIN_VARIANCE / counts.GAMES_PER_UNIT / (n + 1)
    se = math.sqrt(max(var, floor) / n)
    z = float(special.ndtri(0.5 + confidence / 2.0))
    edge = 0.5 / (counts.games + 1)

    def elo(x: float) -> float:
        return score_to_elo(min(max(x, edge), 1.0 - edge))

    return EloEstimate(
        score=s,
        elo=elo(s),
        elo_lo=elo(s - z * se),
        elo_hi=elo(s + z * se),
        los=float(special.ndtr((s - 0.5) / se)),
        score_lo=max(0.0, s - z * se),
        score_hi=min(1.0, s + z * se),
    )


# --------------------------------------------------------------------------- the SPRT


def _profile(freq: FloatArray, values: FloatArray, s: float) -> FloatArray:
    """``max_x sum_k f_k log(1 + x (a_k - s))`` over the last axis of ``freq``.

    This is the log of the empirical likelihood ratio of the observed frequencies against the
    closest distribution on the same outcomes whose mean is ``s`` (the maximum-likelihood
    distribution ``p_k = f_k / (1 + x (a_k - s))``; Owen's empirical likelihood). Every ``f_k``
    is positive and ``min a < s < max a``, so the concave objective has its maximum inside
    ``(-1 / (max a - s), -1 / (min a - s))``, found by Newton steps kept inside a bisection
    bracket.
    """
    d = values - s
    # The bracket starts one float inside the poles, where 1 + x (a_k - s) reaches 0.
    lo = np.full(freq.shape[:-1], np.nextafter(-1.0 / float(d.max()), 0.0))
    hi = np.full(freq.shape[:-1], np.nextafter(-1.0 / float(d.min()), 0.0))
    x = np.zeros(freq.shape[:-1])
    for _ in range(_NEWTON_STEPS):
        r = d / (1.0 + x[..., None] * d)
        slope = np.sum(freq * r, axis=-1)
        curvature = np.sum(freq * r * r, axis=-1)
        lo = np.where(slope >= 0.0, x, lo)
        hi = np.where(slope <= 0.0, x, hi)
        step = x + slope / curvature
        new = np.where((step >= lo) & (step <= hi), step, 0.5 * (lo + hi))
        moved = np.abs(new - x)
        x = new
        if float(np.max(moved, initial=0.0)) <= 1e-13 * (1.0 + float(np.max(np.abs(x)))):
            break
    return np.sum(freq * np.log1p(x[..., None] * d), axis=-1)


def llr_array(counts: ArrayLike, elo0: float, elo1: float) -> FloatArray:
    """:func:`llr` for an array of counts whose last axis holds the 5 pentanomial or 3
    trinomial cells; one log-likelihood ratio per row (0 for a row with nothing counted)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0 or c.shape[-1] not in (GameCounts.CELLS, PairCounts.CELLS):
        raise ValueError(f"counts need 3 or 5 cells on the last axis, got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be finite and non-negative")
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    if not 0.0 < s0 < 1.0 or not 0.0 < s1 < 1.0:
        raise ValueError(f"Elo hypotheses must be finite, got {elo0} and {elo1}")
    observed = c.sum(axis=-1)
    regular = np.where(c > 0, c, EMPTY_CELL)
    total = regular.sum(axis=-1)
    freq = regular / total[..., None]
    values = np.linspace(0.0, 1.0, c.shape[-1])
    out = total * (_profile(freq, values, s0) - _profile(freq, values, s1))
    return np.where(observed > 0, out, 0.0)


def llr(counts: OutcomeCounts, elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1: ``elo = elo1`` against H0: ``elo = elo0``.

    The GSPRT statistic as fishtest (``LLRcalc.LLR_logistic``) and fastchess compute it for the
    pentanomial model: the units' outcome distribution is unknown (any distribution on the
    five totals), and each hypothesis fixes only its mean score ``s_i = 1 / (1 + 10^(-elo_i /
    400))``. With ``N`` units and observed frequencies ``f``::

        LLR = N (max_x sum_k f_k log(1 + x (a_k - s0)) - max_x sum_k f_k log(1 + x (a_k - s1)))

    the log of the ratio of the likeliest distributions with mean ``s1`` and ``s0``. An empty
    cell counts as ``EMPTY_CELL`` (as in fishtest). For small Elo spans this is close to
    :func:`llr_approx`; unlike it, it stays bounded on small samples (a pair's worth of
    evidence moves it by at most ``log`` of a probability ratio). 0 when nothing was counted.
    """
    return float(llr_array(np.asarray(counts.counts), elo0, elo1))


def llr_approx(counts: OutcomeCounts, elo0: float, elo1: float) -> float:
    """The normal (Brownian) approximation of :func:`llr`, fishtest's ``LLR_alt2``::

        LLR ~ N (s - (s0 + s1) / 2) (s1 - s0) / var

    with ``s`` and ``var`` the mean and variance of one unit's score from the counts (empty
    cells as ``EMPTY_CELL``). Good for large samples and small Elo spans; on a handful of
    units all alike ``var`` is nearly 0 and it explodes, which is why :class:`Sprt` decides
    with :func:`llr`. 0 when nothing was counted.
    """
    if counts.units == 0:
        return 0.0
    regular = np.where(np.asarray(counts.counts) > 0, counts.counts, EMPTY_CELL)
    total = float(regular.sum())
    freq = regular / total
    values = counts.values()
    s = float(np.dot(freq, values))
    var = float(np.dot(freq, (values - s) ** 2))
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return total * (s - (s0 + s1) / 2.0) * (s1 - s0) / var


def llr_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``.

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` of accepting H0 when H1
    holds; ``(-2.944, 2.944)`` for 0.05 each. ``ValueError`` unless both are in (0, 1) with
    ``alpha + beta < 1``.
    """
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"alpha and beta must be between 0 and 1, got {alpha} and {beta}")
    if alpha + beta >= 1.0:
        raise ValueError(f"alpha + beta must be below 1, got {alpha} + {beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def verdict(
    llr_value: float,
    bounds: tuple[float, float],
    pairs: int,
    max_pairs: int | None = None,
) -> Verdict | None:
    """Where a sequential test stands: ``"H1"`` once the LLR reaches the upper bound, ``"H0"``
    once it reaches the lower, ``"inconclusive"`` when ``pairs`` reached ``max_pairs``
    without either, and ``None`` while it goes on. A bound reached on the last allowed pair
    still decides."""
    lower, upper = bounds
    if llr_value >= upper:
        return "H1"
    if llr_value <= lower:
        return "H0"
    if max_pairs is not None and pairs >= max_pairs:
        return "inconclusive"
    return None


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of H0: ``elo = elo0`` against H1: ``elo = elo1``.

    Logistic Elo of A over B; ``alpha`` is the chance of accepting H1 when ``elo = elo0``,
    ``beta`` of accepting H0 when ``elo = elo1``; ``max_pairs`` (optional) ends the test as
    inconclusive. The test looks after every pair; ``ValueError`` for parameters that make
    no test (``elo0 >= elo1``, non-finite Elo, error rates outside (0, 1) or summing to 1 or
    more, ``max_pairs < 1``).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        """Check the parameters (see the class)."""
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)):
            raise ValueError(f"Elo hypotheses must be finite, got {self.elo0} and {self.elo1}")
        if self.elo0 >= self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0:g} and {self.elo1:g}")
        llr_bounds(self.alpha, self.beta)
        if self.max_pairs is not None and self.max_pairs < 1:
            raise ValueError(
                f"the maximum number of pairs must be at least 1, got {self.max_pairs}"
            )

    @property
    def bounds(self) -> tuple[float, float]:
        """The LLR's stopping bounds, :func:`llr_bounds` of ``alpha`` and ``beta``."""
        return llr_bounds(self.alpha, self.beta)

    def llr(self, counts: OutcomeCounts) -> float:
        """:func:`llr` of ``counts`` for this test's hypotheses."""
        return llr(counts, self.elo0, self.elo1)

    def verdict(self, counts: OutcomeCounts) -> Verdict | None:
        """:func:`verdict` of these counts (their units are the pairs played)."""
        return verdict(self.llr(counts), self.bounds, counts.units, self.max_pairs)

    def first_stops(self, paths: ArrayLike) -> list[tuple[Verdict | None, int]]:
        """Walk paths of counts and say where the test stopped on each.

        ``paths`` has shape ``(runs, pairs, cells)``: row ``i`` of a run is the counts after
        ``i + 1`` pairs (:func:`pair_count_path`; or :func:`game_count_path` to count the games
        as independent). For each run: the verdict and the number of pairs at which the LLR
        first reached a bound, ``("inconclusive", max_pairs)`` if it reached none within
        ``max_pairs``, or ``(None, pairs)`` if the path ended first.
        """
        p = np.asarray(paths)
        if p.ndim != 3:
            raise ValueError(f"paths are a 3-D array of counts, got shape {p.shape}")
        steps = p.shape[1] if self.max_pairs is None else min(p.shape[1], self.max_pairs)
        lower, upper = self.bounds
        out: list[tuple[Verdict | None, int]] = [(None, steps)] * p.shape[0]
        pending = np.arange(p.shape[0])
        start, chunk = 0, 64
        # Most runs stop early: look at growing chunks of pairs, only for runs still going.
        while pending.size and start < steps:
            stop = min(steps, start + chunk)
            values = llr_array(p[pending, start:stop], self.elo0, self.elo1)
            crossed = (values >= upper) | (values <= lower)
            first = crossed.argmax(axis=1)
            for j in np.flatnonzero(crossed.any(axis=1)):
                pairs = start + int(first[j]) + 1
                out[int(pending[j])] = (
                    verdict(float(values[j, first[j]]), self.bounds, pairs),
                    pairs,
                )
            pending = pending[~crossed.any(axis=1)]
            start, chunk = stop, 2 * chunk
        if self.max_pairs is not None and steps >= self.max_pairs:
            for run in pending:
                out[int(run)] = ("inconclusive", steps)
        return out

    def first_stop(self, path: ArrayLike) -> tuple[Verdict | None, int]:
        """:meth:`first_stops` of one path of shape ``(pairs, cells)``."""
        p = np.asarray(path)
        if p.ndim != 2:
            raise ValueError(f"a path is a 2-D array of counts, got shape {p.shape}")
        return self.first_stops(p[None])[0]


# --------------------------------------------------------------------------- the live line


def summary_line(counts: PairCounts, sprt: Sprt | None = None) -> str:
    """One line for a running match: games and pairs, A's score, the Elo difference with its
    interval, the LLR with its bounds (with a test), and the LOS. For example (one line)::

        games 412 (206 pairs)  score 53.6%  Elo +25.3 [-4.7, +55.8]
        LLR 0.90 [-2.94, 2.94]  LOS 95.1%
    """
    e = estimate(counts) if counts.pairs else None
    parts = [
        f"games {counts.games} ({counts.pairs} pairs)",
        f"score {counts.score:.1%}" if e else "score -",
        f"Elo {e.elo:+.1f} [{e.elo_lo:+.1f}, {e.elo_hi:+.1f}]" if e else "Elo -",
    ]
    if sprt is not None:
        lower, upper = sprt.bounds
        parts.append(f"LLR {sprt.llr(counts):.2f} [{lower:.2f}, {upper:.2f}]")
    parts.append(f"LOS {e.los:.1%}" if e else "LOS -")
    return "  ".join(parts)
