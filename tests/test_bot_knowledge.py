"""The ``knowledge`` bot (the knowledge-based agent of Omarov et al. 2018) on hand-built deals where
the paper's rules dictate the answer, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile. ``deal(*top)`` puts the given cards on top and the rest of the 16 below them.
"""

from __future__ import annotations

import pytest
from positions import after, deal

from arena.game import Action, Card, Game
from bots.policy import policy_bot
from bots.simulate import simulate


def choice(game: Game) -> Action:
    """What the knowledge-based bot plays for the seat to move."""
    return policy_bot("knowledge")().act(game.observation(game.turn))


# --- a move that wins at once -------------------------------------------------------------------
# (the wins every bot must find are in test_obvious_wins.py)


def test_the_paper_example_plays_the_guard() -> None:
    # Omarov et al. figures 1-2: player A holds Guard and Countess, player B a Priest; "the Guard
    # has been selected by the knowledge based agent" (naming the Priest: nothing played yet).
    game = Game(2, "huibers", deck=deal(8, 7, 2, 1))
    assert choice(game) == Action.from_str("Guard->1:Priest")


# --- otherwise the smallest card ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ((8, 3, 1, 4), "Baron->1"),  # no Baron exception: the smallest card
        ((8, 3, 1, 5), "Baron->1"),
        ((8, 2, 1, 3), "Priest->1"),
        ((8, 4, 1, 6), "Handmaid"),
        ((8, 5, 1, 6), "Prince->1"),
        ((1, 6, 1, 8), "King->1"),
    ],
)
def test_smallest_card(top: tuple[int, ...], expected: str) -> None:
    assert choice(Game(2, "huibers", deck=deal(*top))) == Action.from_str(expected)


def test_a_known_card_that_cannot_be_beaten_leaves_the_smallest_card() -> None:
    # Seat 0 knows seat 1 holds the Countess and holds Handmaid and Baron: the Baron, smallest.
    game = after(Game(2, "huibers", deck=deal(8, 2, 7, 4, 1, 3)), "Priest->1", "Guard->0:Princess")
    assert choice(game) == Action.from_str("Baron->1")


# --- the Guard's guess: least encountered in the played deck -----------------------------------


def test_guess_at_the_start_is_the_priest() -> None:
    # Nothing played: every two-copy card ties, the lowest (the Priest) is named, even though
    # seat 0 holds the other Priest (the played deck is all the rule counts).
    game = Game(2, "huibers", deck=deal(8, 1, 4, 2))
    assert choice(game) == Action.from_str("Guard->1:Priest")


def test_guess_counts_the_played_cards() -> None:
    # A Handmaid and a Priest played: Baron and Prince are played least (twice left each).
    game = after(Game(2, "huibers", deck=deal(8, 3, 1, 4, 2, 1)), "Handmaid", "Priest")
    assert game.hand(0) == (Card.BARON, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->1:Baron")


def test_guess_ignores_the_face_up_cards() -> None:
    # classic: Priest, Priest, Baron face up, nothing played yet: the Priest is named all the same.
    game = Game(2, "classic", deck=deal(8, 2, 2, 3, 1, 4, 6))
    assert choice(game) == Action.from_str("Guard->1:Priest")


# --- the rules enforced, the Prince -------------------------------------------------------------


@pytest.mark.parametrize("other", [Card.KING, Card.PRINCE])
def test_countess_forced(other: Card) -> None:
    game = Game(2, "huibers", deck=deal(8, 7, 1, int(other)))
    assert choice(game) == Action(Card.COUNTESS)


@pytest.mark.parametrize("other", range(1, 8))
def test_never_the_princess(other: int) -> None:
    spare = Card.PRIEST if other == Card.GUARD else Card.GUARD
    game = Game(2, "huibers", deck=deal(spare, 8, spare, other))
    assert choice(game).card == Card(other)


def test_prince_targets_itself_when_the_opponent_is_protected() -> None:
    game = after(Game(2, "huibers", deck=deal(8, 6, 4, 1, 2, 5)), "Guard->1:Princess", "Handmaid")
    assert game.hand(0) == (Card.KING, Card.PRINCE)
    assert choice(game) == Action.from_str("Prince->0")


# --- three players ------------------------------------------------------------------------------


def test_three_players_a_seat_it_can_knock_out_first() -> None:
    game = after(
        Game(3, "classic", deck=deal(8, 2, 4, 3, 5, 7, 1, 1)),
        "Priest->2",
        "Countess",
        "Guard->1:Princess",
    )
    assert game.hand(0) == (Card.PRINCE, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->2:Baron")


def test_three_players_the_next_seat_in_turn_order() -> None:
    game = Game(3, "classic", deck=deal(8, 4, 5, 1, 2), first=2)
    assert choice(game) == Action.from_str("Guard->0:Priest")


# --- strength -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["huibers", "classic"])
def test_knowledge_beats_random_from_either_seat(variant: str) -> None:
    first = simulate(["knowledge", "random"], 150_000, variant, seed=21)
    assert first.first_seat_ci[0] > 0.5
    second = simulate(["random", "knowledge"], 150_000, variant, seed=22)
    assert second.first_seat_ci[1] < 0.5
