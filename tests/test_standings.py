"""Standings from stored games, against hand-worked counts, scores and ratings."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from datetime import datetime

import pytest
from scipy import stats

from arena.referee.records import Fault, GameRecord
from leaderboard.ratings import ELO_PER_NAT
from leaderboard.standings import (
    MAX_EXAMPLES,
    MAX_MESSAGE,
    compute_standings,
    game_result,
    game_unit,
    head_to_head,
)
from leaderboard.store import EntrantInfo, StoredGame

Z95 = float(stats.norm.ppf(0.975))
WHEN = datetime(2024, 5, 1, 12, 0, 0)
KEYS = {
    "rank",
    "bot",
    "elo",
    "elo_lo",
    "elo_hi",
    "games",
    "wins",
    "draws",
    "losses",
    "score",
    "score_lo",
    "score_hi",
    "faults",
}


def record(
    seats: Sequence[str],
    winners: Sequence[int],
    faults: Sequence[Fault] = (),
    times: Sequence[float] | None = None,
    moves: Sequence[int] | None = None,
) -> GameRecord:
    """A game record with hand-chosen seats, winners, faults and times (no events)."""
    n = len(seats)
    return GameRecord(
        variant="classic",
        players=n,
        seats=list(seats),
        deck=[1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8],
        first=0,
        seed=0,
        events=[],
        actions=[],
        winners=list(winners),
        end_reason="test",
        times=list(times) if times is not None else [0.0] * n,
        moves=list(moves) if moves is not None else [0] * n,
        faults=list(faults),
    )


def stored(i: int, deck: int | None, rec: GameRecord) -> StoredGame:
    """Game ``i`` on deck position ``deck`` with a unique key."""
    return StoredGame(i, f"g{i:03d}", deck, i % 2, WHEN, rec)


def three_of_four() -> list[StoredGame]:
    """A beats B 3 of 4 over two decks: deck 0 A, A; deck 1 A, B."""
    return [
        stored(0, 0, record(["A", "B"], [0])),
        stored(1, 0, record(["B", "A"], [1])),
        stored(2, 1, record(["A", "B"], [0])),
        stored(3, 1, record(["B", "A"], [0])),
    ]


def test_three_of_four_over_two_decks() -> None:
    s = compute_standings(three_of_four())
    a, b = s["A"], s["B"]
    assert [x.bot for x in s.standings] == ["A", "B"] and (a.rank, b.rank) == (1, 2)
    assert (a.games, a.wins, a.draws, a.losses) == (4, 3, 0, 1)
    assert (b.games, b.wins, b.draws, b.losses) == (4, 1, 0, 3)
    assert a.score == 0.75 and b.score == 0.25
    ci = stats.binomtest(3, 4).proportion_ci(confidence_level=0.95, method="wilson")
    assert (a.score_lo, a.score_hi) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert (b.score_lo, b.score_hi) == (pytest.approx(1 - ci.high), pytest.approx(1 - ci.low))
    # Bradley-Terry: q = 3/4, so the gap is 400 log10 3 = 190.85, centred on 1500.
    assert a.elo is not None and b.elo is not None
    assert a.elo - b.elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert a.elo == pytest.approx(1595.424, abs=1e-3)
    # Two deck units with A's residuals 2(1 - 3/4) = 0.5 and 1/4 - 3/4 = -0.5: meat 0.5,
    # information 4 * 3/16 = 0.75, Var(d) = 2/(2-1) * 0.5 / 0.75^2 = 16/9, each rating +- d/2.
    half = Z95 * ELO_PER_NAT * (4 / 3) / 2
    assert a.elo_hi == pytest.approx(a.elo + half, rel=1e-6)
    assert a.elo_lo == pytest.approx(a.elo - half, rel=1e-6)
    assert s.ratings.units == 2 and s.ratings.games == 4 and s.ratings.ridge == 0.0
    assert s.games == s.rated_games == 4
    # LOS = Phi(ln 3 / (4/3)) = Phi(0.823959) = 0.795019.
    assert s.los["A"]["B"] == pytest.approx(0.795019, abs=1e-6)
    assert s.los["B"]["A"] == pytest.approx(1 - 0.795019, abs=1e-6)
    pair = s.pairs["A"]["B"]
    assert (pair.games, pair.counted, pair.points, pair.score) == (4, 4, 3.0, 0.75)
    assert (pair.lo, pair.hi) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_units_are_decks() -> None:
    games = three_of_four()
    assert game_unit(games[0]) == "deck 0"
    loose = StoredGame(9, "loose", None, 0, WHEN, record(["A", "B"], [0]))
    assert game_unit(loose) == "game loose"
    # No deck: every game is its own unit -> 4 units.
    no_decks = [StoredGame(g.id, g.key, None, 0, WHEN, g.record) for g in games]
    assert compute_standings(no_decks).ratings.units == 4
    # All on one deck: one unit, no interval and no LOS.
    one_deck = [StoredGame(g.id, g.key, 5, 0, WHEN, g.record) for g in games]
    s = compute_standings(one_deck)
    assert s.ratings.units == 1
    assert s["A"].elo_lo is None and s["A"].elo_hi is None
    assert s.los["A"]["B"] is None
    data = json.loads(s.to_json())
    assert data["standings"][0]["elo_lo"] is None and data["los"]["A"]["B"] is None


def test_shared_wins_and_three_player_tables() -> None:
    games = [
        stored(0, 0, record(["A", "B", "C"], [0])),  # A alone
        stored(1, 0, record(["B", "C", "A"], [0, 2])),  # B and A share
        stored(2, 1, record(["C", "A", "B"], [0])),  # C alone
        stored(3, 1, record(["A", "B"], [1])),  # B alone
    ]
    result = game_result(games[1])
    assert result is not None and result.scores == (0.5, 0.0, 0.5)
    s = compute_standings(games)
    a, b, c = s["A"], s["B"], s["C"]
    assert (a.games, a.wins, a.draws, a.losses) == (4, 1, 1, 2)
    assert (b.games, b.wins, b.draws, b.losses) == (4, 1, 1, 2)
    assert (c.games, c.wins, c.draws, c.losses) == (3, 1, 0, 2)
    assert a.score == pytest.approx(1.5 / 4) and b.score == pytest.approx(1.5 / 4)
    assert c.score == pytest.approx(1 / 3)
    # A vs B: g0 1, g1 1/2 (both won), g2 not counted (C won), g3 0 -> 1.5 of 3.
    ab = s.pairs["A"]["B"]
    assert (ab.games, ab.counted, ab.points, ab.score) == (4, 3, 1.5, 0.5)
    # A vs C: g0 1, g1 1 (A won, C did not), g2 0 -> 2 of 3, Wilson as scipy's.
    ac = s.pairs["A"]["C"]
    assert (ac.games, ac.counted, ac.points) == (3, 3, 2.0)
    ci = stats.binomtest(2, 3).proportion_ci(confidence_level=0.95, method="wilson")
    assert (ac.lo, ac.hi) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert s.pairs["C"]["A"].score == pytest.approx(1 / 3)
    # B vs C: g0 not counted (A won), g1 1, g2 0 -> 1 of 2.
    bc = s.pairs["B"]["C"]
    assert (bc.games, bc.counted, bc.points) == (3, 2, 1.0)
    for x in "ABC":
        for y in "ABC":
            if x != y:
                p, q = s.pairs[x][y], s.pairs[y][x]
                assert p.counted == q.counted and p.points + q.points == p.counted


def test_head_to_head_rule() -> None:
    result = game_result(stored(0, 0, record(["A", "B", "C", "D"], [1, 2])))
    assert result is not None
    assert head_to_head(result, "B", "C") == 0.5
    assert head_to_head(result, "B", "A") == 1.0
    assert head_to_head(result, "A", "C") == 0.0
    assert head_to_head(result, "A", "D") is None
    assert head_to_head(result, "A", "Z") is None


def test_faults_and_timing() -> None:
    long = "x" * (MAX_MESSAGE + 50)
    games = [
        stored(
            0,
            0,
            record(
                ["A", "B"],
                [1],
                faults=[
                    Fault(0, "timeout", "no answer in 1 s", 3),
                    Fault(0, "illegal", "8 is not among the legal actions", 4),
                ],
                times=[1.5, 0.25],
                moves=[3, 1],
            ),
        ),
        stored(
            1,
            0,
            record(
                ["B", "A"],
                [0],
                faults=[Fault(1, "timeout", long, 0), Fault(0, "crash", "boom", 2)],
                times=[0.75, 0.5],
                moves=[3, 1],
            ),
        ),
        stored(2, 1, record(["A", "B"], [1], faults=[Fault(0, "timeout", "no answer in 1 s", 1)])),
        stored(3, 1, record(["A", "B"], [1], faults=[Fault(0, "disqualified", "dq", 0)])),
        stored(4, 1, record(["A", "B"], [1], faults=[Fault(0, "timeout", "third", 0)])),
        stored(5, 1, record(["A", "B"], [1], faults=[Fault(0, "timeout", "fourth", 0)])),
    ]
    s = compute_standings(games)
    fa, fb = s.faults["A"], s.faults["B"]
    # A: 5 timeouts + 1 illegal = 6 faults; the disqualified forfeit is not a fault.
    assert s["A"].faults == fa.total == 6 and s["A"].disqualified and fa.disqualified
    assert fa.by_kind == {"timeout": 5, "illegal": 1, "disqualified": 1}
    assert list(fa.by_kind) == ["timeout", "illegal", "disqualified"]
    timeouts = [e.message for e in fa.examples if e.kind == "timeout"]
    # Distinct messages only, in key order, at most MAX_EXAMPLES; the long one shortened.
    assert len(timeouts) == MAX_EXAMPLES == 3
    assert timeouts[0] == "no answer in 1 s"
    assert len(timeouts[1]) == MAX_MESSAGE and timeouts[1].endswith("…")
    assert timeouts[2] == "third"
    assert fa.examples[0].game == "g000" and fa.examples[0].move == 3
    assert s["B"].faults == 1 and not s["B"].disqualified and fb.by_kind == {"crash": 1}
    # Times: A 1.5 + 0.5 = 2.0 s over 3 + 1 moves; B 0.25 + 0.75 = 1.0 s over 1 + 3.
    assert s.timing["A"].time == pytest.approx(2.0) and s.timing["A"].moves == 4
    assert s.timing["A"].mean_move_time == pytest.approx(0.5)
    assert s.timing["B"].mean_move_time == pytest.approx(0.25)
    assert s.total_time == pytest.approx(3.0)
    data = json.loads(s.to_json())
    assert data["faults"]["A"]["disqualified"] is True
    assert data["faults"]["A"]["by_kind"]["timeout"] == 5
    assert data["timing"]["B"] == {"time": 1.0, "moves": 4, "mean_move_time": 0.25}


def test_games_without_winner_are_not_rated() -> None:
    games = [
        *three_of_four(),
        stored(
            7,
            2,
            record(
                ["A", "C"], [], faults=[Fault(1, "crash", "x", 0)], times=[0.0, 2.0], moves=[0, 1]
            ),
        ),
        stored(8, 2, record(["A", "A"], [0])),  # a bot at two seats cannot be rated
    ]
    s = compute_standings(games)
    assert s.games == 6 and s.rated_games == 4
    assert s["A"].games == 4 and s["A"].wins == 3
    # C only sat in an unrated game: listed last, unrated, but its fault and time count.
    c = s["C"]
    assert (c.rank, c.elo, c.score, c.games) == (None, None, None, 0)
    assert c.faults == 1 and s.timing["C"].time == 2.0
    assert s.bots == ("A", "B", "C")
    assert s.ratings.units == 2


def test_entrants_without_games_and_ties_by_name() -> None:
    # Equal records: equal Elo (exactly 1500), so the order is by name.
    games = [
        stored(0, 0, record(["Y", "X"], [0])),
        stored(1, 0, record(["X", "Y"], [0])),
    ]
    s = compute_standings(games, ["Z", EntrantInfo("W", "w"), "X"])
    assert s.bots == ("X", "Y", "W", "Z")
    assert [x.rank for x in s.standings] == [1, 2, None, None]
    assert s["X"].elo == s["Y"].elo == pytest.approx(1500.0, abs=1e-9)
    assert s["W"].elo is None and s.los["W"]["X"] is None and s.pairs["W"]["X"].score is None
    assert s["X"].draws == 0 and s["X"].wins == 1 and s["X"].losses == 1


def test_anchor() -> None:
    s = compute_standings(three_of_four(), anchor="B")
    assert s["B"].elo == 1500.0 and s["B"].elo_lo == s["B"].elo_hi == 1500.0
    assert s["A"].elo == pytest.approx(1500 + 400 * math.log10(3), abs=1e-6)
    assert s.ratings.anchor == "B"
    assert json.loads(s.to_json())["fit"]["anchor"] == "B"
    with pytest.raises(ValueError, match="'Z'"):
        compute_standings(three_of_four(), ["Z"], anchor="Z")


def test_order_independent() -> None:
    games = [
        *three_of_four(),
        stored(4, 2, record(["C", "A", "B"], [0], faults=[Fault(1, "timeout", "t", 0)])),
        stored(5, 2, record(["A", "C"], [0, 1])),
        stored(6, 3, record(["B", "C"], [1], faults=[Fault(0, "crash", "c", 1)])),
        stored(7, 3, record(["C", "B"], [1])),
    ]
    base = compute_standings(games).to_json()
    rng = random.Random(3)
    for _ in range(4):
        shuffled = games[:]
        rng.shuffle(shuffled)
        assert compute_standings(shuffled).to_json() == base


def test_json_keys_and_strictness() -> None:
    one_deck = [StoredGame(g.id, g.key, 0, 0, WHEN, g.record) for g in three_of_four()]
    s = compute_standings(one_deck, ["Q"])
    text = s.to_json()

    def reject(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    data = json.loads(text, parse_constant=reject)
    for line in data["standings"]:
        assert set(line) == KEYS
    assert set(json.loads(s["A"].to_json())) == KEYS
    assert data["fit"]["units"] == 1 and data["fit"]["unit"] == "deck"
    assert data["standings"][2]["bot"] == "Q" and data["standings"][2]["elo"] is None
    assert set(data) == {
        "games",
        "rated_games",
        "fit",
        "standings",
        "los",
        "pairs",
        "faults",
        "timing",
    }


def test_empty() -> None:
    s = compute_standings([], ["A"])
    assert s.bots == ("A",) and s.games == 0 and s.ratings.units == 0
    json.loads(s.to_json())
