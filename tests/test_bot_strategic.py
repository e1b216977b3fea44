"""The ``strategic`` bot (Huibers 2016, 3.1.3) on hand-built deals where the thesis's rules dictate
the answer, and its strength against the random player.

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


def choice(game: Game, seat: int | None = None) -> Action:
    """What the strategic bot plays for ``seat`` (the seat to move by default)."""
    return policy_bot("strategic")().act(game.observation(game.turn if seat is None else seat))


# --- an opponent's card known: win at once -------------------------------------------------------
# (the wins every bot must find are in test_obvious_wins.py)


def test_a_known_card_that_cannot_be_beaten_leaves_the_lowest_card() -> None:
    """Interpretation (docs/bots.md): the Baron exception is for a player who does not
    know the opponent's card; knowing a card its Baron cannot beat, the player plays its lowest
    card, the Baron, as the thesis's main rule says."""
    game = after(Game(2, "huibers", deck=deal(8, 2, 7, 4, 1, 3)), "Priest->1", "Guard->0:Princess")
    assert game.hand(0) == (Card.HANDMAID, Card.BARON)
    assert choice(game) == Action.from_str("Baron->1")


# --- no knowledge: the lowest card, the Baron exception -------------------------------------------


def test_guard_before_baron_when_the_opponent_is_unknown() -> None:
    game = Game(2, "huibers", deck=deal(8, 3, 4, 1))
    assert choice(game) == Action.from_str("Guard->1:Priest")


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        (Card.KING, "Baron->1"),
        (Card.COUNTESS, "Baron->1"),
        (Card.PRINCESS, "Baron->1"),
        (Card.BARON, "Baron->1"),
        (Card.PRINCE, "Prince->1"),
        (Card.HANDMAID, "Handmaid"),
    ],
)
def test_baron_only_with_king_countess_or_princess(other: Card, expected: str) -> None:
    game = Game(2, "huibers", deck=deal(1, 3, 1, int(other)))
    assert choice(game) == Action.from_str(expected)


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ((8, 2, 1, 3), "Priest->1"),
        ((8, 4, 1, 6), "Handmaid"),
        ((8, 5, 1, 6), "Prince->1"),
        ((1, 6, 1, 8), "King->1"),
    ],
)
def test_lowest_card(top: tuple[int, ...], expected: str) -> None:
    assert choice(Game(2, "huibers", deck=deal(*top))) == Action.from_str(expected)


# --- the Guard's guess --------------------------------------------------------------------------


def test_guess_is_the_most_unseen_card_ties_to_the_lowest() -> None:
    # Holding Guard and Priest: one Priest unseen, two Barons, Handmaids, Princes: the Baron.
    game = Game(2, "huibers", deck=deal(8, 1, 4, 2))
    assert choice(game) == Action.from_str("Guard->1:Baron")


def test_guess_counts_discards_and_its_own_hand() -> None:
    # Seat 0 (Baron) plays a Handmaid; seat 1 must play its Priest without effect; seat 0 holds
    # Baron and Guard: one Priest, Baron, Handmaid unseen each, two Princes.
    game = after(Game(2, "huibers", deck=deal(8, 3, 1, 4, 2, 1)), "Handmaid", "Priest")
    assert game.hand(0) == (Card.BARON, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->1:Prince")


def test_guess_counts_the_face_up_cards() -> None:
    # classic: Priest, Priest, Baron face up; seat 0 holds Guard and King.
    game = Game(2, "classic", deck=deal(8, 2, 2, 3, 1, 4, 6))
    assert choice(game) == Action.from_str("Guard->1:Handmaid")


# --- the Prince, the Countess, the Princess -----------------------------------------------------


def test_prince_targets_itself_when_the_opponent_is_protected() -> None:
    # Seat 0 (King) misses with a Guard; seat 1 plays the Handmaid; seat 0 holds King and Prince.
    game = after(Game(2, "huibers", deck=deal(8, 6, 4, 1, 2, 5)), "Guard->1:Princess", "Handmaid")
    assert game.hand(0) == (Card.KING, Card.PRINCE)
    assert choice(game) == Action.from_str("Prince->0")


@pytest.mark.parametrize("other", [Card.KING, Card.PRINCE])
def test_countess_forced(other: Card) -> None:
    game = Game(2, "huibers", deck=deal(8, 7, 1, int(other)))
    assert choice(game) == Action(Card.COUNTESS)


@pytest.mark.parametrize("other", range(1, 8))
def test_never_the_princess(other: int) -> None:
    spare = Card.PRIEST if other == Card.GUARD else Card.GUARD
    game = Game(2, "huibers", deck=deal(spare, 8, spare, other))
    assert choice(game).card == Card(other)


# --- three players ------------------------------------------------------------------------------


def test_three_players_a_seat_it_can_knock_out_first() -> None:
    # Seat 0 sees seat 2's Baron; seat 1 plays the Countess; seat 2 misses with a Guard at seat 1
    # and keeps the Baron; seat 0 then holds Prince and Guard.
    game = after(
        Game(3, "classic", deck=deal(8, 2, 4, 3, 5, 7, 1, 1)),
        "Priest->2",
        "Countess",
        "Guard->1:Princess",
    )
    assert game.hand(0) == (Card.PRINCE, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->2:Baron")


def test_three_players_the_next_seat_in_turn_order() -> None:
    # Seat 2 moves first with Guard and Priest; the next seat in turn order is seat 0.
    game = Game(3, "classic", deck=deal(8, 4, 5, 1, 2), first=2)
    assert choice(game) == Action.from_str("Guard->0:Baron")


def test_three_players_a_seat_whose_card_is_unknown_before_a_known_guard() -> None:
    # Seat 0 sees seat 1's Guard (a Guard cannot name it); seat 2's card is unknown.
    game = after(
        Game(3, "classic", deck=deal(8, 2, 1, 4, 5, 7, 2, 1)),
        "Priest->1",
        "Countess",
        "Priest->1",
    )
    assert game.hand(0) == (Card.PRINCE, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->2:Baron")


# --- strength -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["huibers", "classic"])
def test_strategic_beats_random_from_either_seat(variant: str) -> None:
    first = simulate(["strategic", "random"], 150_000, variant, seed=11)
    assert first.first_seat_ci[0] > 0.5
    second = simulate(["random", "strategic"], 150_000, variant, seed=12)
    assert second.first_seat_ci[1] < 0.5
