"""The rules, card by card and edge case by edge case, on concrete deals.

Every test deals a :class:`~arena.game.Game` from an explicit deck order, plays explicit actions and
checks facts written down by hand: who is in, the true hands, the legal actions as strings, the
events (with who may see them), the observations and the winners. Nothing here computes what the
rules would do; the expected outcome of every deal is spelled out.

How a deck deals (top first): ``deck[0]`` is set aside face down; in a two-player ``classic`` round
``deck[1:4]`` are set aside face up; then one card per seat in seat order; then the draw pile, from
which the seat to move draws at the start of its turn. ``huibers`` (two players, nothing face up)
and three or four players give short decks without face-up cards.
"""

from __future__ import annotations

import pytest

from arena.engine.layout import END_DECK_EMPTY, END_LAST_STANDING
from arena.errors import ArenaError, GameOverError, IllegalActionError, InvalidActionError
from arena.game import Action, Card, Event, EventKind, Game, Match

GUARD, PRIEST, BARON, HANDMAID, PRINCE, KING, COUNTESS, PRINCESS = tuple(Card)
E = EventKind
NONE3 = (None, None, None)

#: The 16 cards in value order: what :func:`deck` fills in after the leading cards.
ALL_CARDS = (
    [GUARD] * 5 + [PRIEST] * 2 + [BARON] * 2 + [HANDMAID] * 2 + [PRINCE] * 2
    + [KING, COUNTESS, PRINCESS]
)  # fmt: skip
#: What a Guard may name, in the order the legal actions list them.
NAMEABLE = ("Priest", "Baron", "Handmaid", "Prince", "King", "Countess", "Princess")


# --- helpers (deck construction and bookkeeping only, no rules) ---------------------------------


def deck(*lead: Card) -> list[Card]:
    """A full deck whose top cards are ``lead``; the rest of the 16 cards follow in value order."""
    rest = list(ALL_CARDS)
    for card in lead:
        rest.remove(card)  # ValueError: more copies than the game has
    return [*lead, *rest]


def huibers(*lead: Card, first: int = 0) -> Game:
    """A two-player ``huibers`` round: lead = set-aside, seat 0, seat 1, then the draw pile."""
    return Game(2, "huibers", deck=deck(*lead), first=first)


def classic(players: int, *lead: Card, first: int = 0) -> Game:
    """A ``classic`` round dealt from a deck starting with ``lead``."""
    return Game(players, "classic", deck=deck(*lead), first=first)


def legal(game: Game) -> list[str]:
    """The legal actions of the seat to move, as strings."""
    return [str(a) for a in game.legal_actions()]


def guards(target: int) -> list[str]:
    """The seven Guard actions at ``target`` (one per card a Guard may name), as listed."""
    return [f"Guard->{target}:{name}" for name in NAMEABLE]


def of_kind(events: list[Event] | tuple[Event, ...], kind: EventKind) -> list[Event]:
    return [e for e in events if e.kind == kind]


def play_through(game: Game, moves: list[tuple[int, str]]) -> None:
    """Play ``moves`` in order, checking that each is made by the seat written next to it."""
    for seat, action in moves:
        assert game.turn == seat, f"expected seat {seat} to play {action}"
        game.play(action)


def round_end(reason: int, *winners: int) -> Event:
    return Event(E.ROUND_END, None, None, reason, sum(1 << s for s in winners))


# --- dealing --------------------------------------------------------------------------------------


def test_deal_classic_two_players_sets_three_cards_face_up() -> None:
    """Set-aside card, three face up, one card per seat, then the first player draws."""
    game = classic(2, PRINCESS, BARON, BARON, KING, COUNTESS, PRINCE, GUARD)
    assert game.events == [
        Event(E.FACE_UP, None, None, BARON),
        Event(E.FACE_UP, None, None, BARON),
        Event(E.FACE_UP, None, None, KING),
        Event(E.DEALT, 0, None, COUNTESS, 0, (0,)),
        Event(E.DEALT, 1, None, PRINCE, 0, (1,)),
        Event(E.TURN, 0),
        Event(E.DRAW, 0, None, GUARD, 0, (0,)),
    ]
    assert game.hand(0) == (COUNTESS, GUARD)
    assert game.hand(1) == (PRINCE,)
    me = game.observation(0)
    assert me.face_up == (BARON, BARON, KING)
    assert me.hand == (COUNTESS, GUARD)
    assert me.deck_size == 9  # 16 - 1 aside - 3 face up - 2 dealt - 1 drawn
    assert not me.set_aside_taken
    # Unseen by seat 0: everything but its hand and the face-up cards.
    assert me.unseen == (4, 2, 0, 2, 2, 0, 0, 1)
    other = game.observation(1)
    assert other.hand == (PRINCE,)
    assert other.legal_actions == ()
    assert [e.kind for e in other.events] == [E.FACE_UP] * 3 + [E.DEALT, E.TURN]
    assert other.unseen == (5, 2, 0, 2, 1, 0, 1, 1)


def test_deal_huibers_sets_nothing_face_up() -> None:
    game = huibers(PRINCESS, COUNTESS, PRINCE, GUARD)
    assert of_kind(game.events, E.FACE_UP) == []
    assert game.hand(0) == (COUNTESS, GUARD)
    assert game.hand(1) == (PRINCE,)
    obs = game.observation(0)
    assert obs.face_up == ()
    assert obs.deck_size == 12


@pytest.mark.parametrize(("players", "deck_size"), [(3, 11), (4, 10)])
def test_deal_three_and_four_players_in_seat_order(players: int, deck_size: int) -> None:
    """No face-up cards; seat s gets deck[1 + s] whoever moves first; the first mover draws."""
    cards = (PRINCESS, KING, COUNTESS, PRINCE, HANDMAID, BARON, PRIEST)
    game = classic(players, *cards, first=players - 1)
    for seat in range(players):
        if seat == players - 1:
            assert game.hand(seat) == (cards[1 + seat], cards[1 + players])
        else:
            assert game.hand(seat) == (cards[1 + seat],)
    assert game.turn == players - 1
    assert game.observation(0).deck_size == deck_size
    assert game.observation(0).face_up == ()


# --- targets --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    ["Priest->0", "Baron->0", "Priest->2", "Baron->3", "Priest", "Baron"],
)
def test_targeted_card_needs_another_player_as_target(action: str) -> None:
    """Not oneself, not a seat that does not play, and not untargeted while a target exists."""
    game = huibers(KING, PRIEST, GUARD, BARON)
    assert legal(game) == ["Priest->1", "Baron->1"]
    with pytest.raises(IllegalActionError):
        game.play(action)
    assert game.turn == 0 and game.hand(0) == (PRIEST, BARON)


@pytest.mark.parametrize("action", ["Prince", "Prince->2"])
def test_prince_always_needs_a_seat_in_the_round(action: str) -> None:
    game = huibers(KING, PRINCE, GUARD, HANDMAID)
    assert legal(game) == ["Handmaid", "Prince->0", "Prince->1"]
    with pytest.raises(IllegalActionError):
        game.play(action)


def test_two_copies_of_a_card_are_listed_once() -> None:
    game = huibers(KING, GUARD, PRIEST, GUARD)
    assert game.hand(0) == (GUARD, GUARD)
    assert legal(game) == guards(1)


# --- Guard ----------------------------------------------------------------------------------------


def test_guard_hit_knocks_the_target_out() -> None:
    game = huibers(KING, GUARD, PRIEST, HANDMAID)
    events = game.play("Guard->1:Priest")
    assert events == [
        Event(E.PLAY, 0, 1, GUARD, PRIEST),
        Event(E.KNOCKOUT, 1, None, PRIEST, 0),
        round_end(END_LAST_STANDING, 0),
    ]
    assert game.alive == (True, False)
    assert game.hand(1) == ()
    assert game.hand(0) == (HANDMAID,)
    assert game.over and game.winners == (0,) and game.end_reason == "last_standing"
    assert game.observation(0).pile == ((0, GUARD), (1, PRIEST))


def test_guard_miss_is_public_and_the_turn_passes() -> None:
    game = huibers(KING, GUARD, BARON, HANDMAID, PRIEST)
    events = game.play("Guard->1:Priest")
    assert events == [
        Event(E.PLAY, 0, 1, GUARD, PRIEST),
        Event(E.GUARD_MISS, 0, 1, GUARD, PRIEST),
        Event(E.TURN, 1),
        Event(E.DRAW, 1, None, PRIEST, 0, (1,)),
    ]
    assert game.alive == (True, True)
    assert game.turn == 1
    assert game.hand(1) == (BARON, PRIEST)
    assert Event(E.GUARD_MISS, 0, 1, GUARD, PRIEST) in game.observation(1).events


def test_guard_cannot_name_the_guard() -> None:
    """Refused by the action parser and by the constructor, and never a legal action."""
    game = huibers(KING, GUARD, GUARD, HANDMAID)  # seat 1 does hold a Guard
    assert legal(game) == [*guards(1), "Handmaid"]
    with pytest.raises(InvalidActionError):
        Action.from_str("Guard->1:Guard")
    with pytest.raises(InvalidActionError):
        Action(GUARD, 1, GUARD)
    with pytest.raises(InvalidActionError):
        game.play("Guard->1:Guard")
    assert game.turn == 0 and game.alive == (True, True)
    assert game.hand(0) == (GUARD, HANDMAID)


def test_guard_at_a_seat_must_name_a_card() -> None:
    game = huibers(KING, GUARD, PRIEST, HANDMAID)
    with pytest.raises(InvalidActionError):
        game.play("Guard->1")
    with pytest.raises(IllegalActionError):
        game.play("Guard")  # untargeted only when every other player is protected


# --- Priest ---------------------------------------------------------------------------------------


def test_priest_shows_the_card_to_the_player_only() -> None:
    game = classic(3, COUNTESS, PRIEST, BARON, GUARD, HANDMAID)  # seat 1 then draws a Guard
    events = game.play("Priest->1")
    assert events == [
        Event(E.PLAY, 0, 1, PRIEST, 0),
        Event(E.PRIEST_SEE, 0, 1, BARON, 0, (0,)),
        Event(E.TURN, 1),
        Event(E.DRAW, 1, None, GUARD, 0, (1,)),
    ]
    player, target, bystander = (game.observation(s) for s in range(3))
    assert player.known == (None, BARON, None)
    assert of_kind(player.events, E.PRIEST_SEE) == [events[1]]
    # Unseen by seat 0: minus its Handmaid, the Priest on the pile and the Baron it saw.
    assert player.unseen == (5, 1, 1, 1, 2, 1, 1, 1)
    # The target knows its card was seen (it knows what it holds), but sees no look event.
    assert target.known_by == (BARON, None, None)
    assert target.known == NONE3
    assert of_kind(target.events, E.PRIEST_SEE) == []
    assert bystander.known == NONE3 and bystander.known_by == NONE3
    assert of_kind(bystander.events, E.PRIEST_SEE) == []


def test_priest_knowledge_is_lost_when_the_target_plays_that_card() -> None:
    game = huibers(KING, PRIEST, HANDMAID, COUNTESS, GUARD)
    game.play("Priest->1")
    assert game.observation(0).known == (None, HANDMAID)
    assert game.observation(1).known_by == (HANDMAID, None)
    game.play("Handmaid")  # seat 1 plays the card seat 0 saw, keeps the Guard it drew
    assert game.hand(1) == (GUARD,)
    assert game.observation(0).known == (None, None)
    assert game.observation(1).known_by == (None, None)


def test_priest_knowledge_is_kept_when_the_target_plays_its_other_card() -> None:
    game = huibers(KING, PRIEST, HANDMAID, COUNTESS, GUARD)
    game.play("Priest->1")
    game.play("Guard->0:Priest")  # a miss: seat 0 holds the Countess
    assert game.hand(1) == (HANDMAID,)
    assert game.observation(0).known == (None, HANDMAID)
    assert game.observation(1).known_by == (HANDMAID, None)


def test_priest_knowledge_is_lost_when_the_target_plays_a_copy_of_that_card() -> None:
    """Seat 1 held a Guard, drew a Guard and played one: seat 0 cannot tell which one stayed."""
    game = huibers(KING, PRIEST, GUARD, COUNTESS, GUARD)
    game.play("Priest->1")
    assert game.observation(0).known == (None, GUARD)
    game.play("Guard->0:Priest")
    assert game.observation(0).known == (None, None)


def test_priest_knowledge_is_lost_when_a_prince_discards_the_card() -> None:
    game = huibers(KING, PRIEST, BARON, PRINCE, GUARD, HANDMAID)
    game.play("Priest->1")
    game.play("Guard->0:Priest")  # miss: seat 0 holds the Prince; seat 1 keeps the Baron
    assert game.observation(0).known == (None, BARON)
    game.play("Prince->1")  # seat 0 drew the Handmaid; seat 1 discards the Baron
    assert game.observation(0).known == (None, None)
    assert game.observation(1).known_by == (None, None)


# --- Baron ----------------------------------------------------------------------------------------


def test_baron_higher_card_knocks_the_target_out() -> None:
    game = classic(3, COUNTESS, BARON, PRIEST, GUARD, KING)  # seat 2 then draws a Guard
    events = game.play("Baron->1")
    assert events == [
        Event(E.PLAY, 0, 1, BARON, 0),
        Event(E.BARON_SHOW, 0, 1, KING, PRIEST, (0, 1)),
        Event(E.KNOCKOUT, 1, None, PRIEST, 0),
        Event(E.TURN, 2),
        Event(E.DRAW, 2, None, GUARD, 0, (2,)),
    ]
    assert game.alive == (True, False, True)
    assert game.hand(0) == (KING,)
    assert game.turn == 2
    bystander = game.observation(2)
    assert of_kind(bystander.events, E.BARON_SHOW) == []
    assert Event(E.KNOCKOUT, 1, None, PRIEST, 0) in bystander.events
    assert bystander.known == NONE3  # the winner's card stays private
    assert bystander.pile == ((0, BARON), (1, PRIEST))


def test_baron_lower_card_knocks_the_player_out() -> None:
    game = classic(3, COUNTESS, BARON, PRIEST, GUARD, GUARD)
    events = game.play("Baron->1")
    assert events[:3] == [
        Event(E.PLAY, 0, 1, BARON, 0),
        Event(E.BARON_SHOW, 0, 1, GUARD, PRIEST, (0, 1)),
        Event(E.KNOCKOUT, 0, None, GUARD, 0),
    ]
    assert events[3] == Event(E.TURN, 1)
    assert game.alive == (False, True, True)
    assert game.hand(0) == ()
    assert game.hand(1)[0] == PRIEST
    assert game.observation(1).known == NONE3
    assert of_kind(game.observation(2).events, E.BARON_SHOW) == []


def test_baron_tie_knocks_nobody_out_and_gives_mutual_knowledge() -> None:
    game = classic(3, COUNTESS, BARON, PRIEST, GUARD, PRIEST)
    events = game.play("Baron->1")
    assert events[:3] == [
        Event(E.PLAY, 0, 1, BARON, 0),
        Event(E.BARON_SHOW, 0, 1, PRIEST, PRIEST, (0, 1)),
        Event(E.BARON_TIE, 0, 1, 0, 0),
    ]
    assert game.alive == (True, True, True)
    assert game.turn == 1
    player, target, bystander = (game.observation(s) for s in range(3))
    assert player.known == (None, PRIEST, None)
    assert player.known_by == (None, PRIEST, None)
    assert target.known == (PRIEST, None, None)
    assert target.known_by == (PRIEST, None, None)
    assert bystander.known == NONE3
    assert of_kind(bystander.events, E.BARON_SHOW) == []
    assert of_kind(bystander.events, E.BARON_TIE) == [events[2]]


# --- Handmaid -------------------------------------------------------------------------------------


def test_handmaid_protects_until_the_players_own_next_turn() -> None:
    game = classic(3, COUNTESS, HANDMAID, PRIEST, GUARD, GUARD, GUARD, PRIEST, BARON)
    events = game.play("Handmaid")
    assert events[:2] == [Event(E.PLAY, 0, None, HANDMAID, 0), Event(E.PROTECTED, 0)]
    # Seat 1 (Priest, Guard) may target only seat 2.
    assert game.observation(1).protected == (True, False, False)
    assert legal(game) == [*guards(2), "Priest->2"]
    for action in ("Priest->0", "Guard->0:Priest"):
        with pytest.raises(IllegalActionError):
            game.play(action)
    game.play("Priest->2")
    # Seat 2 (Guard, Priest): seat 0 is still protected.
    assert game.observation(2).protected == (True, False, False)
    assert legal(game) == [*guards(1), "Priest->1"]
    game.play("Priest->1")
    # Seat 0's turn: its protection is over as its turn begins.
    assert game.turn == 0
    assert game.hand(0) == (GUARD, BARON)
    assert game.observation(1).protected == (False, False, False)
    assert legal(game) == [*guards(1), *guards(2), "Baron->1", "Baron->2"]


@pytest.mark.parametrize(
    ("card", "options"),
    [
        (GUARD, ["Guard", "Handmaid"]),
        (PRIEST, ["Priest", "Handmaid"]),
        (BARON, ["Baron", "Handmaid"]),
        (KING, ["Handmaid", "King"]),
    ],
)
def test_when_everyone_else_is_protected_a_targeted_card_has_no_effect(
    card: Card, options: list[str]
) -> None:
    """Seat 0 plays the Handmaid; seat 1 holds ``card`` and the other Handmaid."""
    game = huibers(PRINCESS, HANDMAID, card, GUARD, HANDMAID)
    game.play("Handmaid")
    assert game.hand(1) == (card, HANDMAID)
    assert legal(game) == options
    targeted = "Guard->0:Priest" if card == GUARD else f"{card}->0"
    with pytest.raises(IllegalActionError):
        game.play(targeted)
    events = game.play(str(card))
    assert events[:3] == [
        Event(E.PLAY, 1, None, card, 0),
        Event(E.NO_EFFECT, 1, None, card, 0),
        Event(E.TURN, 0),
    ]
    assert game.alive == (True, True)
    assert game.hand(1) == (HANDMAID,)
    assert game.hand(0)[0] == GUARD  # no swap, no look, nothing
    assert game.observation(1).known == (None, None)


def test_when_everyone_else_is_protected_the_prince_targets_its_player() -> None:
    game = huibers(PRINCESS, HANDMAID, PRINCE, GUARD, HANDMAID, BARON)
    game.play("Handmaid")
    assert game.hand(1) == (PRINCE, HANDMAID)
    assert legal(game) == ["Handmaid", "Prince->1"]
    for action in ("Prince->0", "Prince"):
        with pytest.raises(IllegalActionError):
            game.play(action)
    events = game.play("Prince->1")
    assert events[:4] == [
        Event(E.PLAY, 1, 1, PRINCE, 0),
        Event(E.DISCARD, 1, None, HANDMAID, 0),
        Event(E.REDRAW, 1, None, 0, 0),
        Event(E.DRAW, 1, None, BARON, 0, (1,)),
    ]
    assert game.hand(1) == (BARON,)
    assert game.hand(0)[0] == GUARD


# --- Prince ---------------------------------------------------------------------------------------


def test_prince_on_an_opponent() -> None:
    game = huibers(KING, PRINCE, BARON, GUARD, PRIEST, HANDMAID)
    assert legal(game) == [*guards(1), "Prince->0", "Prince->1"]
    events = game.play("Prince->1")
    assert events == [
        Event(E.PLAY, 0, 1, PRINCE, 0),
        Event(E.DISCARD, 1, None, BARON, 0),
        Event(E.REDRAW, 1, None, 0, 0),
        Event(E.DRAW, 1, None, PRIEST, 0, (1,)),
        Event(E.TURN, 1),
        Event(E.DRAW, 1, None, HANDMAID, 0, (1,)),
    ]
    assert game.hand(0) == (GUARD,)
    assert game.hand(1) == (PRIEST, HANDMAID)
    obs = game.observation(0)
    assert obs.pile == ((0, PRINCE), (1, BARON))
    assert obs.discard_totals == (5, 3)
    assert obs.deck_size == 10  # 13 after the deal; seat 0's draw, the redraw, seat 1's draw
    assert of_kind(obs.events, E.DRAW) == [Event(E.DRAW, 0, None, GUARD, 0, (0,))]
    assert not obs.set_aside_taken


def test_prince_on_oneself_discards_the_other_card() -> None:
    game = huibers(KING, PRINCE, BARON, GUARD, PRIEST, HANDMAID)
    events = game.play("Prince->0")
    assert events[:4] == [
        Event(E.PLAY, 0, 0, PRINCE, 0),
        Event(E.DISCARD, 0, None, GUARD, 0),
        Event(E.REDRAW, 0, None, 0, 0),
        Event(E.DRAW, 0, None, PRIEST, 0, (0,)),
    ]
    assert game.hand(0) == (PRIEST,)
    assert game.hand(1) == (BARON, HANDMAID)
    assert game.observation(1).discard_totals == (6, 0)


def test_prince_making_the_target_discard_the_princess_knocks_it_out() -> None:
    game = huibers(KING, PRINCE, PRINCESS, GUARD)
    events = game.play("Prince->1")
    assert events == [
        Event(E.PLAY, 0, 1, PRINCE, 0),
        Event(E.DISCARD, 1, None, PRINCESS, 0),
        Event(E.KNOCKOUT, 1, None, 0, 0),  # nothing left to show, nothing drawn
        round_end(END_LAST_STANDING, 0),
    ]
    assert game.alive == (True, False)
    assert game.winners == (0,)
    assert game.observation(0).deck_size == 12


def test_prince_on_oneself_holding_the_princess_knocks_the_player_out() -> None:
    game = huibers(KING, PRINCESS, GUARD, PRINCE)
    assert legal(game) == ["Prince->0", "Prince->1", "Princess"]
    events = game.play("Prince->0")
    assert events == [
        Event(E.PLAY, 0, 0, PRINCE, 0),
        Event(E.DISCARD, 0, None, PRINCESS, 0),
        Event(E.KNOCKOUT, 0, None, 0, 0),
        round_end(END_LAST_STANDING, 1),
    ]
    assert game.winners == (1,) and game.end_reason == "last_standing"


#: Classic, two players. Aside: Princess; face up: Baron, Baron, King; seat 0 Countess, seat 1
#: Prince; seat 0 draws Guard, Guard, Guard, Handmaid, Priest; seat 1 draws Guard, Guard, Priest,
#: Handmaid, Prince.
LAST_TURN_PRINCE = [
    PRINCESS, BARON, BARON, KING, COUNTESS, PRINCE,
    GUARD, GUARD, GUARD, GUARD, GUARD, PRIEST, HANDMAID, HANDMAID, PRIEST, PRINCE,
]  # fmt: skip


def test_prince_on_the_last_turn_draws_the_set_aside_card() -> None:
    game = Game(2, "classic", deck=LAST_TURN_PRINCE)
    play_through(
        game,
        [
            (0, "Guard->1:Baron"),
            (1, "Guard->0:Baron"),
            (0, "Guard->1:Baron"),
            (1, "Guard->0:Baron"),
            (0, "Guard->1:Baron"),
            (1, "Priest->0"),
            (0, "Handmaid"),
            (1, "Handmaid"),
        ],
    )
    assert legal(game) == ["Priest", "Countess"]  # seat 1 is protected
    game.play("Priest")
    # Last turn: seat 1 drew the last card of the draw pile.
    assert game.turn == 1
    assert game.hand(1) == (PRINCE, PRINCE)
    assert game.observation(1).deck_size == 0
    assert not game.observation(1).set_aside_taken
    assert legal(game) == ["Prince->0", "Prince->1"]
    events = game.play("Prince->0")
    assert events == [
        Event(E.PLAY, 1, 0, PRINCE, 0),
        Event(E.DISCARD, 0, None, COUNTESS, 0),
        Event(E.REDRAW, 0, None, 0, 1),  # 1: the set-aside card
        Event(E.DRAW, 0, None, PRINCESS, 1, (0,)),
        Event(E.SHOWDOWN, 0, None, PRINCESS, 16),  # 1+1+1+4+2 played, 7 discarded
        Event(E.SHOWDOWN, 1, None, PRINCE, 13),  # 1+1+2+4+5
        round_end(END_DECK_EMPTY, 0),
    ]
    assert game.hand(0) == (PRINCESS,)
    assert game.observation(0).set_aside_taken
    assert game.observation(1).set_aside_taken
    assert of_kind(game.observation(1).events, E.DRAW)[-1].seat == 1
    assert game.over and game.end_reason == "deck_empty" and game.winners == (0,)


# --- King -----------------------------------------------------------------------------------------


def test_king_swaps_hands_and_each_side_sees_what_it_receives() -> None:
    game = huibers(PRINCESS, KING, PRIEST, GUARD, BARON)
    assert legal(game) == [*guards(1), "King->1"]
    events = game.play("King->1")
    assert events == [
        Event(E.PLAY, 0, 1, KING, 0),
        Event(E.SWAP, 0, 1),
        Event(E.RECEIVE, 0, 1, PRIEST, 0, (0,)),
        Event(E.RECEIVE, 1, 0, GUARD, 0, (1,)),
        Event(E.TURN, 1),
        Event(E.DRAW, 1, None, BARON, 0, (1,)),
    ]
    assert game.hand(0) == (PRIEST,)
    assert game.hand(1) == (GUARD, BARON)
    me, you = game.observation(0), game.observation(1)
    assert me.known == (None, GUARD)
    assert you.known == (PRIEST, None)
    assert of_kind(me.events, E.RECEIVE) == [events[2]]
    assert of_kind(you.events, E.RECEIVE) == [events[3]]


def test_king_swap_carries_a_third_players_knowledge_with_the_card() -> None:
    """Seat 2 saw seat 0's Guard; seat 0 gives it to seat 1 with the King: seat 2 follows it."""
    # Seats hold Guard, Baron, Priest; seat 2 moves first and draws the Handmaid; seat 0 draws
    # the King.
    game = classic(3, COUNTESS, GUARD, BARON, PRIEST, HANDMAID, KING, first=2)
    game.play("Priest->0")
    assert game.observation(2).known == (GUARD, None, None)
    assert game.observation(0).known_by == (None, None, GUARD)
    assert game.hand(0) == (GUARD, KING)
    game.play("King->1")
    assert game.hand(0) == (BARON,)
    assert game.hand(1)[0] == GUARD
    assert game.observation(2).known == (None, GUARD, None)
    assert game.observation(2).known_by == NONE3
    assert game.observation(0).known == (None, GUARD, None)
    assert game.observation(0).known_by == (None, BARON, None)
    assert game.observation(1).known == (BARON, None, None)
    # Seat 1 knows seat 0 knows its Guard, but not that seat 2 does: it cannot tell whether seat 0
    # held the Guard when seat 2 looked or drew it afterwards.
    assert game.observation(1).known_by == (GUARD, None, None)


# --- Countess -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dealt", "drawn", "other", "kept"),
    [
        (COUNTESS, KING, "King->1", KING),
        (KING, COUNTESS, "King->1", KING),
        (COUNTESS, PRINCE, "Prince->1", PRINCE),
        (PRINCE, COUNTESS, "Prince->0", PRINCE),
    ],
)
def test_countess_is_forced_with_the_king_or_a_prince(
    dealt: Card, drawn: Card, other: str, kept: Card
) -> None:
    game = huibers(PRINCESS, dealt, GUARD, drawn)
    assert legal(game) == ["Countess"]
    with pytest.raises(IllegalActionError):
        game.play(other)
    events = game.play("Countess")
    assert events[:2] == [Event(E.PLAY, 0, None, COUNTESS, 0), Event(E.TURN, 1)]
    assert game.hand(0) == (kept,)


@pytest.mark.parametrize(
    ("other", "options"),
    [
        (GUARD, [*guards(1), "Countess"]),
        (PRIEST, ["Priest->1", "Countess"]),
        (BARON, ["Baron->1", "Countess"]),
        (HANDMAID, ["Handmaid", "Countess"]),
        (PRINCESS, ["Countess", "Princess"]),
    ],
)
def test_countess_is_not_forced_otherwise(other: Card, options: list[str]) -> None:
    game = huibers(GUARD, COUNTESS, GUARD, other)
    assert legal(game) == options


# --- Princess -------------------------------------------------------------------------------------


def test_playing_the_princess_knocks_the_player_out() -> None:
    game = huibers(KING, PRINCESS, BARON, GUARD)
    assert legal(game) == [*guards(1), "Princess"]
    events = game.play("Princess")
    assert events == [
        Event(E.PLAY, 0, None, PRINCESS, 0),
        Event(E.KNOCKOUT, 0, None, GUARD, 0),
        round_end(END_LAST_STANDING, 1),
    ]
    assert game.alive == (False, True)
    assert game.winners == (1,)
    assert game.observation(1).pile == ((0, PRINCESS), (0, GUARD))


# --- knocked out players, end of the round by elimination ---------------------------------------


def test_knocked_out_player_is_skipped_and_cannot_be_targeted() -> None:
    # Seats hold Guard, Priest, Baron; draws: Guard (0), Priest (2), Handmaid (0), Guard (2).
    game = classic(3, COUNTESS, GUARD, PRIEST, BARON, GUARD, PRIEST, HANDMAID, GUARD)
    events = game.play("Guard->1:Priest")
    assert events[1:] == [
        Event(E.KNOCKOUT, 1, None, PRIEST, 0),
        Event(E.TURN, 2),
        Event(E.DRAW, 2, None, PRIEST, 0, (2,)),
    ]
    assert not game.over
    assert game.observation(2).alive == (True, False, True)
    assert legal(game) == ["Priest->0", "Baron->0"]
    with pytest.raises(IllegalActionError):
        game.play("Priest->1")
    events = game.play("Priest->0")
    assert events[-2:] == [Event(E.TURN, 0), Event(E.DRAW, 0, None, HANDMAID, 0, (0,))]
    assert legal(game) == [*guards(2), "Handmaid"]
    game.play("Handmaid")
    # Seat 2: seat 1 is out and seat 0 protected, so nobody can be targeted.
    assert game.turn == 2
    assert game.hand(2) == (BARON, GUARD)
    assert legal(game) == ["Guard", "Baron"]


def test_round_ends_when_one_player_is_left() -> None:
    game = classic(3, COUNTESS, GUARD, PRIEST, BARON, GUARD, PRIEST, GUARD)
    game.play("Guard->1:Priest")
    assert not game.over and game.end_reason is None and game.winners == ()
    game.play("Priest->0")
    events = game.play("Guard->2:Baron")
    assert events[-2:] == [
        Event(E.KNOCKOUT, 2, None, BARON, 0),
        round_end(END_LAST_STANDING, 0),
    ]
    assert game.over and game.winners == (0,) and game.end_reason == "last_standing"
    assert game.alive == (True, False, False)
    assert game.legal_actions() == []
    assert game.observation(0).legal_actions == ()
    assert game.observation(1).winners == (0,)


# --- turn order -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "first", "order"),
    [
        (3, 0, [0, 1, 2, 0]),
        (3, 1, [1, 2, 0, 1]),
        (4, 0, [0, 1, 2, 3, 0]),
        (4, 2, [2, 3, 0, 1, 2]),
    ],
)
def test_turn_order(players: int, first: int, order: list[int]) -> None:
    """Everyone holds a Guard and misses at the next seat naming the (set-aside) Princess."""
    game = classic(players, PRINCESS, *[GUARD] * players, first=first)
    for seat in order[:-1]:
        game.play(f"Guard->{(seat + 1) % players}:Princess")
    assert [e.seat for e in of_kind(game.events, E.TURN)] == order
    assert game.turn == order[-1]
    assert game.alive == (True,) * players


# --- end of the deck ------------------------------------------------------------------------------

#: Classic, two players. Aside: Prince; face up: Baron, Baron, King; seat 0 keeps the Princess,
#: seat 1 the Prince, each plays what it draws.
HIGHEST_HAND = [
    PRINCE, BARON, BARON, KING, PRINCESS, PRINCE,
    GUARD, GUARD, GUARD, GUARD, GUARD, PRIEST, PRIEST, HANDMAID, HANDMAID, COUNTESS,
]  # fmt: skip


def test_deck_empty_highest_hand_wins() -> None:
    """Seat 0 wins with the Princess although seat 1 discarded more."""
    game = Game(2, "classic", deck=HIGHEST_HAND)
    play_through(
        game,
        [
            (0, "Guard->1:Baron"),
            (1, "Guard->0:Baron"),
            (0, "Guard->1:Baron"),
            (1, "Guard->0:Baron"),
            (0, "Guard->1:Baron"),
            (1, "Priest->0"),
            (0, "Priest->1"),
            (1, "Handmaid"),
            (0, "Handmaid"),
        ],
    )
    assert game.hand(1) == (PRINCE, COUNTESS)
    assert legal(game) == ["Countess"]
    events = game.play("Countess")
    assert events == [
        Event(E.PLAY, 1, None, COUNTESS, 0),
        Event(E.SHOWDOWN, 0, None, PRINCESS, 9),
        Event(E.SHOWDOWN, 1, None, PRINCE, 15),
        round_end(END_DECK_EMPTY, 0),
    ]
    assert game.over and game.end_reason == "deck_empty" and game.winners == (0,)
    assert game.observation(1).end_reason == "deck_empty"
    assert game.observation(1).winners == (0,)


#: Classic, two players. Aside: Princess; face up: Prince, Prince, King; both keep a Guard.
#: Seat 0 draws Guard, Guard, Priest, Baron, Handmaid (11); seat 1 Guard, Priest, Baron,
#: Handmaid, Countess (17).
TIE_BROKEN = [
    PRINCESS, PRINCE, PRINCE, KING, GUARD, GUARD,
    GUARD, GUARD, GUARD, PRIEST, PRIEST, BARON, BARON, HANDMAID, HANDMAID, COUNTESS,
]  # fmt: skip


def test_deck_empty_tie_broken_by_discard_totals() -> None:
    game = Game(2, "classic", deck=TIE_BROKEN)
    play_through(
        game,
        [
            (0, "Guard->1:Priest"),
            (1, "Guard->0:Priest"),
            (0, "Guard->1:Priest"),
            (1, "Priest->0"),
            (0, "Priest->1"),
            (1, "Baron->0"),
            (0, "Baron->1"),
            (1, "Handmaid"),
            (0, "Handmaid"),
        ],
    )
    events = game.play("Countess")
    assert events == [
        Event(E.PLAY, 1, None, COUNTESS, 0),
        Event(E.SHOWDOWN, 0, None, GUARD, 11),
        Event(E.SHOWDOWN, 1, None, GUARD, 17),
        round_end(END_DECK_EMPTY, 1),
    ]
    assert game.winners == (1,)
    assert game.observation(0).discard_totals == (11, 17)


#: Classic, two players. Aside: Princess; face up: Prince, Prince, King; both keep a Guard.
#: Seat 0 draws Guard, Priest, Baron, Handmaid, Handmaid (14); seat 1 Guard, Guard, Priest,
#: Baron, Countess (14).
SHARED = [
    PRINCESS, PRINCE, PRINCE, KING, GUARD, GUARD,
    GUARD, GUARD, PRIEST, GUARD, BARON, PRIEST, HANDMAID, BARON, HANDMAID, COUNTESS,
]  # fmt: skip
SHARED_MOVES = [
    (0, "Guard->1:Priest"),
    (1, "Guard->0:Priest"),
    (0, "Priest->1"),
    (1, "Guard->0:Priest"),
    (0, "Baron->1"),
    (1, "Priest->0"),
    (0, "Handmaid"),
    (1, "Baron"),  # seat 0 is protected: no effect
    (0, "Handmaid"),
    (1, "Countess"),
]


def test_deck_empty_still_tied_is_a_shared_win() -> None:
    game = Game(2, "classic", deck=SHARED)
    play_through(game, SHARED_MOVES[:-1])
    assert legal(game) == ["Guard", "Countess"]
    events = game.play(SHARED_MOVES[-1][1])
    assert events == [
        Event(E.PLAY, 1, None, COUNTESS, 0),
        Event(E.SHOWDOWN, 0, None, GUARD, 14),
        Event(E.SHOWDOWN, 1, None, GUARD, 14),
        round_end(END_DECK_EMPTY, 0, 1),
    ]
    assert game.winners == (0, 1)
    assert game.end_reason == "deck_empty"


#: Classic, four players. Aside: Countess; seats hold Guard, Princess, Guard, Guard. Seat 1 is
#: knocked out at once; then everyone keeps a Guard (seats 0 and 2 finally a Prince) and plays
#: harmless cards until the draw pile is empty.
FOUR_PLAYERS = [
    COUNTESS, GUARD, PRINCESS, GUARD, GUARD,
    GUARD, PRIEST, PRIEST, BARON, BARON, HANDMAID, HANDMAID, KING, GUARD, PRINCE, PRINCE,
]  # fmt: skip


def test_deck_empty_with_four_players_ignores_knocked_out_seats() -> None:
    """Seat 1 showed the Princess when it was knocked out; only seats still in compare hands."""
    game = Game(4, "classic", deck=FOUR_PLAYERS)
    play_through(
        game,
        [
            (0, "Guard->1:Princess"),
            (2, "Priest->0"),
            (3, "Priest->0"),
            (0, "Baron->2"),  # Guard against Guard: a tie
            (2, "Baron->3"),  # a tie again
            (3, "Handmaid"),
            (0, "Handmaid"),
        ],
    )
    # Seat 2 (Guard, King): seat 1 is out, seats 0 and 3 are protected.
    assert legal(game) == ["Guard", "King"]
    play_through(game, [(2, "King"), (3, "Guard->2:Prince"), (0, "Guard->3:Princess")])
    assert game.hand(2) == (GUARD, PRINCE)
    assert game.observation(2).deck_size == 0
    events = game.play("Guard->3:Priest")
    assert events == [
        Event(E.PLAY, 2, 3, GUARD, PRIEST),
        Event(E.GUARD_MISS, 2, 3, GUARD, PRIEST),
        Event(E.SHOWDOWN, 0, None, PRINCE, 9),  # 1+3+4+1
        Event(E.SHOWDOWN, 2, None, PRINCE, 12),  # 2+3+6+1
        Event(E.SHOWDOWN, 3, None, GUARD, 7),  # 2+4+1
        round_end(END_DECK_EMPTY, 2),
    ]
    assert [e.seat for e in of_kind(game.events, E.TURN)] == [0, 2, 3] * 3 + [0, 2]
    assert game.winners == (2,)
    assert game.observation(1).discard_totals == (9, 8, 12, 7)


# --- forfeit --------------------------------------------------------------------------------------


def test_forfeit_of_the_seat_to_move_passes_the_turn() -> None:
    game = classic(3, COUNTESS, GUARD, PRIEST, BARON, HANDMAID, KING)
    events = game.forfeit(0)
    assert events == [
        Event(E.FORFEIT, 0),
        Event(E.KNOCKOUT, 0, None, GUARD, HANDMAID),  # both cards shown
        Event(E.TURN, 1),
        Event(E.DRAW, 1, None, KING, 0, (1,)),
    ]
    assert game.alive == (False, True, True)
    assert game.turn == 1 and not game.over
    assert legal(game) == ["Priest->2", "King->2"]


def test_forfeit_of_another_seat_keeps_the_turn() -> None:
    game = classic(3, COUNTESS, GUARD, PRIEST, BARON, HANDMAID)
    events = game.forfeit(2)
    assert events == [Event(E.FORFEIT, 2), Event(E.KNOCKOUT, 2, None, BARON, 0)]
    assert game.alive == (True, True, False)
    assert game.turn == 0 and game.hand(0) == (GUARD, HANDMAID)
    assert legal(game) == [*guards(1), "Handmaid"]


@pytest.mark.parametrize("seat", [0, 1])
def test_forfeit_with_two_players_ends_the_round(seat: int) -> None:
    game = huibers(KING, GUARD, PRIEST, HANDMAID)
    events = game.forfeit(seat)
    assert events[0] == Event(E.FORFEIT, seat)
    assert events[-1] == round_end(END_LAST_STANDING, 1 - seat)
    assert game.over and game.winners == (1 - seat,) and game.end_reason == "last_standing"


def test_nothing_can_be_played_once_the_round_is_over() -> None:
    game = huibers(KING, GUARD, PRIEST, HANDMAID)
    game.play("Guard->1:Priest")
    assert game.legal_actions() == []
    with pytest.raises(GameOverError):
        game.play("Handmaid")
    with pytest.raises(GameOverError):
        game.forfeit(0)


# --- match ----------------------------------------------------------------------------------------


def test_match_round_winner_starts_next_round_and_seven_tokens_win() -> None:
    match = Match(players=2, variant="huibers")
    assert match.target == 7
    # Round 1, seat 0 first: its Baron (with a Guard) loses to seat 1's Priest.
    game = match.new_round(deck(KING, BARON, PRIEST, GUARD))
    assert game.first == 0 and game.turn == 0
    with pytest.raises(ArenaError):
        match.score_round(game)  # not over yet
    with pytest.raises(ArenaError):
        match.new_round()  # the current round is not over
    game.play("Baron->1")
    match.score_round(game)
    assert match.tokens == [0, 1] and match.next_first == 1
    # Round 2, seat 1 first: the same Baron mistake, now by seat 1.
    game = match.new_round(deck(KING, PRIEST, BARON, GUARD))
    assert game.first == 1 and game.turn == 1
    game.play("Baron->0")
    match.score_round(game)
    assert match.tokens == [1, 1] and match.next_first == 0
    # Rounds 3-8: seat 0 starts each and wins with a Guard at once.
    for won in range(2, 8):
        assert not match.over and match.winner is None
        game = match.new_round(deck(KING, GUARD, PRIEST, GUARD))
        assert game.turn == 0
        game.play("Guard->1:Priest")
        match.score_round(game)
        assert match.tokens == [won, 1] and match.next_first == 0
    assert match.over and match.winner == 0
    with pytest.raises(ArenaError):
        match.new_round()


def test_match_shared_round_gives_every_winner_a_token() -> None:
    match = Match(players=2, variant="classic")
    game = match.new_round(SHARED)
    play_through(game, SHARED_MOVES)
    match.score_round(game)
    assert match.tokens == [1, 1]
    assert match.next_first == 0


@pytest.mark.parametrize(("players", "target"), [(2, 7), (3, 5), (4, 4)])
def test_match_tokens_to_win(players: int, target: int) -> None:
    assert Match(players=players).target == target
