"""The Dynamic Programming solver (Huibers 2016, 3.2): the thesis's worked example, end games
worked by hand, a plain recursive reference of the formulas, consistency of the whole table, the
disk cache and ``arena solve``.

Notation: X is the player to move, holding ``b1 <= b2``; Y its opponent, holding ``i`` (or ``c``);
A the cards X has not seen (the draw pile, Y's card, the set-aside card), n = |A|, so the draw
pile holds n - 2 cards and n = 2 is the last turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena.bench.measure import BENCHMARKS
from arena.cli.main import cli
from arena.errors import UnknownVariantError
from solver import (
    SOLVER_VERSION,
    DPTable,
    build_table,
    load_table,
    open_table,
    opening_rows,
    read_table,
    save_table,
    table_path,
)
from solver.build import solve
from solver.index import (
    A_WEIGHT,
    N_STATES,
    PAIR_CARDS,
    S_A,
    S_B12,
    S_C,
    decode,
    opening_counts,
    opening_hands,
    state_index,
)

COPIES = (0, 5, 2, 2, 2, 2, 1, 1, 1)
COMPUTED = 1 << 10


def counts(*cards: int) -> np.ndarray:
    """A as a length-9 count array from a list of card values."""
    a = np.zeros(9, dtype=np.int64)
    for v in cards:
        a[v] += 1
    return a


def unpack(code: int) -> tuple[int, int, int]:
    """(card, guess, target) of a policy entry."""
    return code & 15, (code >> 4) & 15, (code >> 8) & 3


@pytest.fixture(scope="session")
def table() -> DPTable:
    """The huibers table, built once for the session."""
    return build_table("huibers")


# --- end games worked by hand ---------------------------------------------------------------------

#: name -> (b1, b2, c, the cards of A, maid, known, p), all solved as roots of one solver run.
ENDGAMES = {
    "thesis": (3, 6, 0, (2, 7, 8), 0, 0, 0),
    "guard_last_turn": (1, 2, 0, (7, 8), 0, 0, 0),
    "guard_one_card_left": (1, 7, 0, (2, 2, 8), 0, 0, 0),
    "baron_tie": (3, 5, 0, (1, 5), 0, 0, 0),
    "handmaid": (4, 7, 0, (1, 1, 1), 0, 0, 0),
    "prince_known_princess": (2, 5, 8, (1, 1, 1, 8), 0, 1, 0),
    "prince_known_princess_maid": (2, 5, 8, (1, 1, 1, 8), 1, 1, 0),
    "countess_forced": (5, 7, 0, (6, 8), 0, 0, 0),
    "equal_gains": (2, 6, 0, (1, 8), 0, 0, 0),
}


@pytest.fixture(scope="module")
def endgames() -> tuple[np.ndarray, np.ndarray]:
    """``(chance, policy)`` with every end game of :data:`ENDGAMES` solved (one solver run)."""
    roots = [
        state_index(b1, b2, c, counts(*cards), maid, known, p)
        for b1, b2, c, cards, maid, known, p in ENDGAMES.values()
    ]
    chance, policy, _ = solve(np.array(roots))
    return chance, policy


def entry(solved: tuple[np.ndarray, np.ndarray], name: str, c: int | None = None) -> tuple:
    """``(chance, card, guess, target)`` of end game ``name``, at its own ``c`` or at ``c``."""
    b1, b2, c0, cards, maid, known, p = ENDGAMES[name]
    idx = state_index(b1, b2, c0 if c is None else c, counts(*cards), maid, known, p)
    chance, policy = solved
    assert policy[idx] & COMPUTED
    return (float(chance[idx]), *unpack(int(policy[idx])))


def test_thesis_example(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """Thesis 3.2.2: X holds Baron and King, A = {Priest, Countess, Princess}, n = 3.

    Baron (keeping the King): wins against the Priest, loses against the Countess and the
    Princess: 1/3. King (keeping the Baron): X gets Y's card, Y gets the Baron and draws the last
    card j of the pile, then plays the last turn knowing X's card.
    Y held the Priest: Y holds (3, 7) or (3, 8) against X's Priest: its Baron wins: r = 0.
    Y held the Countess: j = Priest leaves Y (2, 3) against X's Countess: Y loses either way
    (X gets 1); j = Princess: Y's Baron with the Princess wins (X gets 0): r = 1/2.
    Y held the Princess: X has it; Y's (2, 3) or (3, 7) loses either way: r = 1.
    King: (0 + 1/2 + 1) / 3 = 1/2 > 1/3: play the King, chance 0.5 (thesis 4.2 prints the same).
    When Y truly holds c (X still choosing on its belief), the value is r for c: 0, 1/2, 1.
    """
    assert entry(endgames, "thesis") == (0.5, 6, 0, 0)
    assert entry(endgames, "thesis", 2)[0] == pytest.approx(0.0, abs=1e-12)
    assert entry(endgames, "thesis", 7)[0] == pytest.approx(0.5)
    assert entry(endgames, "thesis", 8)[0] == pytest.approx(1.0)
    assert entry(endgames, "thesis", 8)[1] == 6  # the choice does not depend on Y's true card


def test_guard_on_the_last_turn(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Guard, Priest), A = {Countess, Princess}, n = 2: the last turn.

    Priest (keeping the Guard): the showdown 1 against 7 or 8 is lost: 0. Guard (keeping the
    Priest): a right guess wins, a wrong one loses the showdown 2 against 7 or 8. Guessing 7 or 8
    each gives 1/2; the tie goes to the lower guess, 7. If Y truly holds 7: 1; holds 8: 0.
    """
    assert entry(endgames, "guard_last_turn") == (0.5, 1, 7, 0)
    assert entry(endgames, "guard_last_turn", 7)[0] == 1.0
    assert entry(endgames, "guard_last_turn", 8)[0] == 0.0


def test_guard_with_one_card_left(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Guard, Countess), A = {Priest, Priest, Princess}, n = 3 (one card in the pile).

    Countess (keeping the Guard): Y ends with the Princess or a Priest against X's Guard and
    keeps its higher card: 0.
    Guard (keeping the Countess), a miss: if Y holds the Princess it draws a Priest, plays it and
    wins the showdown 8 against 7: 0. If Y holds a Priest it draws the Princess (1/2: it wins) or
    the other Priest (1/2: it plays one and loses 2 against 7): 1/2.
    Guess 8: 1/3 * 1 + 2/3 * 1/2 = 2/3. Guess 2: 1/3 * 0 + 2/3 * 1 = 2/3. A tie: the lower guess,
    2. If Y truly holds a Priest: 1; the Princess: 0.
    """
    chance, card, guess, target = entry(endgames, "guard_one_card_left")
    assert chance == pytest.approx(2 / 3)
    assert (card, guess, target) == (1, 2, 0)
    assert entry(endgames, "guard_one_card_left", 2)[0] == pytest.approx(1.0)
    assert entry(endgames, "guard_one_card_left", 8)[0] == pytest.approx(0.0, abs=1e-12)


def test_baron_with_a_tie_on_the_last_turn(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Baron, Prince), A = {Guard, Prince}, n = 2.

    Baron (keeping the Prince): beats the Guard (1); ties the Prince, then the showdown is a tie
    (0.5): 3/4. Prince on Y: Y discards the Prince and draws the set-aside Guard (X's Baron wins)
    or discards the Guard and draws the Prince (X loses): 1/2. Prince on X itself: X draws the
    set-aside card: the Guard against Y's Prince or the Prince against Y's Guard: 1/2.
    Play the Baron: 0.75; 0.5 if Y truly holds the Prince, 1 if the Guard.
    """
    assert entry(endgames, "baron_tie") == (0.75, 3, 0, 0)
    assert entry(endgames, "baron_tie", 5)[0] == 0.5
    assert entry(endgames, "baron_tie", 1)[0] == 1.0


def test_handmaid_protects(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Handmaid, Countess), A = {Guard, Guard, Guard}, n = 3.

    Handmaid (keeping the Countess): Y holds two Guards on the last turn; X is protected, the
    Guard has no effect and Y's Guard loses the showdown against 7: 1.
    Countess (keeping the Handmaid): Y holds two Guards and sees A' = {Guard, Handmaid}; guessing
    the Handmaid wins at once for Y: 0. Play the Handmaid: 1.
    """
    assert entry(endgames, "handmaid") == (1.0, 4, 0, 0)


def test_prince_on_a_known_princess(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Priest, Prince) and knows Y holds the Princess; A = {Guard x3, Princess}.

    The Prince on Y makes it discard the Princess: 1, target the opponent.
    With Y protected by a Handmaid the Prince must target X: X discards the Priest, draws a Guard,
    Y draws a Guard and plays it (any guess misses), the pile is then empty and Y's Princess wins
    the showdown: 0. The Priest has no effect and leaves X's Prince against Y's (Guard, Princess)
    with A' = {Guard, Guard, Prince} from Y's side: Y's Guard names the Prince (only the Prince
    can beat its Princess: X would play it on Y next turn) and wins: 0. A tie: the lower card.
    """
    assert entry(endgames, "prince_known_princess") == (1.0, 5, 0, 1)
    assert entry(endgames, "prince_known_princess_maid") == (0.0, 2, 0, 0)


def test_countess_is_forced(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Prince, Countess), A = {King, Princess}, n = 2.

    The Prince on Y would win half the time (Y discards the Princess), but holding the Countess
    with a Prince forces the Countess: X keeps the Prince, which loses the showdown to the King
    and to the Princess: 0.
    """
    assert entry(endgames, "countess_forced") == (0.0, 7, 0, 0)


def test_equal_gains_with_different_true_values(endgames: tuple[np.ndarray, np.ndarray]) -> None:
    """X holds (Priest, King), A = {Guard, Princess}, n = 2: the thesis's exception (3.2.3).

    Priest (keeping the King): 6 beats the Guard, loses to the Princess: 1/2. King (keeping the
    Priest): X gets the Guard (loses to 2) or the Princess (wins): 1/2. Equal gains: the lower
    card, the Priest. For Y's true card the two cards' r differ (Guard: 1 and 0; Princess: 0 and
    1), so the value returned is the gain, 1/2, in both cases.
    """
    assert entry(endgames, "equal_gains") == (0.5, 2, 0, 0)
    assert entry(endgames, "equal_gains", 1)[0] == 0.5
    assert entry(endgames, "equal_gains", 8)[0] == 0.5


# --- the whole table ---------------------------------------------------------------------------


def test_opening_facts_from_the_thesis(table: DPTable) -> None:
    """Thesis 4.2: Baron with the Princess (no Handmaid) always wins; two Barons give exactly
    1/2 (seven of the fourteen other cards are lower, seven higher)."""
    assert table.chance[state_index(3, 8, 0, opening_counts(3, 8), 0, 0, 0)] == 1.0  # 14 / 14
    assert table.choice(state_index(3, 8, 0, opening_counts(3, 8), 0, 0, 0))[0] == 3
    assert table.chance[state_index(3, 3, 0, opening_counts(3, 3), 0, 0, 0)] == pytest.approx(
        0.5, abs=1e-12
    )


def test_every_computed_slot_is_a_chance_and_a_legal_choice(table: DPTable) -> None:
    """Chances lie in [0, 1]; the card played is in the hand, never the Princess; the Countess
    when forced; a Guard names 2..8 unless Y is protected; a Prince targets X itself when Y is."""
    slots = np.flatnonzero(table.policy & COMPUTED)
    assert slots.size == table.states
    chance = table.chance[slots]
    assert chance.min() >= 0.0 and chance.max() <= 1.0
    code = table.policy[slots].astype(np.int64)
    card, guess, target = code & 15, (code >> 4) & 15, (code >> 8) & 3
    pair = slots // S_B12
    b1, b2 = PAIR_CARDS[pair, 0], PAIR_CARDS[pair, 1]
    maid = (slots // 6) % 2
    assert np.all((card == b1) | (card == b2))
    assert not np.any(card == 8)
    forced = (b2 == 7) & ((b1 == 5) | (b1 == 6))
    assert np.all(card[forced] == 7)
    guard = card == 1
    assert np.all((guess[guard & (maid == 0)] >= 2) & (guess[guard & (maid == 0)] <= 8))
    assert np.all(guess[~guard | (maid == 1)] == 0)
    prince = card == 5
    assert np.all(target[prince & (maid == 1)] == 2)
    assert np.all(np.isin(target[prince], (1, 2)))
    assert np.all(target[~prince] == 0)


def test_unknown_card_choice_does_not_depend_on_the_true_card(table: DPTable) -> None:
    """With ``known = 0`` every slot of a group (c = 0, and each c in A) holds X's one choice."""
    slots = np.flatnonzero(table.policy & COMPUTED)
    unknown = slots[(slots // 3) % 2 == 0]
    c = (unknown // S_C) % 9
    group = unknown - c * S_C
    assert np.all(table.policy[group] & COMPUTED)
    assert np.array_equal(table.policy[unknown], table.policy[group])


def test_belief_value_is_the_average_of_the_true_card_values(table: DPTable) -> None:
    """At an opening, f on X's belief equals the belief-weighted value of f for each true card
    (no opening has two cards of equal gain)."""
    for b1, b2 in opening_hands():
        a = opening_counts(b1, b2)
        belief = table.chance[state_index(b1, b2, 0, a, 0, 0, 0)]
        average = sum(
            a[c] / a.sum() * table.chance[state_index(b1, b2, c, a, 0, 0, 0)]
            for c in range(1, 9)
            if a[c]
        )
        assert belief == pytest.approx(average, abs=1e-12)


def test_opening_rows(table: DPTable) -> None:
    """33 hands (all pairs but two Kings, Countesses or Princesses), n = 14, the example's
    layout."""
    rows = opening_rows(table)
    assert len(rows) == 33
    assert {(r["b1"], r["b2"]) for r in rows} == set(opening_hands())
    for r in rows:
        assert r["n"] == 14
        assert r["play"] in (r["b1"], r["b2"])
        assert (r["guess"] is not None) == (r["play"] == 1)
        assert (r["target"] is not None) == (r["play"] == 5)
        assert round(r["chance"], 6) == r["chance"]


def test_index_is_row_major_over_the_thesis_dimensions() -> None:
    """state_index is row-major over [b12][c][a1..a8][maid][known][p]; decode inverts it."""
    a = counts(1, 1, 2, 5, 8)
    idx = state_index(5, 2, 8, a, 1, 0, 2)
    assert idx == state_index(2, 5, 8, a, 1, 0, 2)
    b12 = [tuple(x) for x in PAIR_CARDS.tolist()].index((2, 5))
    a_index = sum(int(a[v]) * int(A_WEIGHT[v]) for v in range(1, 9))
    assert a_index == ((((((2 * 3 + 1) * 3 + 0) * 3 + 0) * 3 + 1) * 2 + 0) * 2 + 0) * 2 + 1
    assert idx == ((((b12 * 9 + 8) * 3888 + a_index) * 2 + 1) * 2 + 0) * 3 + 2
    assert idx == b12 * S_B12 + 8 * S_C + a_index * S_A + 6 + 2
    out = np.zeros(9, dtype=np.int64)
    assert decode(idx, out) == (b12, 8, a_index, 1, 0, 2)
    assert np.array_equal(out, a)
    assert state_index(8, 8, 8, counts(*([1] * 5), 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8), 1, 1, 2) == (
        N_STATES - 1
    )


# --- the cache, the variant check, the command and the benchmarks --------------------------------


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh user cache directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    yield tmp_path / "loveletter-arena"


def test_cache_round_trip(table: DPTable, user_cache: Path) -> None:
    """Saved and loaded, the table is the same; a damaged file is rebuilt."""
    path = table_path("huibers")
    assert path.parent == user_cache / "solver"
    assert path.name.startswith(f"dp-huibers-v{SOLVER_VERSION}-") and path.suffix == ".npz"
    save_table(table, path)
    loaded = load_table("huibers")
    assert loaded.variant == "huibers"
    assert loaded.states == table.states
    assert loaded.build_seconds == table.build_seconds
    assert np.array_equal(loaded.chance, table.chance)
    assert np.array_equal(loaded.policy, table.policy)
    path.write_bytes(b"not a table")
    with pytest.raises(ValueError):
        read_table(path)
    rebuilt = load_table("huibers")
    assert np.array_equal(rebuilt.chance, table.chance)
    assert np.array_equal(rebuilt.policy, table.policy)
    assert np.array_equal(read_table(path).policy, table.policy)


@pytest.mark.parametrize("variant", ["classic", "nonsense"])
def test_other_variants_are_refused(variant: str) -> None:
    with pytest.raises(UnknownVariantError, match="huibers"):
        build_table(variant)
    with pytest.raises(UnknownVariantError, match="huibers"):
        load_table(variant)


def test_arena_solve_json(table: DPTable, user_cache: Path) -> None:
    save_table(table, table_path("huibers"))
    result = CliRunner().invoke(cli, ["solve", "--variant", "huibers", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {
        "variant",
        "states",
        "source",
        "path",
        "cached",
        "build_seconds",
        "opening",
    }
    assert (report["source"], report["path"], report["cached"]) == (
        "loaded",
        str(table_path("huibers")),
        True,
    )
    assert report["variant"] == "huibers"
    assert report["states"] == table.states
    assert len(report["opening"]) == 33
    for row in report["opening"]:
        assert set(row) == {"n", "b1", "b2", "chance", "play", "guess", "target"}
    assert report["opening"] == opening_rows(table)


def test_open_table_says_whether_it_loaded_or_built(user_cache: Path) -> None:
    """An empty cache: built and saved; then loaded from that file; ``rebuild`` builds again."""
    first = open_table("huibers")
    assert (first.source, first.cached, first.path) == ("built", True, table_path("huibers"))
    assert first.path.is_file()
    second = open_table("huibers")
    assert (second.source, second.cached) == ("loaded", True)
    assert second.table.build_seconds == first.table.build_seconds
    assert np.array_equal(second.table.policy, first.table.policy)
    again = open_table("huibers", rebuild=True)
    assert (again.source, again.cached) == ("built", True)
    assert load_table("huibers").build_seconds == again.table.build_seconds


def test_open_table_says_when_it_could_not_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache directory that cannot be made (a file is in the way): built, kept in memory."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    found = open_table("huibers")
    assert (found.source, found.cached) == ("built", False)
    assert not found.path.exists()
    result = CliRunner().invoke(cli, ["solve"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(f"not saved (cannot write {found.path})")


def test_arena_solve_text(table: DPTable, user_cache: Path) -> None:
    save_table(table, table_path("huibers"))
    result = CliRunner().invoke(cli, ["solve"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"{table.states:,} states" in lines[0]
    assert f"loaded from {table_path('huibers')}" in lines[0]
    rebuilt = CliRunner().invoke(cli, ["solve", "--rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"and saved to {table_path('huibers')}" in rebuilt.output.splitlines()[0]
    assert "built in" in rebuilt.output.splitlines()[0]
    assert lines[1].split() == ["n", "b1", "b2", "chance", "play", "guess", "target"]
    row = lines[2 + opening_hands().index((3, 8))].split()
    assert row == ["14", "3", "8", "1.000000", "3", "-", "-"]


def test_arena_solve_bad_variant_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(cli, ["solve", "--variant", "classic"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "huibers" in result.output and "Traceback" not in result.output


def test_bench_has_the_solver_figures() -> None:
    assert str(BENCHMARKS["dp_build_seconds"].goal) == "<= 1.0"
    assert BENCHMARKS["dp_build_seconds"].unit == "s"
    assert BENCHMARKS["dp_states"].unit == "states"
