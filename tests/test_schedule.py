"""The round-robin schedule and the disqualification ledger: stated outcomes of small cases."""

from __future__ import annotations

import pytest

from arena.seeds import derive_seed, seed_deriver
from arena.tournament.disqualification import DisqualificationLedger, Verdict
from arena.tournament.schedule import (
    DECK_RUN,
    LONE_TABLE_RUN,
    blocks,
    game_key,
    group_size,
    round_robin,
)


def test_pairs_play_every_deck_twice_with_seats_swapped():
    games = round_robin(["a", "b", "c"], decks=2, players=2, repeat=1, seed=5)
    assert len(games) == 2 * 3 * 2  # decks x pairs x rotations
    # each seating plays the run's decks one after the other (here both decks are one run)
    assert [(g.seats, g.deck) for g in games] == [
        (("a", "b"), 0),
        (("a", "b"), 1),
        (("b", "a"), 0),
        (("b", "a"), 1),
        (("a", "c"), 0),
        (("a", "c"), 1),
        (("c", "a"), 0),
        (("c", "a"), 1),
        (("b", "c"), 0),
        (("b", "c"), 1),
        (("c", "b"), 0),
        (("c", "b"), 1),
    ]
    assert [g.index for g in games] == list(range(12))
    assert len({g.key for g in games}) == 12


def test_a_bot_plays_a_run_of_different_decks_before_any_deck_again():
    games = round_robin(["a", "b", "c"], decks=DECK_RUN + 4)
    assert {g.deck for g in games[:DECK_RUN]} == set(range(DECK_RUN))  # ("a", "b") on the run
    assert [g.deck for g in games[6 * DECK_RUN :]] == [DECK_RUN, DECK_RUN + 1, DECK_RUN + 2,
                                                       DECK_RUN + 3] * 6  # fmt: skip
    # each bot's games, cut where a deck comes again (a fresh process): one stretch per seating
    # of the first run (two tables, two rotations), and the second run's decks are new to the
    # last stretch until its second seating: three more
    for bot in "abc":
        stretches, seen = 1, set()
        for game in games:
            if bot in game.seats:
                if game.deck in seen:
                    stretches, seen = stretches + 1, set()
                seen.add(game.deck)
        assert stretches == 4 + 3, bot


def test_a_lone_table_plays_short_runs_so_that_a_match_block_holds_whole_pairs():
    games = round_robin(["a", "b"], decks=20)
    assert [g.deck for g in games[: 2 * LONE_TABLE_RUN]] == list(range(LONE_TABLE_RUN)) * 2
    assert {g.seats for g in games[:LONE_TABLE_RUN]} == {("a", "b")}


def test_tournaments_stored_before_runs_keep_their_order():
    games = round_robin(["a", "b", "c"], decks=2, runs=False)
    assert [g.seats for g in games[:6]] == [
        ("a", "b"),
        ("b", "a"),
        ("a", "c"),
        ("c", "a"),
        ("b", "c"),
        ("c", "b"),
    ]
    assert [g.deck for g in games] == [0] * 6 + [1] * 6


def test_three_player_tables_play_every_cyclic_rotation():
    games = round_robin(["a", "b", "c", "d"], decks=1, players=3)
    assert len(games) == 4 * 3  # four tables of three, three rotations each
    assert [g.seats for g in games[:3]] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert [g.rotation for g in games[:3]] == [0, 1, 2]


def test_repeat_comes_outermost_and_changes_keys_and_seeds():
    games = round_robin(["a", "b"], decks=1, repeat=2, seed=1)
    assert [(g.repeat, g.seats) for g in games] == [
        (0, ("a", "b")),
        (0, ("b", "a")),
        (1, ("a", "b")),
        (1, ("b", "a")),
    ]
    assert games[0].seed != games[2].seed


def test_seed_depends_on_tournament_seed_and_key_only():
    one = round_robin(["a", "b", "c"], decks=3, seed=9)
    other = round_robin(["c", "b", "a"], decks=3, seed=9)
    by_key = {g.key: g.seed for g in other}
    for game in one:
        assert game.seed == derive_seed(9, "game", game.key)
        if game.key in by_key:
            assert by_key[game.key] == game.seed


def test_seeds_stay_those_stored_tournaments_were_played_with():
    # The seeds derived before seed_deriver existed: a resumed tournament finds its games by them.
    key = 'repeat=0/deck=0/seats=["a","b"]'
    assert derive_seed(9, "game", key) == 939201706470436330
    assert seed_deriver(9, "game")(key) == 939201706470436330
    assert derive_seed(0) == 4246866556266386882
    assert derive_seed(2**63 - 1, "balanced", 3) == 1424700675743903269
    assert seed_deriver(2**63 - 1, "balanced")(3) == 1424700675743903269
    assert round_robin(["a", "b"], decks=1, seed=9)[0].seed == 939201706470436330


def test_key_format():
    assert game_key(0, 3, ["greedy", "random"]) == 'repeat=0/deck=3/seats=["greedy","random"]'
    assert game_key(1, 0, ["x[a=1,b=2]", "y"]) == 'repeat=1/deck=0/seats=["x[a=1,b=2]","y"]'


@pytest.mark.parametrize(
    ("entrants", "players", "decks", "repeat"),
    [(["a", "a"], 2, 1, 1), (["a", "b"], 5, 1, 1), (["a", "b"], 2, 0, 1), (["a", "b"], 2, 1, 0)],
)
def test_bad_schedules_raise(entrants, players, decks, repeat):
    with pytest.raises(ValueError):
        round_robin(entrants, decks, players, repeat)


def test_blocks_cover_the_games_in_order():
    games = round_robin(["a", "b", "c"], decks=1)
    parts = list(blocks(games, 4))
    assert [len(p) for p in parts] == [4, 2]
    assert [g for p in parts for g in p] == games


# --- the ledger -----------------------------------------------------------------------------


def ledger_for(max_faults: int | None) -> tuple[DisqualificationLedger, list]:
    # 12 games, x in 8 of them, in the order deck, table, rotation (one deck a run)
    games = round_robin(["x", "y", "z"], decks=2, runs=False)
    return DisqualificationLedger(games, max_faults), games


NONE: frozenset[str] = frozenset()


def test_without_a_limit_every_block_is_stored_at_once():
    ledger, games = ledger_for(None)
    assert ledger.verdict(games[6:8], [(NONE, ["x"]), (NONE, ["x"])]) is Verdict.STORE


def test_block_far_from_the_limit_is_stored_before_earlier_games_finish():
    ledger, games = ledger_for(10)
    # games 0-5 unresolved: x could have at most 4 faults there, far from 10
    assert ledger.verdict(games[6:8], [(NONE, ["x"]), (NONE, [])]) is Verdict.STORE


def test_block_near_the_limit_waits_then_is_stored_or_replayed():
    ledger, games = ledger_for(3)
    # games 4, 5 seat y and z, who sat in two of games 0-3 each: three faults are out of reach
    assert ledger.verdict(games[4:6], [(NONE, []), (NONE, [])]) is Verdict.STORE
    ledger, games = ledger_for(2)
    block = games[6:8]  # (x, y), (y, x) on deck 1
    played = [(NONE, []), (NONE, [])]
    # x sat in games 0-3; two faults there would disqualify it: cannot tell yet
    assert ledger.verdict(block, played) is Verdict.WAIT
    for index, faults in [(0, ["x"]), (1, []), (2, []), (3, ["x"]), (4, []), (5, [])]:
        ledger.resolve(index, faults)
    assert ledger.frontier == 6
    assert ledger.known_counts(6) == {"x": 2}
    # x had two faults before: it should have been disqualified, so the block is replayed
    assert ledger.verdict(block, played) is Verdict.REPLAY
    x_out = frozenset({"x"})
    assert ledger.verdict(block, [(x_out, []), (x_out, [])]) is Verdict.STORE


def test_faults_inside_a_block_count_for_its_later_games():
    ledger, games = ledger_for(1)
    for index in range(6):
        ledger.resolve(index, [])
    x_out = frozenset({"x"})
    good = [(NONE, ["x"]), (x_out, [])]
    assert ledger.verdict(games[6:8], good) is Verdict.STORE
    bad = [(NONE, ["x"]), (NONE, [])]
    assert ledger.verdict(games[6:8], bad) is Verdict.REPLAY


def test_a_block_is_at_risk_only_for_a_bot_with_a_known_fault_the_open_games_could_push_out():
    ledger, games = ledger_for(2)
    block = games[6:8]  # (x, y), (y, x) on deck 1; x and y sat in games 0-5 too
    assert not ledger.at_risk(block)  # nobody has a known fault
    ledger.resolve(0, ["x"])  # x: one fault, games 1-5 open (x in two of them)
    assert ledger.at_risk(block)
    for index in range(1, 6):
        ledger.resolve(index, [])
    assert not ledger.at_risk(block)  # every game before is known: the counts are exact
    assert not DisqualificationLedger(games, None).at_risk(block)
    far, _ = ledger_for(10)
    far.resolve(0, ["x"])
    assert not far.at_risk(block)  # x cannot reach 10 faults before or in the block


def test_max_faults_must_be_positive():
    with pytest.raises(ValueError):
        DisqualificationLedger([], 0)


def test_a_large_field_is_played_tile_by_tile():
    entrants = [f"bot{i:02d}" for i in range(40)]  # groups of 16: 0-15, 16-31, 32-39
    games = round_robin(entrants, decks=2)
    assert len(games) == 2 * (40 * 39 // 2) * 2
    group = {name: i // group_size(2) for i, name in enumerate(entrants)}
    tile_order = []
    for game in games:
        tile = tuple(sorted({group[n] for n in game.seats}))
        if not tile_order or tile_order[-1] != tile:
            tile_order.append(tile)
    # each tile once, in order, consecutive tiles sharing a group where they can
    assert tile_order == [(0,), (0, 1), (0, 2), (1,), (1, 2), (2,)]
    first = [g for g in games if tuple(sorted({group[n] for n in g.seats})) == (0,)]
    assert [g.deck for g in first] == [0, 1] * (16 * 15)  # decks inside a tile, a seating at once
    # the hosts a worker needs at once stay bounded: at most two groups
    assert (
        max(len({n for g in games[i : i + 500] for n in g.seats}) for i in range(0, 3000, 500))
        <= 32
    )
    assert sorted(g.key for g in games) == sorted({g.key for g in games})


def test_a_field_of_one_group_keeps_every_table_on_the_first_decks_first():
    entrants = [f"bot{i}" for i in range(group_size(2))]
    games = round_robin(entrants, decks=2 * DECK_RUN + 1)
    runs = [g.deck // DECK_RUN for g in games]
    assert runs == sorted(runs)  # every table on the first run before any on the next
    assert len(games[: runs.index(1)]) == len(entrants) * (len(entrants) - 1) * DECK_RUN
