"""The obvious wins every bot that plays to win must find, at its default settings: a Guard
naming a card it saw, a Baron against a known lower card, a Prince at a known Princess; and the
obvious loss none may play, a Baron against a known higher card."""

from __future__ import annotations

import pytest
from positions import after, bot_choice, deal

from arena.game import Action, Card, Game

BOTS = ["strategic", "knowledge", "montecarlo", "pimc", "ismcts", "minimax", "ace"]
pytestmark = pytest.mark.parametrize("name", BOTS)


@pytest.mark.parametrize("seed", range(3))
def test_guard_names_the_card_it_saw_huibers(name: str, seed: int) -> None:
    # Seat 0 looks at seat 1's Baron; seat 1 plays the Countess and keeps the Baron; seat 0 then
    # holds Handmaid and Guard: the Guard naming the Baron wins the round.
    game = after(Game(2, "huibers", deck=deal(8, 2, 3, 4, 7, 1)), "Priest->1", "Countess")
    assert game.hand(0) == (Card.HANDMAID, Card.GUARD)
    assert bot_choice(name, game, seed) == Action.from_str("Guard->1:Baron")


@pytest.mark.parametrize("seed", range(3))
def test_guard_names_the_card_it_saw_classic(name: str, seed: int) -> None:
    # Face up Handmaid, Handmaid, Prince. Seat 0 (Priest) draws the Countess and sees seat 1's
    # Baron; seat 1 draws a Guard and misses with it; seat 0 draws a Guard.
    game = after(
        Game(2, "classic", deck=deal(8, 4, 4, 5, 2, 3, 7, 1)), "Priest->1", "Guard->0:King"
    )
    assert game.hand(0) == (Card.COUNTESS, Card.GUARD)
    assert bot_choice(name, game, seed) == Action.from_str("Guard->1:Baron")


@pytest.mark.parametrize("variant", ["classic", "huibers"])
def test_baron_with_the_princess_against_a_known_guard(name: str, variant: str) -> None:
    # Seat 0 (Priest) draws the Princess and sees seat 1's Guard; seat 1 draws the Countess and
    # plays it; seat 0 draws a Baron: Baron (keeping the Princess) beats the Guard for certain.
    top = (4, 1, 1, 1) if variant == "classic" else (4,)
    game = after(Game(2, variant, deck=deal(*top, 2, 1, 8, 7, 3)), "Priest->1", "Countess")
    assert game.hand(0) == (Card.PRINCESS, Card.BARON)
    assert bot_choice(name, game) == Action.from_str("Baron->1")


def test_baron_when_its_other_card_beats_the_known_card(name: str) -> None:
    # Seat 0 sees seat 1's Guard, then holds Handmaid and Baron: Handmaid 4 > Guard 1.
    game = after(Game(2, "huibers", deck=deal(8, 2, 1, 4, 7, 3)), "Priest->1", "Countess")
    assert bot_choice(name, game) == Action.from_str("Baron->1")


def test_prince_at_a_known_princess(name: str) -> None:
    # Seat 0 sees the Princess; seat 1 misses with a Guard; seat 0 holds Handmaid and Prince.
    game = after(Game(2, "huibers", deck=deal(7, 2, 8, 4, 1, 5)), "Priest->1", "Guard->0:Princess")
    assert bot_choice(name, game) == Action.from_str("Prince->1")


def test_no_baron_against_a_known_higher_card(name: str) -> None:
    # Seat 0 (Priest) draws a Baron and sees seat 1's King; seat 1 draws a Guard and misses;
    # seat 0 draws the other Priest: its Baron would compare Priest 2 with King 6 and lose.
    game = after(Game(2, "huibers", deck=deal(7, 2, 6, 3, 1, 2)), "Priest->1", "Guard->0:Princess")
    assert sorted(game.hand(0)) == [Card.PRIEST, Card.BARON]
    assert bot_choice(name, game) == Action.from_str("Priest->1")
