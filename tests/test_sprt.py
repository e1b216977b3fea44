"""The statistics of a match on paired decks (leaderboard.sprt): hand-worked cases, published
reference values, and the sequential test's error rates by seeded simulation of pair outcomes.

The simulated pairs follow a model of Love Letter pairs (see :func:`pair_outcomes`): a per-game
score from the true Elo difference, a few shared wins, and a deck that favours one seat, which
makes the two games of a pair negatively correlated. The correlation, -0.4, is what knowledge
against greedy gave on 3,000 balanced decks (docs/match.md, "The statistics").
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from leaderboard.sprt import (
    PAIR_TOTALS,
    GameCounts,
    PairCounts,
    Sprt,
    Verdict,
    count_game_pairs,
    count_games,
    count_pairs,
    elo_to_score,
    estimate,
    game_count_path,
    llr,
    llr_approx,
    llr_array,
    llr_bounds,
    pair_count_path,
    pair_total,
    score_to_elo,
    summary_line,
    verdict,
)

# --------------------------------------------------------------------------- counting


def test_pair_totals_and_counts() -> None:
    assert PAIR_TOTALS == (0.0, 0.5, 1.0, 1.5, 2.0)
    assert pair_total(1, 0) == 1.0
    assert pair_total(0.5, 1) == 1.5
    assert pair_total(0.5, 0.5) == 1.0
    counts = count_pairs([2, 1, 1, 0.5, 0, 1.5, 1])
    assert counts.counts == (1, 1, 3, 1, 1)
    assert (counts.pairs, counts.games, counts.points) == (7, 14, 7.0)
    assert counts.score == 0.5
    # A win each and two shared wins are both a total of 1.
    by_games = count_game_pairs([(1, 0), (0, 1), (0.5, 0.5), (1, 1), (0, 0.5)])
    assert by_games.counts == (0, 1, 3, 0, 1)
    assert by_games.add(1.5).counts == (0, 1, 3, 1, 1)
    assert count_games([1, 0, 0.5, 1]).counts == (1, 1, 2)
    assert PairCounts().pairs == 0 and PairCounts().score == 0.5


def test_count_paths() -> None:
    np.testing.assert_array_equal(
        pair_count_path([1, 2, 1, 0]),
        [[0, 0, 1, 0, 0], [0, 0, 1, 0, 1], [0, 0, 2, 0, 1], [1, 0, 2, 0, 1]],
    )
    np.testing.assert_array_equal(
        game_count_path([(1, 0), (0.5, 1), (0, 0)]), [[1, 0, 1], [1, 1, 2], [3, 1, 2]]
    )
    assert pair_count_path([[2, 0], [1, 1]]).shape == (2, 2, 5)


@pytest.mark.parametrize("bad", [3, -0.5, 0.25, 1.2, math.nan, math.inf])
def test_a_total_that_cannot_be_is_refused(bad: float) -> None:
    with pytest.raises(
        ValueError, match=re.escape("a pair's total must be one of 0, 0.5, 1, 1.5, 2, got")
    ):
        count_pairs([1, bad])
    with pytest.raises(ValueError, match="a pair's total"):
        pair_count_path([bad])


@pytest.mark.parametrize("bad", [2, -1, 0.3, math.nan])
def test_a_game_score_that_cannot_be_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=re.escape("a game's score must be one of 0, 0.5, 1, got")):
        pair_total(1, bad)
    with pytest.raises(ValueError, match="a game's score"):
        count_games([bad])
    with pytest.raises(ValueError, match="a game's score"):
        count_game_pairs([(0, bad)])


def test_counts_are_checked() -> None:
    with pytest.raises(ValueError, match="needs 5 counts"):
        PairCounts((1, 2, 3))
    with pytest.raises(ValueError, match="non-negative integers"):
        PairCounts((1, -1, 0, 0, 0))
    with pytest.raises(ValueError, match="non-negative integers"):
        GameCounts((1, 0.5, 0))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Elo and LOS

Z95 = 1.959963984540054


def test_logistic_elo_scale() -> None:
    # 3:1 odds are 400 log10 3 = 190.85 Elo; 10:1 odds are 400.
    assert score_to_elo(0.75) == pytest.approx(190.8485, abs=1e-4)
    assert score_to_elo(10 / 11) == pytest.approx(400.0)
    assert elo_to_score(-400.0) == pytest.approx(1 / 11)
    assert score_to_elo(0.5) == 0.0


def test_estimate_by_hand() -> None:
    # Ten pairs: one 0, three 1, two 1.5, four 2 (mean scores per game 0, .5, .75, 1).
    # s = (3*.5 + 2*.75 + 4*1) / 10 = 0.7
    # var = .1*.7^2 + .3*.2^2 + .2*.05^2 + .4*.3^2 = .049 + .012 + .0005 + .036 = 0.0975
    # se = sqrt(.0975 / 10) = 0.0987421; z se = 1.959964 * se = 0.1935309
    # scores [0.5064691, 0.8935309]; Elo 400 log10(.7/.3) = 147.1907,
    # lo 400 log10(.5064691/.4935309) = 4.4954, hi 400 log10(.8935309/.1064691) = 369.5545
    # LOS = Phi(.2 / .0987421) = Phi(2.025479) = 0.978591
    e = estimate(PairCounts((1, 0, 3, 2, 4)))
    assert e.score == pytest.approx(0.7)
    assert e.elo == pytest.approx(147.1907, abs=1e-4)
    assert e.elo_lo == pytest.approx(4.4954, abs=1e-4)
    assert e.elo_hi == pytest.approx(369.5545, abs=1e-4)
    assert e.error == pytest.approx((369.5545 - 4.4954) / 2, abs=1e-4)
    assert e.los == pytest.approx(0.978591, abs=1e-6)


def test_a_symmetric_sample_is_even() -> None:
    # s = 0.5, var = .25*.25 + .25*.25 = 0.125, se = sqrt(.125/4) = 0.1767767, z se = 0.3464760
    # scores [.1535240, .8464760]: +-400 log10(.8464760/.1535240) = +-296.5753 Elo.
    e = estimate(PairCounts((1, 0, 2, 0, 1)))
    assert (e.score, e.elo, e.los) == (0.5, 0.0, 0.5)
    assert e.elo_hi == pytest.approx(296.5753, abs=1e-4)
    assert e.elo_lo == pytest.approx(-e.elo_hi)


def test_all_wins_is_bounded() -> None:
    # Three pairs, all won twice: var = 0, so the floor v1/(N+1) = (1/8)/4 = 0.03125 holds;
    # se = sqrt(.03125/3) = 0.1020621, z se = 0.2000380, lower score 0.7999620 -> 240.7828 Elo.
    # 6 games: scores are clamped to 1 - 1/(2*7), so Elo = 400 log10(13) = 445.5773 (upper
    # end too). LOS = Phi(.5/.1020621) = Phi(4.898979) = 0.99999952.
    e = estimate(PairCounts((0, 0, 0, 0, 3)))
    assert e.score == 1.0
    assert e.elo == pytest.approx(445.5773, abs=1e-4)
    assert e.elo_hi == pytest.approx(445.5773, abs=1e-4)
    assert e.elo_lo == pytest.approx(240.7828, abs=1e-4)
    assert e.los == pytest.approx(0.99999952, abs=1e-8)
    # All losses mirror it.
    m = estimate(PairCounts((3, 0, 0, 0, 0)))
    assert (m.elo, m.elo_lo, m.elo_hi, m.los) == pytest.approx(
        (-e.elo, -e.elo_hi, -e.elo_lo, 1 - e.los)
    )


def test_one_pair_is_bounded() -> None:
    # One pair won twice: floor (1/8)/2, se = .25, lower score 1 - .4899910 = .5100090 -> 6.9559;
    # 2 games: clamp at 1 - 1/6, 400 log10(5) = 279.5880.
    e = estimate(PairCounts((0, 0, 0, 0, 1)))
    assert e.elo == pytest.approx(279.5880, abs=1e-4)
    assert e.elo_lo == pytest.approx(6.9559, abs=1e-4)
    assert e.los == pytest.approx(stats.norm.cdf(2.0))


def test_identical_bots_narrow_as_pairs_come() -> None:
    # Every pair split one-one (two identical deterministic bots): var = 0, floor (1/8)/11 with
    # ten pairs: se = sqrt(.0113636/10) = 0.0337100, z se = 0.0660704 -> +-46.1804 Elo.
    e = estimate(PairCounts((0, 0, 10, 0, 0)))
    assert (e.elo, e.los) == (0.0, 0.5)
    assert e.elo_hi == pytest.approx(46.1804, abs=1e-4)
    wider = estimate(PairCounts((0, 0, 3, 0, 0)))
    narrower = estimate(PairCounts((0, 0, 100, 0, 0)))
    assert narrower.elo_hi < e.elo_hi < wider.elo_hi


def test_no_games_no_estimate() -> None:
    with pytest.raises(ValueError, match="no games counted"):
        estimate(PairCounts())
    with pytest.raises(ValueError, match="confidence"):
        estimate(PairCounts((0, 0, 1, 0, 0)), confidence=1.0)


# Published reference values: fastchess's tests of its pentanomial Elo model,
# https://github.com/Disservin/fastchess/blob/master/app/tests/elo_test.cpp ("EloPentanomial
# 1-3"); fastchess's Stats(LL, LD, WL, DD, WD, WW) puts WL and DD in our total-1 cell. diff()
# is the Elo, error() the half-width (elo(hi) - elo(lo)) / 2, los() the LOS in percent.
FASTCHESS_ELO = [
    ((34, 54, 31, 32, 64, 75), 55.58, 27.65, 100.00),
    ((332, 433, 457, 41, 333, 334), -8.64, 10.33, 5.05),
    ((7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95, None),
]


@pytest.mark.parametrize(("stats_", "elo", "error", "los"), FASTCHESS_ELO)
def test_fastchess_elo_reference(
    stats_: tuple[int, ...], elo: float, error: float, los: float | None
) -> None:
    ll, ld, wl, dd, wd, ww = stats_
    e = estimate(PairCounts((ll, ld, wl + dd, wd, ww)))
    assert round(e.elo, 2) == elo
    assert round(e.error, 2) == error
    if los is not None:
        assert round(100 * e.los, 2) == los


def test_interval_coverage_by_simulation() -> None:
    # 400 samples of 100 pairs at a true difference of +20 Elo: the 95% interval should cover
    # +20 in about 95% of them (binomial 99.9% band around 0.95).
    rng = np.random.default_rng(20251123)
    games = simulated_pairs(20.0, runs=400, pairs=100, rng=rng)
    covered = 0
    for run in games:
        e = estimate(count_game_pairs(run.tolist()))
        covered += e.elo_lo <= 20.0 <= e.elo_hi
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 400, 0.95)
    assert lo <= covered <= hi


# --------------------------------------------------------------------------- the SPRT


def test_bounds() -> None:
    # ln(0.05/0.95) = -ln 19 = -2.944439, ln(0.95/0.05) = ln 19. fishtest and fastchess print
    # them as "LLR: 2.94 (-2.94,2.94)": fishtest's stat_util.SPRT,
    # https://github.com/official-stockfish/fishtest/blob/master/server/fishtest/stats/stat_util.py
    # and, for example, "LLR | 2.96 (-2.94, 2.94) [0.00, 3.00]" in
    # https://github.com/official-clockwork/Clockwork/pull/364
    lower, upper = llr_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    assert (round(lower, 2), round(upper, 2)) == (-2.94, 2.94)
    # alpha = 0.05, beta = 0.1: ln(.1/.95) = -2.251292, ln(.9/.05) = ln 18 = 2.890372.
    assert llr_bounds(0.05, 0.1) == pytest.approx((-2.251292, 2.890372), abs=1e-6)


@pytest.mark.parametrize(("alpha", "beta"), [(0, 0.05), (0.05, 1), (0.6, 0.4), (-0.1, 0.1)])
def test_bad_error_rates_are_refused(alpha: float, beta: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        llr_bounds(alpha, beta)


def test_llr_by_hand() -> None:
    # Three games, one lost, one shared, one won (values 0, .5, 1; no empty cell), H0: 0 Elo
    # (s0 = .5), H1: 400 log10 3 Elo (s1 = .75). The likeliest distribution with mean .5 is the
    # observed one: its term is 0. With mean .75 it is f_k / (1 + x (a_k - .75)) where x solves
    # sum_k (a_k - .75) / (1 + x (a_k - .75)) = 0; with u = x/4:
    #   -3/(1 - 3u) - 1/(1 - u) + 1/(1 + u) = 0  ->  9u^2 - 2u - 3 = 0  ->  u = (1 - 2 sqrt 7)/9
    # (the root with 1 - 3u > 0 and 1 + u > 0), and its term is
    #   1/3 ln((1 - 3u)(1 - u^2)) = 1/3 ln((160 + 112 sqrt 7) / 243).
    # LLR = 3 (0 - that) = -ln((160 + 112 sqrt 7)/243) = -0.6301420.
    counts = GameCounts((1, 1, 1))
    elo1 = 400 * math.log10(3)
    assert llr(counts, 0.0, elo1) == pytest.approx(-0.6301420, abs=1e-7)
    # The normal approximation: s = .5, var = (.25 + 0 + .25)/3 = 1/6,
    # 3 (.5 - .625)(.25) / (1/6) = -0.5625.
    assert llr_approx(counts, 0.0, elo1) == pytest.approx(-0.5625)


def test_llr_symmetries() -> None:
    counts = PairCounts((3, 1, 9, 2, 5))
    assert llr(counts, 10.0, 10.0) == 0.0
    assert llr(counts, 0.0, 30.0) == pytest.approx(-llr(counts, 30.0, 0.0))
    # Seen from B: the counts reversed and both hypotheses negated.
    mirrored = PairCounts(tuple(reversed(counts.counts)))
    assert llr(mirrored, 0.0, -30.0) == pytest.approx(llr(counts, 0.0, 30.0))
    assert llr(PairCounts(), 0.0, 30.0) == 0.0
    assert llr_approx(PairCounts(), 0.0, 30.0) == 0.0


# Published reference values: fastchess's SPRT tests for the logistic model,
# https://github.com/Disservin/fastchess/blob/master/app/tests/sprt_test.cpp ("logistic
# pentanomial 1-2": Stats(LL, LD, WL, DD, WD, WW); "logistic trinomial 1-2": Stats(W, L, D)),
# all with alpha = beta = 0.05; fastchess checks them to 1%.
FASTCHESS_PENTANOMIAL = [
    ((223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, -3.07),
    ((871, 26175, 55003, 980, 26678, 821), 0.0, 2.0, -4.98),
]
FASTCHESS_TRINOMIAL = [
    ((21404, 21184, 40708), 0.5, 2.5, -1.57),
    ((57433, 57030, 106593), 0.0, 2.0, -2.59),
]


@pytest.mark.parametrize(("stats_", "elo0", "elo1", "expected"), FASTCHESS_PENTANOMIAL)
def test_fastchess_pentanomial_llr(
    stats_: tuple[int, ...], elo0: float, elo1: float, expected: float
) -> None:
    ll, ld, wl, dd, wd, ww = stats_
    counts = PairCounts((ll, ld, wl + dd, wd, ww))
    assert round(llr(counts, elo0, elo1), 2) == expected
    # On large samples and a narrow Elo span the normal approximation agrees.
    assert llr_approx(counts, elo0, elo1) == pytest.approx(llr(counts, elo0, elo1), rel=1e-3)


@pytest.mark.parametrize(("stats_", "elo0", "elo1", "expected"), FASTCHESS_TRINOMIAL)
def test_fastchess_trinomial_llr(
    stats_: tuple[int, ...], elo0: float, elo1: float, expected: float
) -> None:
    wins, losses, draws = stats_
    assert round(llr(GameCounts((losses, draws, wins)), elo0, elo1), 2) == expected


def test_few_pairs_do_not_decide() -> None:
    # Three pairs won twice each, H0: 0 against H1: 40 Elo. The likeliest distribution with
    # mean s puts the missing mass on the empty cells: worth little evidence. The normal
    # approximation divides by a variance of almost 0 and would accept H1 at once.
    counts = PairCounts((0, 0, 0, 0, 3))
    _, upper = llr_bounds(0.05, 0.05)
    assert 0.0 < llr(counts, 0.0, 40.0) < 0.5
    assert llr_approx(counts, 0.0, 40.0) > 10 * upper


def test_llr_array_matches_llr() -> None:
    rows = np.array([[3, 1, 9, 2, 5], [0, 0, 4, 0, 0], [0, 0, 0, 0, 0], [7, 0, 1, 0, 0]])
    values = llr_array(rows, 0.0, 25.0)
    assert values.shape == (4,)
    for row, value in zip(rows, values, strict=True):
        assert value == pytest.approx(llr(PairCounts(tuple(int(c) for c in row)), 0.0, 25.0))
    with pytest.raises(ValueError, match="3 or 5 cells"):
        llr_array([1, 2, 3, 4], 0.0, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        llr_array([1, -2, 3], 0.0, 1.0)


def test_verdict() -> None:
    bounds = (-2.94, 2.94)
    assert verdict(2.94, bounds, 10) == "H1"
    assert verdict(-2.94, bounds, 10) == "H0"
    assert verdict(1.0, bounds, 10) is None
    assert verdict(1.0, bounds, 10, max_pairs=10) == "inconclusive"
    assert verdict(1.0, bounds, 9, max_pairs=10) is None
    # A bound reached on the last allowed pair still decides.
    assert verdict(3.0, bounds, 10, max_pairs=10) == "H1"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5.0, "elo1": 0.0}, "elo0 must be below elo1"),
        ({"elo0": 5.0, "elo1": 5.0}, "elo0 must be below elo1"),
        ({"elo0": 0.0, "elo1": math.inf}, "finite"),
        ({"elo0": math.nan, "elo1": 5.0}, "finite"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.5, "beta": 0.5}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "max_pairs": 0}, "at least 1"),
    ],
)
def test_a_test_that_cannot_be_is_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sprt(**kwargs)  # type: ignore[arg-type]


def test_sprt_state_and_first_stop_agree() -> None:
    # Walking a path must stop exactly where the test on the counts so far first decides.
    rng = np.random.default_rng(7)
    totals = rng.choice(PAIR_TOTALS, p=[0.1, 0.01, 0.6, 0.01, 0.28], size=300)
    test = Sprt(0.0, 40.0)
    decided, pairs = test.first_stop(pair_count_path(totals))
    assert decided == "H1"
    for n in range(1, pairs):
        assert test.verdict(count_pairs(totals[:n])) is None
    assert test.verdict(count_pairs(totals[:pairs])) == "H1"


def test_first_stop_runs_out() -> None:
    undecided = pair_count_path([1, 2, 0, 1])
    assert Sprt(0.0, 40.0).first_stop(undecided) == (None, 4)
    assert Sprt(0.0, 40.0, max_pairs=3).first_stop(undecided) == ("inconclusive", 3)
    assert Sprt(0.0, 40.0).first_stops(np.zeros((2, 0, 5))) == [(None, 0), (None, 0)]
    with pytest.raises(ValueError, match="2-D"):
        Sprt(0.0, 40.0).first_stop([1, 0, 0, 0, 0])


def test_identical_bots_accept_h0_but_not_at_once() -> None:
    # Two identical deterministic bots split every pair: the score is exactly 0.5, but one
    # pair proves little. H0 (0 Elo) is accepted after some tens of pairs.
    decided, pairs = Sprt(0.0, 40.0).first_stop(pair_count_path([1.0] * 200))
    assert decided == "H0"
    assert 10 < pairs < 100


# --------------------------------------------------------------------------- the live line


def test_summary_line() -> None:
    counts = PairCounts((1, 0, 3, 2, 4))
    test = Sprt(0.0, 40.0)
    assert summary_line(counts, test) == (
        "games 20 (10 pairs)  score 70.0%  Elo +147.2 [+4.5, +369.6]  "
        f"LLR {test.llr(counts):.2f} [-2.94, 2.94]  LOS 97.9%"
    )
    assert summary_line(counts) == (
        "games 20 (10 pairs)  score 70.0%  Elo +147.2 [+4.5, +369.6]  LOS 97.9%"
    )
    assert summary_line(PairCounts(), test) == (
        "games 0 (0 pairs)  score -  Elo -  LLR 0.00 [-2.94, 2.94]  LOS -"
    )


# --------------------------------------------------------------------------- simulation

#: Shared wins per game: Love Letter's two-player rounds share 1 or 2 in 10,000 (measured),
#: raised here so that the 0.5 and 1.5 totals occur too.
DRAW_RATE = 0.005
#: Correlation of A's scores in the two games of a pair (knowledge against greedy: -0.40 on
#: 3,000 balanced decks, -0.37 on 20,000 random ones).
CORRELATION = -0.4
ELO0, ELO1 = 0.0, 40.0
RUNS = 400
MAX_PAIRS = 2000


def pair_outcomes(elo: float, draw_rate: float, correlation: float) -> NDArray[np.float64]:
    """The joint distribution of A's scores (0, 0.5, 1) in the two games of a pair.

    A's score per game is ``elo_to_score(elo)``, ``draw_rate`` of games are shared. Each deck
    favours one of the seats: A's chance to win rises by ``d`` in one game and falls by ``d`` in
    the other (which game, with chance 1/2), the losses move the other way, and the two games
    are otherwise independent. That makes the covariance of the two scores ``-d^2``; ``d`` is
    chosen for the given correlation. Row: the first game's score, column: the second's.
    """
    s = elo_to_score(elo)
    win, loss = s - draw_rate / 2, 1.0 - s - draw_rate / 2
    variance = win + draw_rate / 4 - s * s
    d = math.sqrt(-correlation * variance)
    assert d <= min(win, loss)
    joint = np.zeros((3, 3))
    for shift in (d, -d):
        first = [loss - shift, draw_rate, win + shift]
        second = [loss + shift, draw_rate, win - shift]
        joint += 0.5 * np.outer(first, second)
    return joint


def simulated_pairs(
    elo: float, runs: int, pairs: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """A's scores in ``runs`` matches of ``pairs`` pairs, shape ``(runs, pairs, 2)``."""
    joint = pair_outcomes(elo, DRAW_RATE, CORRELATION)
    cell = rng.choice(9, p=joint.ravel(), size=(runs, pairs))
    return np.stack([cell // 3, cell % 3], axis=-1) / 2.0


def test_the_pair_model_is_what_it_says() -> None:
    # Checked through the module's own estimate on a large sample: the score and the spread.
    joint = pair_outcomes(40.0, DRAW_RATE, CORRELATION)
    assert joint.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(3)
    games = simulated_pairs(40.0, runs=1, pairs=200_000, rng=rng)[0]
    assert np.corrcoef(games[:, 0], games[:, 1])[0, 1] == pytest.approx(CORRELATION, abs=0.01)
    assert np.mean(games == 0.5) == pytest.approx(DRAW_RATE, abs=0.001)
    e = estimate(count_game_pairs(games.tolist()))
    assert e.elo_lo < 40.0 < e.elo_hi


Stops = list[tuple[Verdict | None, int]]


@functools.cache
def sequential_tests(true_elo: float, seed: int) -> tuple[Stops, Stops]:
    """Seeded matches at ``true_elo``, each tested after every pair by the pair model and by
    the model that counts games as independent (on the same games)."""
    games = simulated_pairs(true_elo, RUNS, MAX_PAIRS, np.random.default_rng(seed))
    test = Sprt(ELO0, ELO1, max_pairs=MAX_PAIRS)
    by_pairs = test.first_stops(pair_count_path(games.sum(axis=-1)))
    by_games = test.first_stops(game_count_path(games))
    return by_pairs, by_games


def error_band(rate: float) -> tuple[float, float]:
    """Counts of wrong verdicts out of ``RUNS`` consistent with ``rate``: the upper end is the
    99.9% binomial quantile at ``rate``; the lower end that at ``rate / 2`` (a test far more
    cautious than asked would waste games)."""
    return float(stats.binom.ppf(0.001, RUNS, rate / 2)), float(stats.binom.ppf(0.999, RUNS, rate))


def test_error_rate_at_elo0() -> None:
    by_pairs, _ = sequential_tests(ELO0, 101)
    verdicts = Counter(v for v, _ in by_pairs)
    lo, hi = error_band(0.05)
    assert lo <= verdicts["H1"] <= hi, verdicts
    assert verdicts["H0"] + verdicts["H1"] >= RUNS - 2, verdicts


def test_error_rate_at_elo1() -> None:
    by_pairs, _ = sequential_tests(ELO1, 102)
    verdicts = Counter(v for v, _ in by_pairs)
    lo, hi = error_band(0.05)
    assert lo <= verdicts["H0"] <= hi, verdicts
    assert verdicts["H0"] + verdicts["H1"] >= RUNS - 2, verdicts


@pytest.mark.parametrize(("true_elo", "seed", "wrong"), [(ELO0, 101, "H1"), (ELO1, 102, "H0")])
def test_pairs_decide_with_fewer_games(true_elo: float, seed: int, wrong: str) -> None:
    # The same games, tested as pairs and as independent games. Counting games as independent
    # overstates the variance by 1 / (1 + correlation) = 1.67 here, so that test takes more
    # games and errs less often than it was asked to; the pair model needs about 1 + correlation
    # = 60% of its games near the hypotheses (docs/match.md gives the measured figures).
    by_pairs, by_games = sequential_tests(true_elo, seed)
    games_by_pairs = 2 * np.mean([n for _, n in by_pairs])
    games_by_games = 2 * np.mean([n for _, n in by_games])
    assert 0.45 < games_by_pairs / games_by_games < 0.7
    wrong_by_games = sum(v == wrong for v, _ in by_games)
    assert wrong_by_games <= sum(v == wrong for v, _ in by_pairs)
