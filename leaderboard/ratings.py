"""Rating maths for the leaderboard: pure functions, no database, no I/O.

Model (see ``docs/ratings.md``): every entrant ``i`` has a strength ``theta_i`` (natural-log
units). At a table ``T`` of 2 to 4 entrants the probability that seat ``i`` wins the round is
the Luce (Plackett-Luce first-choice) probability ``exp(theta_i) / sum_{j in T} exp(theta_j)``;
with two players this is exactly Bradley-Terry. A win shared by ``k`` seats is entered as a
fractional win of ``1/k`` for each of them, so the log-likelihood of one game is

    l_g(theta) = sum_{i in T} s_i * theta_i - log sum_{j in T} exp(theta_j)

where ``s_i`` is seat ``i``'s share of the round (the shares sum to 1). Ratings are reported on
the Elo scale, ``elo_i = 1500 + K * (theta_i - c)`` with ``K = 400 / ln 10`` and ``c`` either the
mean strength (default) or the anchor's strength. ``Ratings.los`` gives the likelihood of
superiority of one entrant over another from the same cluster-robust covariance as the intervals,
and ``win_rates`` gives score shares with Wilson score intervals.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AUTO_RIDGE",
    "BASE_ELO",
    "ELO_PER_NAT",
    "GameResult",
    "Rating",
    "Ratings",
    "WinRate",
    "fit_ratings",
    "wilson_interval",
    "win_rates",
]

#: Elo points per natural-log unit of strength: ``400 / ln 10`` (about 173.72).
ELO_PER_NAT: float = 400.0 / math.log(10.0)
#: The rating given to the mean entrant (or to the anchor).
BASE_ELO: float = 1500.0
#: Ridge used only when the maximum-likelihood estimate does not exist (see ``fit_ratings``).
AUTO_RIDGE: float = 0.01

_CONFIDENCE = 0.95
_Z = NormalDist().inv_cdf(0.5 + _CONFIDENCE / 2.0)
_MAX_SEATS = 4
#: Newton steps the fit takes at most (it needs a few dozen at most).
_NEWTON_STEPS = 500
#: The gradient the fit aims for (it stops short of it only where rounding allows no better).
_GRADIENT_GOAL = 1e-10
# Below these (natural-log units) a variance of a difference counts as zero, and so does the
# difference itself, in ``Ratings.los``; both are far below anything a real fit produces.
_ZERO_VARIANCE = 1e-12
_ZERO_DIFFERENCE = 1e-9

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


@dataclass(frozen=True)
class GameResult:
    """One finished round: the entrants in seat order, each seat's share, and its variance unit.

    ``scores[i]`` is seat ``i``'s share of the round: 1 for the sole winner, ``1/k`` for each of
    ``k`` seats sharing the win, 0 otherwise (so the shares sum to 1). ``unit`` names the
    independent unit for variance estimation (e.g. the deck-pair key): games with the same unit
    are treated as one correlated cluster.
    """

    players: tuple[str, ...]
    scores: tuple[float, ...]
    unit: str

    def __post_init__(self) -> None:
        """Check the table size, distinct names, and that the shares are valid and sum to 1."""
        n = len(self.players)
        if not 2 <= n <= _MAX_SEATS:
            raise ValueError(f"a game needs 2 to {_MAX_SEATS} players, got {n}")
        if len(set(self.players)) != n:
            raise ValueError(f"duplicate player in {self.players!r}")
        if len(self.scores) != n:
            raise ValueError("scores and players differ in length")
        if any(not math.isfinite(s) or s < 0.0 for s in self.scores):
            raise ValueError(f"scores must be finite and non-negative: {self.scores!r}")
        if not math.isclose(sum(self.scores), 1.0, abs_tol=1e-9):
            raise ValueError(f"scores must sum to 1: {self.scores!r}")


@dataclass(frozen=True)
class Rating:
    """One entrant's Elo-scale rating with its 95% interval ``[lo, hi]`` and games played.

    ``lo``/``hi`` are ``-inf``/``inf`` when the variance cannot be estimated (fewer than two
    independent units); the anchor's interval is the single point 1500.
    """

    name: str
    elo: float
    lo: float
    hi: float
    games: int


@dataclass(frozen=True)
class Ratings:
    """The result of one fit: ratings sorted best first, plus how the fit was made.

    ``ridge`` is the penalty actually used (0.0 for a plain maximum-likelihood fit), ``units``
    the number of independent clusters behind the intervals, ``anchor`` the entrant pinned at
    ``base`` (``None`` when the mean is ``base``), ``base`` 1500 unless the fit was asked for
    another.

    ``covariance`` is the cluster-robust covariance of the mean-zero strengths (natural-log
    units, rows and columns in the order of ``names``, which is sorted), or ``None`` when it
    cannot be estimated (fewer than two units). Only differences of strengths are identified,
    and the variance of a difference is the same on the anchored and the centred scale, so
    :meth:`los` uses it whatever the anchor.
    """

    ratings: tuple[Rating, ...]
    anchor: str | None
    ridge: float
    games: int
    units: int
    names: tuple[str, ...] = ()
    covariance: tuple[tuple[float, ...], ...] | None = field(default=None, repr=False)
    base: float = BASE_ELO

    def __getitem__(self, name: str) -> Rating:
        """Return the rating of entrant ``name`` (``KeyError`` if absent)."""
        for rating in self.ratings:
            if rating.name == name:
                return rating
        raise KeyError(name)

    def difference_variance(self, a: str, b: str) -> float:
        """Variance of ``theta_a - theta_b`` (natural-log units squared) from the cluster-robust
        covariance; NaN when the covariance cannot be estimated (fewer than two units).
        ``KeyError`` if either entrant is absent."""
        for name in (a, b):
            if name not in self.names:
                raise KeyError(name)
        if self.covariance is None:
            return math.nan
        i, j = self.names.index(a), self.names.index(b)
        c = self.covariance
        return c[i][i] + c[j][j] - 2.0 * c[i][j]

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that ``a`` is stronger than ``b``.

        ``LOS = Phi((theta_a - theta_b) / sd(theta_a - theta_b))`` with ``Phi`` the standard
        normal distribution function and the variance of the difference taken from the same
        cluster-robust covariance as the rating intervals (a normal approximation to the
        sampling distribution of the estimated difference). ``los(a, b) + los(b, a) == 1``.

        Edge cases: ``los(a, a)`` is 0.5. NaN when the covariance cannot be estimated (fewer
        than two units). When the variance of the difference is zero (every unit reproduces the
        fitted result exactly, so the sandwich carries no information about the spread) the
        result is 0.5 if the difference is zero too, and NaN otherwise: a degenerate variance
        is not evidence of certainty. ``KeyError`` if either entrant is absent.
        """
        diff = (self[a].elo - self[b].elo) / ELO_PER_NAT
        if a == b:
            return 0.5
        var = self.difference_variance(a, b)
        if not math.isfinite(var):
            return math.nan
        if var <= _ZERO_VARIANCE:
            return 0.5 if abs(diff) <= _ZERO_DIFFERENCE else math.nan
        return NormalDist().cdf(diff / math.sqrt(var))

    def los_matrix(self) -> dict[str, dict[str, float]]:
        """``los(a, b)`` for every ordered pair of distinct entrants, rows and columns best
        first (the order of ``ratings``); values may be NaN (see :meth:`los`)."""
        order = [r.name for r in self.ratings]
        return {a: {b: self.los(a, b) for b in order if b != a} for a in order}

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-ready dict; infinite interval ends become ``None``.

        The covariance is left out: the dict is the stored rating snapshot.
        """

        def clean(r: Rating) -> dict[str, object]:
            d: dict[str, object] = asdict(r)
            for key in ("lo", "hi"):
                value = d[key]
                if isinstance(value, float) and not math.isfinite(value):
                    d[key] = None
            return d

        return {
            "anchor": self.anchor,
            "base": self.base,
            "ridge": self.ridge,
            "games": self.games,
            "units": self.units,
            "confidence": _CONFIDENCE,
            "ratings": [clean(r) for r in self.ratings],
        }

    def to_json(self) -> str:
        """Serialise ``to_dict()`` as a JSON string (strict JSON: no NaN or Infinity)."""
        return json.dumps(self.to_dict(), allow_nan=False)


@dataclass(frozen=True)
class WinRate:
    """One entrant's score share ``rate`` over ``games`` played with its 95% interval."""

    name: str
    rate: float
    lo: float
    hi: float
    games: int
    score: float


# --------------------------------------------------------------------------- internals


@dataclass(frozen=True)
class _Design:
    """Games packed into padded arrays: one row per game, ``_MAX_SEATS`` columns."""

    names: tuple[str, ...]
    idx: IntArray  # entrant index per seat, 0 where padded
    mask: NDArray[np.bool_]  # True for real seats
    scores: FloatArray  # seat shares, 0 where padded
    cluster: IntArray  # cluster index per game
    n_clusters: int


def _canonical(games: Sequence[GameResult]) -> list[GameResult]:
    """Sort games into a canonical order so floating-point sums do not depend on input order."""
    return sorted(games, key=lambda g: (g.unit, g.players, g.scores))


def _design(games: Sequence[GameResult]) -> _Design:
    """Pack (canonically ordered) games into arrays indexed by sorted entrant name."""
    names = tuple(sorted({p for g in games for p in g.players}))
    where = {name: i for i, name in enumerate(names)}
    units = sorted({g.unit for g in games})
    unit_idx = {u: i for i, u in enumerate(units)}
    n = len(games)
    idx = np.zeros((n, _MAX_SEATS), dtype=np.intp)
    mask = np.zeros((n, _MAX_SEATS), dtype=bool)
    scores = np.zeros((n, _MAX_SEATS), dtype=np.float64)
    cluster = np.zeros(n, dtype=np.intp)
    for row, g in enumerate(games):
        k = len(g.players)
        idx[row, :k] = [where[p] for p in g.players]
        mask[row, :k] = True
        scores[row, :k] = g.scores
        cluster[row] = unit_idx[g.unit]
    return _Design(names, idx, mask, scores, cluster, len(units))


def _probabilities(theta: FloatArray, d: _Design) -> tuple[FloatArray, FloatArray]:
    """Return per-seat Luce win probabilities (0 on padding) and each table's log-sum-exp."""
    strengths = np.where(d.mask, theta[d.idx], -np.inf)
    top = strengths.max(axis=1, keepdims=True)
    expd = np.exp(strengths - top)
    total = expd.sum(axis=1, keepdims=True)
    lse = (top + np.log(total))[:, 0]
    return expd / total, lse


def _log_likelihood(theta: FloatArray, d: _Design) -> float:
    """Sum over games of ``sum_i s_i theta_i - log sum_j exp(theta_j)``."""
    _, lse = _probabilities(theta, d)
    strengths = np.where(d.mask, theta[d.idx], 0.0)
    return float((d.scores * strengths).sum() - lse.sum())


def _residuals(theta: FloatArray, d: _Design) -> FloatArray:
    """Per-seat score residuals ``s_i - p_i`` (0 on padding); their sums are the gradient."""
    p, _ = _probabilities(theta, d)
    return np.where(d.mask, d.scores - p, 0.0)


def _gradient(theta: FloatArray, d: _Design) -> FloatArray:
    """Gradient of the log-likelihood: for each entrant, actual minus expected wins."""
    grad = np.zeros(len(d.names))
    np.add.at(grad, d.idx[d.mask], _residuals(theta, d)[d.mask])
    return grad


def _information(theta: FloatArray, d: _Design) -> FloatArray:
    """Observed information (minus the Hessian): ``sum_g diag(p_g) - p_g p_g^T``."""
    p, _ = _probabilities(theta, d)
    n = len(d.names)
    info = np.zeros((n, n))
    for a in range(_MAX_SEATS):
        real_a = d.mask[:, a]
        np.add.at(info, (d.idx[real_a, a], d.idx[real_a, a]), p[real_a, a])
        for b in range(_MAX_SEATS):
            both = real_a & d.mask[:, b]
            np.add.at(info, (d.idx[both, a], d.idx[both, b]), -p[both, a] * p[both, b])
    return info


def _mle_exists(d: _Design) -> bool:
    """True when the plain MLE is finite: the 'i scored against j' digraph is strongly connected.

    Along a direction ``v`` the likelihood is non-decreasing for ever iff in every game all
    positive scorers sit at the table maximum of ``v``; taking ``v`` as the indicator of the
    top level set shows this fails for all non-constant ``v`` exactly when, for every proper
    subset ``S``, some entrant outside ``S`` scored at a table with someone inside ``S``.
    """
    n = len(d.names)
    beats: list[set[int]] = [set() for _ in range(n)]
    for g in range(d.idx.shape[0]):
        for a in range(_MAX_SEATS):
            if not d.mask[g, a] or d.scores[g, a] <= 0.0:
                continue
            for b in range(_MAX_SEATS):
                if b != a and d.mask[g, b]:
                    beats[int(d.idx[g, a])].add(int(d.idx[g, b]))
    return _strongly_connected(beats)


def _strongly_connected(edges: list[set[int]]) -> bool:
    """Whether the digraph with ``edges[i]`` the successors of ``i`` is strongly connected:
    every node is reached from node 0 along the edges and along the edges reversed."""
    if not edges:
        return False
    reverse: list[set[int]] = [set() for _ in edges]
    for node, successors in enumerate(edges):
        for successor in successors:
            reverse[successor].add(node)
    for graph in (edges, reverse):
        seen, todo = {0}, [0]
        while todo:
            for successor in graph[todo.pop()]:
                if successor not in seen:
                    seen.add(successor)
                    todo.append(successor)
        if len(seen) < len(edges):
            return False
    return True


def _fit_theta(d: _Design, ridge: float) -> FloatArray:
    """Maximise the (optionally ridge-penalised) log-likelihood; return mean-zero strengths.

    The objective adds ``(sum theta)^2 / 2``, which pins the mean at zero without changing the
    likelihood (it is invariant to a common shift), so the Hessian is positive definite.
    """
    n = len(d.names)
    ones = np.ones((n, n))

    def objective(theta: FloatArray) -> float:
        total = float(theta.sum())
        return -_log_likelihood(theta, d) + 0.5 * ridge * float(theta @ theta) + 0.5 * total * total

    def jac(theta: FloatArray) -> FloatArray:
        return -_gradient(theta, d) + ridge * theta + theta.sum()

    def hess(theta: FloatArray) -> FloatArray:
        return _information(theta, d) + ridge * np.eye(n) + ones

    # The objective is strictly convex with an exact Hessian: damped Newton steps from zero
    # reach its minimum. They go on to a gradient of _GRADIENT_GOAL, or until rounding stops
    # any further progress; the fit must then be within a tolerance that scales with the number
    # of games (with many games the objective is large, and so is its rounding).
    theta = np.zeros(n)
    value = objective(theta)
    tolerance = 1e-9 * max(1.0, float(d.idx.shape[0]))
    for _ in range(_NEWTON_STEPS):
        gradient = jac(theta)
        largest = float(np.abs(gradient).max())
        if largest <= _GRADIENT_GOAL or not math.isfinite(largest):
            break
        step = np.linalg.solve(hess(theta), gradient)
        scale = 1.0
        moved = theta - step
        moved_value = objective(moved)
        while scale > 1e-6 and moved_value > value:
            scale *= 0.5
            moved = theta - scale * step
            moved_value = objective(moved)
        if moved_value >= value and largest <= tolerance:
            break  # rounding: no step lowers the objective any more
        theta, value = moved, moved_value
    else:
        largest = float(np.abs(jac(theta)).max())
    if not largest <= tolerance:  # also when it is not a number
        raise RuntimeError(f"rating fit did not converge (largest gradient {largest:.3g})")
    return theta - theta.mean()


def _sandwich(theta: FloatArray, d: _Design, ridge: float) -> FloatArray | None:
    """Cluster-robust covariance ``c * B^+ M B^+`` of the mean-zero strengths.

    ``B = sum_g (diag p_g - p_g p_g^T) + ridge * I`` is the bread (information),
    ``M = sum_c u_c u_c^T`` the meat, with ``u_c`` the summed score residual vector of cluster
    ``c`` (its ridge share ``ridge * theta / C`` subtracted), ``+`` the Moore-Penrose
    pseudo-inverse (the information is singular along the all-ones direction) and
    ``c = C / (C - 1)`` the small-sample factor for ``C`` clusters. Returns ``None`` when
    ``C < 2``: one cluster cannot estimate a variance.
    """
    n_clusters = d.n_clusters
    if n_clusters < 2:
        return None
    n = len(d.names)
    resid = _residuals(theta, d)
    per_cluster = np.zeros((n_clusters, n))
    cl = np.broadcast_to(d.cluster[:, None], d.idx.shape)
    np.add.at(per_cluster, (cl[d.mask], d.idx[d.mask]), resid[d.mask])
    per_cluster -= ridge * theta / n_clusters
    meat = per_cluster.T @ per_cluster
    bread = _information(theta, d) + ridge * np.eye(n)
    if ridge == 0.0:
        # Without a ridge the information's null space is exactly the all-ones direction (the
        # fit exists only for a connected design), so B^+ = (B + J)^-1 - J with J = 11^T / n,
        # the projector onto it. (A numerical pseudo-inverse may keep that direction's rounding
        # noise as an eigenvalue of 1e-14 and blow it up to 1e13, which centring then cancels
        # with a loss of precision of several per cent in small fits.)
        ones = np.full((n, n), 1.0 / n)
        inv = np.linalg.inv(bread + ones) - ones
    else:
        inv = np.linalg.inv(bread)
    cov = inv @ meat @ inv * (n_clusters / (n_clusters - 1))
    return np.asarray(0.5 * (cov + cov.T), dtype=np.float64)


# --------------------------------------------------------------------------- public API


def fit_ratings(
    games: Sequence[GameResult],
    anchor: str | None = None,
    *,
    ridge: float | None = None,
    base: float = BASE_ELO,
) -> Ratings:
    """Fit Elo-scale ratings to all ``games`` at once by maximum likelihood.

    ``base`` is the Elo of the mean entrant, or of ``anchor`` when one is given (1500 unless
    said otherwise); it shifts every rating and interval alike.

    The model is Bradley-Terry for two seats and its Luce generalisation for three or four:
    ``P(seat i wins) = exp(theta_i) / sum_{j at table} exp(theta_j)``; a shared win counts as a
    fractional win (a two-player draw is half a win each). The fit is one maximisation over all
    games, which are first put in a canonical order, so the result does not depend on the order
    of ``games`` at all (bit for bit).

    Worked example (two players, A beats B in 3 of 4 games). With ``d = theta_A - theta_B`` and
    ``q = 1 / (1 + exp(-d))`` the log-likelihood is ``3 log q + log(1 - q)``; its derivative in
    ``d`` is ``3 (1 - q) - q``, zero at ``q = 3/4``, i.e. ``d = ln 3``. On the Elo scale the gap
    is ``(400 / ln 10) * ln 3 = 400 * log10(3) ~ 190.85``. One win and one draw in two games is
    the same likelihood up to a factor of 2 (1.5 wins of 2), hence the same gap.

    Elo scale: ``elo_i = 1500 + (400 / ln 10) * (theta_i - c)`` where ``c`` is the mean of all
    strengths, or the strength of ``anchor`` when given (then the anchor is exactly 1500).

    Ridge: the plain MLE is infinite when the entrants cannot be ordered from the data, e.g.
    someone won (or lost) every game, or two groups never met; exactly when the digraph "i
    scored at a table with j" is not strongly connected. Only then, unless ``ridge`` is given,
    a penalty ``AUTO_RIDGE / 2 * sum theta_i^2`` (a Normal(0, 10^2) prior on the natural-log
    strengths, sd about 1737 Elo) is added; ``Ratings.ridge`` records the penalty used.

    Intervals: 95% Wald intervals ``elo +- 1.96 * se`` with the cluster-robust (sandwich)
    covariance ``C/(C-1) * B^+ M B^+``, where ``B`` is the information matrix
    ``sum_g (diag p_g - p_g p_g^T)`` (plus the ridge), ``M = sum_c u_c u_c^T`` sums over each
    ``unit`` the outer product of that unit's total score residual ``u_c = sum_{g in c} (s_g -
    p_g)``, ``+`` is the pseudo-inverse and ``C`` the number of distinct units. Games within a
    unit may be arbitrarily correlated; units are assumed independent. For the anchored scale
    the variance of ``theta_i - theta_anchor`` is used. With fewer than two units the interval
    is ``(-inf, inf)``. The covariance itself is kept in ``Ratings.covariance`` for
    :meth:`Ratings.los`.

    Raises ``ValueError`` if ``anchor`` never played, ``RuntimeError`` if the fit fails.
    """
    ordered = _canonical(games)
    if not ordered:
        if anchor is not None:
            raise ValueError(f"anchor {anchor!r} played no games")
        return Ratings((), anchor, 0.0, 0, 0, base=base)
    d = _design(ordered)
    if anchor is not None and anchor not in d.names:
        raise ValueError(f"anchor {anchor!r} played no games")
    if ridge is None:
        ridge = 0.0 if _mle_exists(d) else AUTO_RIDGE
    if ridge < 0.0:
        raise ValueError("ridge must be non-negative")
    theta = _fit_theta(d, ridge)
    cov = _sandwich(theta, d, ridge)

    n = len(d.names)
    if anchor is None:
        shift = 0.0
        contrast = np.eye(n)
    else:
        a = d.names.index(anchor)
        shift = float(theta[a])
        contrast = np.eye(n)
        contrast[:, a] -= 1.0
    variances = None if cov is None else np.diag(contrast @ cov @ contrast.T)

    played = np.zeros(n, dtype=np.intp)
    np.add.at(played, d.idx[d.mask], 1)
    out: list[Rating] = []
    for i, name in enumerate(d.names):
        elo = base + ELO_PER_NAT * (float(theta[i]) - shift)
        if anchor == name:
            elo = base
        if variances is None:
            lo, hi = -math.inf, math.inf
        else:
            half = _Z * ELO_PER_NAT * math.sqrt(max(float(variances[i]), 0.0))
            lo, hi = elo - half, elo + half
        out.append(Rating(name, elo, lo, hi, int(played[i])))
    out.sort(key=lambda r: (-r.elo, r.name))
    covariance = None if cov is None else tuple(tuple(float(x) for x in row) for row in cov)
    return Ratings(
        tuple(out), anchor, float(ridge), len(ordered), d.n_clusters, d.names, covariance, base
    )


def wilson_interval(score: float, n: int, confidence: float = _CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval for a proportion: ``score`` successes out of ``n`` trials.

    ``score`` may be fractional (a draw counts half). With ``p = score / n`` and ``z`` the
    normal quantile ``scipy.stats.norm.ppf(0.5 + confidence / 2)`` (1.96 for 95%)::

        centre = (2 n p + z^2) / (2 (n + z^2))
        half   = z sqrt(z^2 + 4 n p (1 - p)) / (2 (n + z^2))

    and the interval is ``[centre - half, centre + half]``, with the lower end exactly 0 when
    ``score`` is 0 and the upper end exactly 1 when ``score`` is ``n``. For whole numbers of
    successes this is ``scipy.stats.binomtest(k, n).proportion_ci(confidence,
    method="wilson")``. Raises ``ValueError`` unless ``n > 0`` and ``0 <= score <= n``.
    """
    if n <= 0:
        raise ValueError(f"a proportion needs at least one trial, got n={n}")
    if not 0.0 <= score <= n:
        raise ValueError(f"score {score} is not between 0 and n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = score / n
    denom = 2.0 * (n + z * z)
    centre = (2.0 * n * p + z * z) / denom
    half = z / denom * math.sqrt(4.0 * n * p * (1.0 - p) + z * z)
    lo = 0.0 if score <= 0.0 else max(centre - half, 0.0)
    hi = 1.0 if score >= n else min(centre + half, 1.0)
    return lo, hi


def win_rates(games: Sequence[GameResult]) -> dict[str, WinRate]:
    """Per entrant: score share over games played, with a 95% Wilson score interval.

    ``rate = score / games`` where ``score`` sums the entrant's shares (a win shared by ``k``
    counts ``1/k``, so a two-player draw is half a win). The interval is
    :func:`wilson_interval` with that (possibly fractional) score; for a whole number of wins
    it equals ``scipy.stats.binomtest(k, games).proportion_ci(0.95, method="wilson")``.
    Games are treated as independent here (not units); note the chance level is ``1/table
    size``, not 1/2, at three- and four-player tables. The result is keyed and ordered by name.
    """
    totals: dict[str, float] = {}
    played: dict[str, int] = {}
    for g in _canonical(games):
        for name, share in zip(g.players, g.scores, strict=True):
            totals[name] = totals.get(name, 0.0) + share
            played[name] = played.get(name, 0) + 1
    out: dict[str, WinRate] = {}
    for name in sorted(totals):
        n = played[name]
        score = min(max(totals[name], 0.0), float(n))
        lo, hi = wilson_interval(score, n)
        out[name] = WinRate(name, score / n, lo, hi, n, totals[name])
    return out
