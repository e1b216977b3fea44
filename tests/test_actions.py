"""Cards and actions: parsing, printing and the engine's packed form."""

from __future__ import annotations

import pytest

from arena.errors import InvalidActionError, InvalidCardError
from arena.game import Action, Card


@pytest.mark.parametrize(
    "text",
    [
        "Guard->1:Priest",
        "Guard->3:Princess",
        "Priest->2",
        "Baron->0",
        "Handmaid",
        "Prince->0",
        "King->1",
        "Countess",
        "Princess",
        "Guard",
        "King",
    ],
)
def test_action_round_trips_through_str(text: str) -> None:
    action = Action.from_str(text)
    assert str(action) == text
    assert Action.from_str(str(action)) == action
    assert Action.from_int(action.to_int()) == action


def test_action_accepts_values_aliases_and_spaces() -> None:
    assert Action.from_str("1 -> 2 : 3") == Action(Card.GUARD, 2, Card.BARON)
    assert Action.from_str("maid") == Action(Card.HANDMAID)
    assert Action.from_str("guard->1:maid") == Action(Card.GUARD, 1, Card.HANDMAID)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Jester",
        "Guard->1",
        "Guard->1:Guard",
        "Handmaid->1",
        "Priest->9",
        "Priest->1:Baron",
        "Guard->x:Priest",
        "Guard->1:Nobody",
        "9",
        "Countess->0",
    ],
)
def test_bad_action_strings_raise_invalid_action(text: str) -> None:
    with pytest.raises(InvalidActionError):
        Action.from_str(text)


def test_non_string_action_is_invalid() -> None:
    with pytest.raises(InvalidActionError):
        Action.from_str(3)  # type: ignore[arg-type]


def test_card_parse() -> None:
    assert Card.parse("Princess") is Card.PRINCESS
    assert Card.parse("3") is Card.BARON
    assert Card.parse(6) is Card.KING
    assert str(Card.HANDMAID) == "Handmaid"
    for bad in ("0", 9, "Joker"):
        with pytest.raises(InvalidCardError):
            Card.parse(bad)


def test_a_non_ascii_digit_is_not_a_card_value() -> None:
    with pytest.raises(InvalidCardError):
        Card.parse("²")
