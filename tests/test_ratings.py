"""Rating maths against hand-worked examples."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
from scipy import stats

from leaderboard.ratings import (
    AUTO_RIDGE,
    ELO_PER_NAT,
    GameResult,
    fit_ratings,
    wilson_interval,
    win_rates,
)

Z95 = float(stats.norm.ppf(0.975))


def duel(winner: str, loser: str, unit: str) -> GameResult:
    """A two-player game ``winner`` beats ``loser`` (seat order winner, loser)."""
    return GameResult((winner, loser), (1.0, 0.0), unit)


def draw(a: str, b: str, unit: str) -> GameResult:
    """A two-player shared win."""
    return GameResult((a, b), (0.5, 0.5), unit)


def three_of_four(prefix: str = "u") -> list[GameResult]:
    """A beats B three times, B beats A once; one unit per game."""
    return [duel("A", "B", f"{prefix}{i}") for i in range(3)] + [duel("B", "A", f"{prefix}3")]


def test_elo_scale_constant() -> None:
    assert math.isclose(ELO_PER_NAT, 400 / math.log(10))


def test_bradley_terry_three_of_four() -> None:
    # d = ln 3 solves 3(1 - q) - q = 0 with q = logistic(d); Elo gap = 400 log10 3.
    r = fit_ratings(three_of_four())
    assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r["A"].elo - r["B"].elo == pytest.approx(190.85, abs=0.01)
    assert (r["A"].elo + r["B"].elo) / 2 == pytest.approx(1500, abs=1e-9)
    assert r.ridge == 0.0
    assert [x.name for x in r.ratings] == ["A", "B"]
    assert r["A"].games == r["B"].games == 4


def test_bradley_terry_interval_by_hand() -> None:
    # One game per unit: the meat sum_g (s - p)^2 = n p (1 - p) equals the information at the
    # MLE, so Var(d) = 1 / (4 * 3/16) = 4/3, times C/(C-1) = 4/3 -> 16/9. Each rating is +-d/2.
    r = fit_ratings(three_of_four())
    se = ELO_PER_NAT * math.sqrt(16 / 9) / 2
    assert r["A"].hi - r["A"].elo == pytest.approx(Z95 * se, rel=1e-6)
    assert r["A"].elo - r["A"].lo == pytest.approx(Z95 * se, rel=1e-6)


def test_draw_counts_half() -> None:
    # One win and one draw: 1.5 of 2, the same likelihood shape as 3 of 4.
    games = [duel("A", "B", "u0"), draw("A", "B", "u1")]
    r = fit_ratings(games)
    assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r.ridge == 0.0


def test_symmetric_results_give_equal_ratings() -> None:
    games = [duel("A", "B", "u0"), duel("B", "A", "u1"), draw("A", "B", "u2")]
    r = fit_ratings(games)
    assert r["A"].elo == pytest.approx(1500, abs=1e-9)
    assert r["B"].elo == pytest.approx(1500, abs=1e-9)


def test_order_independence_is_exact() -> None:
    games = [
        duel("A", "B", "p0"),
        duel("B", "C", "p0"),
        GameResult(("C", "A", "B"), (1.0, 0.0, 0.0), "p1"),
        GameResult(("A", "B", "C", "D"), (0.5, 0.5, 0.0, 0.0), "p1"),
        duel("D", "A", "p2"),
        duel("C", "D", "p3"),
        duel("B", "D", "p3"),
        GameResult(("D", "C", "B"), (0.0, 0.0, 1.0), "p4"),
    ]
    base = fit_ratings(games)
    rng = random.Random(7)
    for _ in range(5):
        shuffled = games[:]
        rng.shuffle(shuffled)
        assert fit_ratings(shuffled) == base
        assert win_rates(shuffled) == win_rates(games)


def test_three_player_cycle_gives_equal_ratings() -> None:
    games = [duel("A", "B", "u0"), duel("B", "C", "u1"), duel("C", "A", "u2")]
    r = fit_ratings(games)
    for name in "ABC":
        assert r[name].elo == pytest.approx(1500, abs=1e-6)


def test_luce_single_table_closed_form() -> None:
    # Every game at the same table A,B,C: the Luce MLE makes p_i = wins_i / n, so
    # exp(theta_i) is proportional to wins. A 2 wins, B 1, C 1 -> A - B = 400 log10 2.
    games = [
        GameResult(("A", "B", "C"), (1.0, 0.0, 0.0), "u0"),
        GameResult(("B", "C", "A"), (0.0, 0.0, 1.0), "u1"),
        GameResult(("C", "A", "B"), (0.0, 0.0, 1.0), "u2"),
        GameResult(("A", "C", "B"), (0.0, 1.0, 0.0), "u3"),
    ]
    r = fit_ratings(games)
    assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert r["B"].elo == pytest.approx(r["C"].elo, abs=1e-6)
    assert sum(x.elo for x in r.ratings) / 3 == pytest.approx(1500, abs=1e-9)


def test_luce_shared_win_is_fractional() -> None:
    # A and B share one win at A,B,C; C wins once; A wins once. Wins: A 1.5, B 0.5, C 1.
    games = [
        GameResult(("A", "B", "C"), (0.5, 0.5, 0.0), "u0"),
        GameResult(("A", "B", "C"), (0.0, 0.0, 1.0), "u1"),
        GameResult(("A", "B", "C"), (1.0, 0.0, 0.0), "u2"),
    ]
    r = fit_ratings(games)
    assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r["A"].elo - r["C"].elo == pytest.approx(400 * math.log10(1.5), abs=1e-6)


def score_equations(games: list[GameResult], elo: dict[str, float]) -> dict[str, float]:
    """Independent check: actual minus expected wins per entrant at the given ratings."""
    out = dict.fromkeys(elo, 0.0)
    for g in games:
        w = np.array([math.exp(elo[p] / ELO_PER_NAT) for p in g.players])
        p = w / w.sum()
        for name, s, prob in zip(g.players, g.scores, p, strict=True):
            out[name] += s - prob
    return out


def test_mixed_tables_satisfy_score_equations() -> None:
    games = [
        GameResult(("A", "B", "C"), (1.0, 0.0, 0.0), "u0"),
        GameResult(("A", "B", "C"), (0.0, 1.0, 0.0), "u1"),
        GameResult(("A", "B", "C", "D"), (0.0, 0.0, 0.5, 0.5), "u2"),
        GameResult(("D", "A"), (0.0, 1.0), "u3"),
        GameResult(("D", "B", "C"), (1.0, 0.0, 0.0), "u4"),
        GameResult(("C", "A"), (1.0, 0.0), "u5"),
        GameResult(("B", "D", "A", "C"), (0.0, 0.0, 1.0, 0.0), "u6"),
    ]
    r = fit_ratings(games)
    assert r.ridge == 0.0
    residual = score_equations(games, {x.name: x.elo for x in r.ratings})
    assert max(abs(v) for v in residual.values()) < 1e-8


def test_anchor_pins_entrant_at_1500() -> None:
    r = fit_ratings(three_of_four(), anchor="B")
    assert r["B"].elo == 1500.0
    assert r["B"].lo == r["B"].hi == 1500.0
    assert r["A"].elo == pytest.approx(1500 + 400 * math.log10(3), abs=1e-6)
    # Var(theta_A - theta_B) = 16/9 natural-log units squared.
    half = Z95 * ELO_PER_NAT * math.sqrt(16 / 9)
    assert r["A"].hi - r["A"].elo == pytest.approx(half, rel=1e-6)
    with pytest.raises(ValueError):
        fit_ratings(three_of_four(), anchor="Z")


def test_intervals_shrink_and_contain_estimate() -> None:
    widths = []
    for copies in (1, 4, 16):
        games = [g for c in range(copies) for g in three_of_four(prefix=f"c{c}u")]
        r = fit_ratings(games)
        for x in r.ratings:
            assert x.lo < x.elo < x.hi
        assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
        widths.append(r["A"].hi - r["A"].lo)
    assert widths[0] > widths[1] > widths[2]


def test_sandwich_duplicated_units() -> None:
    base = three_of_four()
    c = 4
    # Every game repeated inside its own unit: the cluster totals double, the information
    # doubles, so B^-1 M B^-1 is unchanged; the number of units is unchanged: same intervals.
    same_unit = base + [GameResult(g.players, g.scores, g.unit) for g in base]
    # Every game repeated in a fresh unit: information and meat both double, so the variance
    # halves, apart from the small-sample factor C/(C-1) -> 2C/(2C-1).
    fresh_unit = base + [GameResult(g.players, g.scores, g.unit + "x") for g in base]
    r0, r1, r2 = fit_ratings(base), fit_ratings(same_unit), fit_ratings(fresh_unit)
    w0 = r0["A"].hi - r0["A"].lo
    assert r1["A"].hi - r1["A"].lo == pytest.approx(w0, rel=1e-6)
    factor = math.sqrt(0.5 * (2 * c / (2 * c - 1)) / (c / (c - 1)))
    assert r2["A"].hi - r2["A"].lo == pytest.approx(w0 * factor, rel=1e-6)
    assert r1.units == 4 and r2.units == 8


def test_single_unit_has_unbounded_interval() -> None:
    games = [GameResult(g.players, g.scores, "only") for g in three_of_four()]
    r = fit_ratings(games)
    assert r["A"].elo - r["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r["A"].lo == -math.inf and r["A"].hi == math.inf
    data = json.loads(r.to_json())
    assert data["ratings"][0]["lo"] is None and data["ratings"][0]["hi"] is None


def test_perfect_record_uses_ridge() -> None:
    games = [duel("A", "B", f"u{i}") for i in range(3)]
    r = fit_ratings(games)
    assert r.ridge == AUTO_RIDGE
    assert math.isfinite(r["A"].elo) and r["A"].elo > r["B"].elo
    # Penalised score equation: 3 (1 - q) = ridge * d / 2 with d = theta_A - theta_B.
    d = (r["A"].elo - r["B"].elo) / ELO_PER_NAT
    q = 1 / (1 + math.exp(-d))
    assert 3 * (1 - q) == pytest.approx(AUTO_RIDGE * d / 2, abs=1e-9)


def test_to_json_round_trip() -> None:
    r = fit_ratings(three_of_four())
    data = json.loads(r.to_json())
    assert data["units"] == 4 and data["games"] == 4 and data["anchor"] is None
    assert [x["name"] for x in data["ratings"]] == ["A", "B"]
    assert data["ratings"][0]["elo"] == r["A"].elo


def test_empty_games() -> None:
    assert fit_ratings([]).ratings == ()
    assert win_rates([]) == {}


def test_game_result_validation() -> None:
    with pytest.raises(ValueError):
        GameResult(("A",), (1.0,), "u")
    with pytest.raises(ValueError):
        GameResult(("A", "A"), (1.0, 0.0), "u")
    with pytest.raises(ValueError):
        GameResult(("A", "B"), (1.0, 1.0), "u")
    with pytest.raises(ValueError):
        GameResult(("A", "B", "C"), (1.0, 0.0), "u")


def test_wilson_equals_scipy_for_whole_counts() -> None:
    for k, n in [(0, 1), (1, 1), (3, 4), (0, 10), (10, 10), (7, 20), (513, 1000)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        lo, hi = wilson_interval(k, n)
        assert lo == pytest.approx(float(ci.low), abs=1e-12)
        assert hi == pytest.approx(float(ci.high), abs=1e-12)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0


def test_wilson_fractional_by_hand() -> None:
    # 2.5 of 4: p = 0.625, z^2 = 3.841459, 2(n + z^2) = 15.682918,
    # centre = (5 + 3.841459) / 15.682918 = 0.563764,
    # half = 1.959964 * sqrt(3.75 + 3.841459) / 15.682918 = 0.344338 -> [0.219426, 0.908102].
    lo, hi = wilson_interval(2.5, 4)
    assert lo == pytest.approx(0.219426, abs=2e-6)
    assert hi == pytest.approx(0.908102, abs=2e-6)
    # Mirror image: 1.5 of 4 is 1 - (2.5 of 4), ends swapped.
    lo_m, hi_m = wilson_interval(1.5, 4)
    assert (lo_m, hi_m) == (pytest.approx(1 - hi), pytest.approx(1 - lo))
    # It sits between the intervals of the neighbouring whole counts.
    assert wilson_interval(2, 4)[0] < lo < wilson_interval(3, 4)[0]
    assert wilson_interval(2, 4)[1] < hi < wilson_interval(3, 4)[1]
    # A 90% interval is narrower.
    lo90, hi90 = wilson_interval(2.5, 4, confidence=0.90)
    assert lo < lo90 < hi90 < hi


def test_wilson_rejects_bad_input() -> None:
    for score, n in [(0, 0), (-0.5, 4), (4.5, 4)]:
        with pytest.raises(ValueError):
            wilson_interval(score, n)


def test_win_rate_wilson_with_draws() -> None:
    # A: 1 + 0.5 + 0 + 1 = 2.5 of 4 -> rate 0.625 and the fractional Wilson interval above.
    games = [
        duel("A", "B", "u0"),
        draw("A", "B", "u1"),
        duel("B", "A", "u2"),
        GameResult(("C", "A", "B"), (0.0, 1.0, 0.0), "u3"),
    ]
    rates = win_rates(games)
    a = rates["A"]
    assert a.rate == pytest.approx(0.625)
    assert a.games == 4 and a.score == pytest.approx(2.5)
    assert (a.lo, a.hi) == (pytest.approx(0.219426, abs=2e-6), pytest.approx(0.908102, abs=2e-6))
    b = rates["B"]
    assert b.rate == pytest.approx(1.5 / 4)
    assert (b.lo, b.hi) == (pytest.approx(1 - a.hi), pytest.approx(1 - a.lo))
    c = rates["C"]
    assert c.games == 1 and c.rate == 0.0
    # 0 of 1: centre = z^2 / (2 (1 + z^2)) = half, so the interval is [0, z^2 / (1 + z^2)].
    assert c.lo == 0.0 and c.hi == pytest.approx(Z95**2 / (1 + Z95**2))
    assert c.hi == pytest.approx(3.841459 / 4.841459, abs=1e-6)  # 0.793451
    assert list(rates) == ["A", "B", "C"]


def test_los_three_of_four_by_hand() -> None:
    # d = ln 3 and Var(d) = 16/9 (see test_bradley_terry_interval_by_hand), so
    # LOS(A > B) = Phi(ln 3 / (4/3)) = Phi(0.823959) = 0.795019.
    r = fit_ratings(three_of_four())
    assert r.difference_variance("A", "B") == pytest.approx(16 / 9, rel=1e-9)
    assert r.los("A", "B") == pytest.approx(0.795019, abs=1e-6)
    assert r.los("B", "A") == pytest.approx(1 - 0.795019, abs=1e-6)
    assert r.los("A", "A") == 0.5
    assert r.los_matrix() == {"A": {"B": r.los("A", "B")}, "B": {"A": r.los("B", "A")}}
    with pytest.raises(KeyError):
        r.los("A", "Z")


def test_los_same_with_anchor() -> None:
    # Anchoring moves the scale, not the difference or its variance.
    free, anchored = fit_ratings(three_of_four()), fit_ratings(three_of_four(), anchor="B")
    assert anchored.los("A", "B") == pytest.approx(free.los("A", "B"), abs=1e-9)


def test_los_undefined_with_one_unit() -> None:
    games = [GameResult(g.players, g.scores, "only") for g in three_of_four()]
    r = fit_ratings(games)
    assert r.covariance is None
    assert math.isnan(r.los("A", "B")) and math.isnan(r.los("B", "A"))


def test_los_with_zero_variance() -> None:
    # Each unit: one win each -> equal strengths, every unit residual is 0.5 - 0.5 = 0, so the
    # sandwich is exactly zero: LOS 0.5.
    balanced = [
        duel("A", "B", "u0"),
        duel("B", "A", "u0"),
        duel("A", "B", "u1"),
        duel("B", "A", "u1"),
    ]
    r = fit_ratings(balanced)
    assert r.difference_variance("A", "B") == pytest.approx(0.0, abs=1e-15)
    assert r.los("A", "B") == 0.5
    # Each unit 3 of 4: q = 3/4 and each unit's residual is 3 * 1/4 - 3/4 = 0, zero variance
    # but a gap of ln 3: the collapsed sandwich gives no LOS (NaN), not certainty.
    two_units = [GameResult(g.players, g.scores, u) for u in "uv" for g in three_of_four()]
    r2 = fit_ratings(two_units)
    assert r2.units == 2
    assert r2["A"].elo - r2["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r2.difference_variance("A", "B") == pytest.approx(0.0, abs=1e-15)
    assert math.isnan(r2.los("A", "B"))


def test_los_three_entrants_is_consistent() -> None:
    games = [
        duel("A", "B", "u0"),
        duel("A", "B", "u1"),
        duel("B", "A", "u2"),
        duel("B", "C", "u3"),
        duel("B", "C", "u4"),
        duel("C", "B", "u5"),
        duel("C", "A", "u6"),
        duel("A", "C", "u7"),
        duel("A", "C", "u8"),
    ]
    r = fit_ratings(games)
    m = r.los_matrix()
    assert list(m) == ["A", "B", "C"]
    for a in m:
        for b in m[a]:
            assert m[a][b] + m[b][a] == pytest.approx(1.0, abs=1e-12)
            # LOS above 1/2 exactly when a is rated above b.
            assert (m[a][b] > 0.5) == (r[a].elo > r[b].elo)
    # Order independence of the covariance, bit for bit.
    assert fit_ratings(games[::-1]).covariance == r.covariance


def test_fit_converges_on_thousands_of_games() -> None:
    """Regression: with 4,320 games the objective is large enough that trust-exact stopped
    short of an absolute tolerance and the fit raised (seed 12 did, before the Newton finish)."""
    rng = np.random.default_rng(12)
    names = ["a", "b", "c", "d", "e"]
    strength = dict(zip(names, [0.5, 0.3, 0.2, -0.4, -0.6], strict=True))
    games = []
    for deck in range(36):
        for x, y in itertools.combinations(names, 2):
            for k in range(12):
                first, second = (x, y) if k % 2 else (y, x)
                p_first = 1.0 / (1.0 + math.exp(strength[second] - strength[first]))
                won = bool(rng.random() < p_first)
                games.append(GameResult((first, second), (float(won), float(not won)), f"d{deck}"))
    ratings = fit_ratings(games)
    assert ratings.games == 4320
    # the fit is a maximum: the expected score of each entrant equals its actual score
    total = {n: 0.0 for n in names}
    expected = {n: 0.0 for n in names}
    for g in games:
        a, b = g.players
        p = 1.0 / (1.0 + 10 ** ((ratings[b].elo - ratings[a].elo) / 400.0))
        total[a] += g.scores[0]
        total[b] += g.scores[1]
        expected[a] += p
        expected[b] += 1.0 - p
    for n in names:
        assert expected[n] == pytest.approx(total[n], abs=1e-6)
