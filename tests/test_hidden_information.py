"""Hidden information as a property: a seat's observation depends only on what that seat has seen.

In the spirit of PettingZoo's conformance tests, nothing here knows what a card does. The tests
deal random decks, play random legal actions (with the odd forfeit) through the public
:class:`~arena.game.Game` API and check properties of what each seat is sent:

* two deals that differ only in cards a seat has not seen give that seat identical observations,
  step for step, until an event shown to that seat reveals one of the cards that differ;
* an observation holds the seat's true hand, only events the seat may see, a ``known`` entry only
  for a card the seat was shown privately (and that the other seat really holds), and ``unseen``
  counts that match the cards really hidden from the seat;
* an observation survives JSON and the engine view array unchanged.

The only game knowledge used is the deal layout from DESIGN.md (``deck[0]`` set aside, then the
face-up cards, one card per seat, the draw pile; the first mover draws the top of the pile) and the
list of event kinds that show a card privately.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.layout import N_CARDS
from arena.game import Card, Event, EventKind, Game, Observation, Variant

E = EventKind

#: (variant, players) for every rule set and table size.
CONFIGS = [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]

#: Event kinds shown to some seats only, and the seats they are about.
PRIVATE_KINDS = {E.DEALT, E.DRAW, E.PRIEST_SEE, E.BARON_SHOW, E.RECEIVE}

#: Per event kind, the fields that hold a card value (others hold seats, totals or masks).
CARD_FIELDS: dict[EventKind, tuple[str, ...]] = {
    E.DEALT: ("card",),
    E.FACE_UP: ("card",),
    E.DRAW: ("card",),
    E.PLAY: ("card", "value"),  # the played card and a Guard's guess
    E.NO_EFFECT: ("card",),
    E.GUARD_MISS: ("card", "value"),  # the Guard and the card it named
    E.PRIEST_SEE: ("card",),
    E.BARON_SHOW: ("card", "value"),
    E.DISCARD: ("card",),
    E.RECEIVE: ("card",),
    E.KNOCKOUT: ("card", "value"),
    E.SHOWDOWN: ("card",),
}

OBSERVATION_KEYS = {f.name for f in fields(Observation)}

hyp_settings = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- helpers (dealing layout, random play and bookkeeping only; no rules) -----------------------


def positions_unseen_at_start(variant: str, players: int, seat: int, first: int) -> list[int]:
    """Deck positions whose card ``seat`` has not seen when the round starts (DESIGN.md layout):
    not face up, not dealt to ``seat``, and not the card the first mover draws if it moves first."""
    nf = Variant.get(variant).face_up(players)
    seen = set(range(1, 1 + nf)) | {1 + nf + seat}
    if seat == first:
        seen.add(1 + nf + players)
    return [i for i in range(N_CARDS) if i not in seen]


def card_values(event: Event) -> set[int]:
    """The card values an event shows."""
    return {getattr(event, name) for name in CARD_FIELDS.get(event.kind, ())} - {0}


def first_difference(a: tuple[Event, ...], b: tuple[Event, ...]) -> int | None:
    """The index of the first event that differs between two logs (or where one stops)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def involves(event: Event, seat: int) -> bool:
    """Whether ``seat`` is one the event is about, if it is a private kind (DESIGN.md: a seat sees
    its own cards, its Priest looks, Baron comparisons and King swaps it took part in)."""
    if event.kind == E.BARON_SHOW:
        return seat in (event.seat, event.target)
    if event.kind in PRIVATE_KINDS:
        return event.seat == seat
    return True


@dataclass
class SwapOutcome:
    """What one differential run saw, for the coverage assertions."""

    compared: int = 0  # observation pairs compared equal (seat-steps)
    steps: int = 0  # steps played while some seat's observations were still equal
    revealed_by: list[EventKind] = field(default_factory=list)


def run_swap(
    variant: str,
    players: int,
    deck: tuple[Card, ...],
    first: int,
    p: int,
    q: int,
    play_seed: int,
    forfeit_rate: float = 0.0,
) -> SwapOutcome:
    """Play deck A and deck B = A with positions ``p`` and ``q`` swapped, with the same actions.

    Every seat that has seen neither card at the start is tracked: its observations in A and B
    must be equal after every step until the first step at which they differ, and there the first
    differing event shown to it must show one of the two swapped values. Observations are compared
    whole.
    """
    deck_b = list(deck)
    deck_b[p], deck_b[q] = deck_b[q], deck_b[p]
    swapped = {int(deck[p]), int(deck[q])}
    assert len(swapped) == 2, "the swapped cards must differ"
    a = Game(players, variant, deck=deck, first=first)
    b = Game(players, variant, deck=deck_b, first=first)
    tracked = [
        s
        for s in range(players)
        if {p, q} <= set(positions_unseen_at_start(variant, players, s, first))
    ]
    rng = random.Random(play_seed)
    out = SwapOutcome()
    step = 0
    context = f"{variant} {players}p deck={[int(c) for c in deck]} first={first} p={p} q={q} "
    context += f"play_seed={play_seed} forfeit_rate={forfeit_rate}"

    def compare() -> None:
        for s in list(tracked):
            oa, ob = a.observation(s), b.observation(s)
            if oa == ob:
                out.compared += 1
                continue
            tracked.remove(s)
            where = f"seat {s} step {step}: {context}"
            assert step > 0, f"initial observations differ, {where}"
            i = first_difference(oa.events, ob.events)
            assert i is not None, (
                f"observations differ without a differing event (leak through state), {where}:"
                f"\nA={oa}\nB={ob}"
            )
            shown = [*oa.events[i : i + 1], *ob.events[i : i + 1]]
            revealing = [e for e in shown if card_values(e) & swapped and involves(e, s)]
            assert revealing, (
                f"first differing events {shown} show seat {s} none of the swapped values "
                f"{swapped}, {where}"
            )
            out.revealed_by.append(revealing[0].kind)

    compare()
    while tracked and not a.over and not b.over:
        if forfeit_rate and rng.random() < forfeit_rate:
            seat = rng.choice([s for s in range(players) if a.alive[s]])
            a.forfeit(seat)
            b.forfeit(seat)
        else:
            action = rng.choice(a.legal_actions())
            if action not in b.legal_actions():
                break
            a.play(action)
            b.play(action)
        step += 1
        compare()
        if tracked:
            out.steps = step
    return out


@dataclass
class Swap:
    variant: str
    players: int
    deck: tuple[Card, ...]
    first: int
    seat: int
    p: int
    q: int


def random_swap(rng: random.Random, variant: str, players: int, deep: bool = False) -> Swap:
    """A random deck, first seat, seat and two positions unseen by it that hold different cards.

    With ``deep``, the positions are the set-aside card and one of the last three of the draw
    pile, which tend to stay hidden longest, so the rounds are compared over more steps.
    """
    while True:
        deck = list(Variant.get(variant).cards)
        rng.shuffle(deck)
        first = rng.randrange(players)
        seat = rng.randrange(players)
        hidden = positions_unseen_at_start(variant, players, seat, first)
        p, q = (0, rng.choice(hidden[-3:])) if deep else rng.sample(hidden, 2)
        if deck[p] != deck[q]:
            return Swap(variant, players, tuple(deck), first, seat, p, q)


def random_round(variant: str, players: int, seed: int) -> tuple[Game, random.Random]:
    rng = random.Random(seed)
    return Game(players, variant, seed=seed, first=rng.randrange(players)), rng


def step_randomly(game: Game, rng: random.Random, forfeit_rate: float) -> None:
    """One random step: mostly a random legal action, sometimes a forfeit of a seat still in."""
    if forfeit_rate and rng.random() < forfeit_rate:
        game.forfeit(rng.choice([s for s in range(game.players) if game.alive[s]]))
    else:
        game.play(rng.choice(game.legal_actions()))


# --- 1. deals that differ only in unseen cards look the same ------------------------------------


def test_swap_positions_are_really_unseen_at_start() -> None:
    """Sanity of the helper: swapping two unseen cards leaves every start observation alike."""
    rng = random.Random(1)
    for variant, players in CONFIGS:
        for _ in range(50):
            sw = random_swap(rng, variant, players)
            deck_b = list(sw.deck)
            deck_b[sw.p], deck_b[sw.q] = deck_b[sw.q], deck_b[sw.p]
            a = Game(players, variant, deck=sw.deck, first=sw.first)
            b = Game(players, variant, deck=deck_b, first=sw.first)
            assert a.observation(sw.seat) == b.observation(sw.seat)


def test_differing_unseen_cards_give_identical_observations_until_revealed() -> None:
    """Seeded: many random swaps per variant; observations agree until a reveal, and the runs
    compare many steps and see reveals of many kinds (so the property cannot hold vacuously)."""
    total_compared = 0
    total_steps = 0
    runs = 0
    kinds: Counter[EventKind] = Counter()
    for ci, (variant, players) in enumerate(CONFIGS):
        rng = random.Random(1000 + ci)
        for trial in range(250):
            sw = random_swap(rng, variant, players, deep=trial % 2 == 1)
            rate = 0.05 if trial % 4 == 0 else 0.0
            out = run_swap(
                variant, players, sw.deck, sw.first, sw.p, sw.q, rng.getrandbits(32), rate
            )
            total_compared += out.compared
            total_steps += out.steps
            kinds.update(out.revealed_by)
            runs += 1
    assert total_compared / runs >= 10, f"only {total_compared / runs:.1f} comparisons per run"
    assert total_steps / runs >= 3.5, f"only {total_steps / runs:.1f} equal steps per run"
    # Reveals through the seat's own draw, a Priest, a Baron, a King, a Prince's discard, a
    # knockout, a Guard's miss and the showdown all happened. (A played card is never the first
    # difference: both rounds play the same actions.)
    for kind in (
        E.DRAW,
        E.PRIEST_SEE,
        E.BARON_SHOW,
        E.RECEIVE,
        E.DISCARD,
        E.KNOCKOUT,
        E.SHOWDOWN,
        E.GUARD_MISS,
    ):
        assert kinds[kind] > 0, f"no reveal by {kind.name} in {dict(kinds)}"


@hyp_settings
@given(
    config=st.sampled_from(CONFIGS),
    swap_seed=st.integers(0, 2**32 - 1),
    deep=st.booleans(),
    play_seed=st.integers(0, 2**32 - 1),
    forfeit_rate=st.sampled_from([0.0, 0.0, 0.1]),
)
def test_differing_unseen_cards_property(
    config: tuple[str, int], swap_seed: int, deep: bool, play_seed: int, forfeit_rate: float
) -> None:
    variant, players = config
    sw = random_swap(random.Random(swap_seed), variant, players, deep)
    run_swap(variant, players, sw.deck, sw.first, sw.p, sw.q, play_seed, forfeit_rate)


#: Random differential runs (variant, players, deck, first, p, q, play_seed, forfeit_rate) that
#: once exposed a ``known_by`` leak (a King swap between two seats told the receiving seat that a
#: third seat had seen its new card); found with 60,000 random runs of :func:`run_swap`.
KNOWN_BY_REPROS = [
    ("classic", 3, (1, 4, 3, 5, 6, 3, 2, 1, 8, 1, 2, 1, 5, 1, 7, 4), 2, 7, 2, 4168019144, 0.05),
    ("classic", 4, (1, 2, 2, 7, 5, 8, 4, 1, 6, 1, 1, 5, 3, 3, 4, 1), 1, 4, 7, 1222110446, 0.0),
]


def known_by_scenario() -> list[tuple[Observation, Observation]]:
    """Three seats. Seat 0 looks at seat 1's card with a Priest; seat 1 draws, plays its Guard and
    keeps the other card, a Baron; seat 2 swaps hands with seat 1 by King and receives the Baron.

    In deck A seat 1 was dealt the Baron and drew the Guard, so seat 0 saw the Baron; in deck B
    (positions 2 and 5 swapped, both unseen by seat 2) it was dealt the Guard and drew the Baron,
    so seat 0 saw the Guard, which seat 1 then played. Returns seat 2's observations in A and B
    at the start and after each action.
    """
    g, pr, b, h, k, x = (
        Card.GUARD, Card.PRIEST, Card.BARON, Card.HANDMAID, Card.KING, Card.PRINCESS
    )  # fmt: skip
    rest = list(Variant.get("classic").cards)
    lead = [x, g, b, h, pr, g, k]  # aside, seats 0-2 dealt, then seats 0, 1, 2 draw
    for card in lead:
        rest.remove(card)
    deck_a = [*lead, *rest]
    deck_b = list(deck_a)
    deck_b[2], deck_b[5] = deck_b[5], deck_b[2]
    assert {2, 5} <= set(positions_unseen_at_start("classic", 3, 2, 0))
    game_a, game_b = Game(3, deck=deck_a), Game(3, deck=deck_b)
    pairs = [(game_a.observation(2), game_b.observation(2))]
    for action in ["Priest->1", "Guard->0:Princess", "King->1"]:
        game_a.play(action)
        game_b.play(action)
        pairs.append((game_a.observation(2), game_b.observation(2)))
    assert game_a.hand(2) == game_b.hand(2) == (Card.BARON,)
    return pairs


def test_known_by_scenario_is_otherwise_indistinguishable() -> None:
    """Every field but ``known_by`` (every event included) is the same in A and B for seat 2."""
    for oa, ob in known_by_scenario():
        assert replace(oa, known_by=()) == replace(ob, known_by=())


def test_known_by_does_not_leak_what_another_seat_saw() -> None:
    """So ``known_by`` must be the same too: seat 2 must not learn from it what seat 0's private
    Priest look showed, nor in which order seat 1 got its cards."""
    for oa, ob in known_by_scenario():
        assert oa.known_by == ob.known_by
    # What seat 2 does know: seat 1, which handed it the Baron, knows it holds the Baron.
    assert known_by_scenario()[-1][0].known_by == (None, Card.BARON, None)


@pytest.mark.parametrize("repro", KNOWN_BY_REPROS, ids=["classic-3p", "classic-4p"])
def test_known_by_random_repros(repro: tuple) -> None:
    variant, players, deck, first, p, q, play_seed, rate = repro
    cards = tuple(Card(c) for c in deck)
    run_swap(variant, players, cards, first, p, q, play_seed, rate)


# --- 2. an observation holds nothing the seat has not seen --------------------------------------


def privately_shown_values(seat: int, events: tuple[Event, ...]) -> set[int]:
    """Card values shown to ``seat`` by private events (its own cards included)."""
    values: set[int] = set()
    for e in events:
        if e.kind in PRIVATE_KINDS:
            values |= card_values(e)
    return values


def check_private_event(event: Event, players: int) -> None:
    """A private event is shown exactly to the seats it is about."""
    if event.kind not in PRIVATE_KINDS:
        assert event.visible_to is None, event
        return
    about = {event.seat} if event.kind != E.BARON_SHOW else {event.seat, event.target}
    if len(about) == players:
        assert event.visible_to is None, event
    else:
        assert event.visible_to is not None and set(event.visible_to) == about, event


def check_observation(game: Game, seat: int) -> Observation:
    """Every check of one seat's observation against the true state."""
    obs = game.observation(seat, tokens=(2,) * game.players, round=3)
    where = f"seat {seat}, after {game.actions}"
    data = json.loads(json.dumps(obs.to_json()))
    assert set(data) == OBSERVATION_KEYS
    assert obs.seat == seat
    # Its own hand, truly.
    assert obs.hand == game.hand(seat), where
    assert data["hand"] == [int(c) for c in game.hand(seat)], where
    # Legal actions only for the seat to move.
    if game.over or game.turn != seat:
        assert obs.legal_actions == (), where
    else:
        assert list(obs.legal_actions) == game.legal_actions(), where
    # Only events it may see, and every one of them.
    for e in obs.events:
        assert e.visible(seat), (e, where)
        assert involves(e, seat), (e, where)
    for ev in data["events"]:
        assert ev["visible_to"] is None or seat in ev["visible_to"], (ev, where)
    assert obs.events == tuple(e for e in game.events if e.visible(seat)), where
    # Another seat's card only when shown privately, and then truly.
    shown = privately_shown_values(seat, obs.events)
    assert len(obs.known) == game.players and obs.known[seat] is None, where
    assert data["known"][seat] is None
    for j, card in enumerate(obs.known):
        if card is None:
            continue
        assert game.alive[j], (j, where)
        assert card in game.hand(j), (j, card, game.hand(j), where)
        assert int(card) in shown, (j, card, shown, where)
        assert data["known"][j] == int(card)
    # What others know of its hand is what they are told they know.
    for j, card in enumerate(obs.known_by):
        if card is None:
            continue
        assert j != seat and card in obs.hand, (j, card, where)
        assert game.observation(j).known[seat] == card, (j, where)
    # Unseen: what the seat has not seen, counted from the true hidden cards.
    assert all(u >= 0 for u in obs.unseen), (obs.unseen, where)
    nknown = sum(c is not None for c in obs.known)
    assert sum(obs.unseen) == (
        N_CARDS - len(obs.hand) - len(obs.face_up) - len(obs.pile) - nknown
    ), where
    hidden: Counter[int] = Counter(int(c) for c in game.deck[N_CARDS - obs.deck_size :])
    if not obs.set_aside_taken:
        hidden[int(game.deck[0])] += 1
    for j in range(game.players):
        if j != seat:
            hidden.update(int(c) for c in game.hand(j))
            if obs.known[j] is not None:
                hidden[int(obs.known[j])] -= 1
    assert obs.unseen == tuple(hidden[v] for v in range(1, 9)), (obs.unseen, hidden, where)
    # Public facts agree with the truth.
    assert obs.alive == game.alive and obs.turn == game.turn, where
    assert obs.winners == game.winners and obs.end_reason == game.end_reason, where
    assert obs.face_up == tuple(e.card for e in game.events if e.kind == E.FACE_UP), where
    return obs


def test_private_events_are_shown_only_to_the_seats_involved() -> None:
    for ci, (variant, players) in enumerate(CONFIGS):
        for seed in range(60):
            game, rng = random_round(variant, players, 7000 + 100 * ci + seed)
            while not game.over:
                step_randomly(game, rng, 0.03)
            for event in game.events:
                check_private_event(event, players)


def test_observations_hold_only_what_the_seat_has_seen() -> None:
    """Seeded: every seat at every step of many random rounds of every variant."""
    checked = 0
    known_seen = 0
    for ci, (variant, players) in enumerate(CONFIGS):
        for seed in range(80):
            game, rng = random_round(variant, players, 100 * ci + seed)
            while True:
                for seat in range(players):
                    obs = check_observation(game, seat)
                    checked += 1
                    known_seen += sum(c is not None for c in obs.known)
                if game.over:
                    break
                step_randomly(game, rng, 0.04)
    assert checked > 3000
    assert known_seen > 100  # the `known` checks were exercised


@hyp_settings
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**63 - 1),
    forfeit_rate=st.sampled_from([0.0, 0.1]),
)
def test_observations_hold_only_what_the_seat_has_seen_property(
    config: tuple[str, int], seed: int, forfeit_rate: float
) -> None:
    variant, players = config
    game, rng = random_round(variant, players, seed)
    while True:
        for seat in range(players):
            check_observation(game, seat)
        if game.over:
            break
        step_randomly(game, rng, forfeit_rate)


# --- 3. observations round-trip through JSON and the engine view --------------------------------


def check_round_trips(game: Game, seat: int, tokens: tuple[int, ...], round_number: int) -> None:
    obs = game.observation(seat, tokens, round_number)
    text = json.dumps(obs.to_json())
    assert Observation.from_json(json.loads(text)) == obs
    assert Observation.from_json(text) == obs
    view = obs.to_view()
    assert np.array_equal(view, game.view(seat)), (seat, game.actions)
    again = Observation.from_view(view, obs.legal_actions, obs.events, obs.tokens, obs.round)
    assert again == obs
    for name in OBSERVATION_KEYS:
        assert getattr(again, name) == getattr(obs, name), name


@hyp_settings
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**63 - 1),
    round_number=st.integers(1, 20),
    tokens=st.lists(st.integers(0, 6), min_size=4, max_size=4),
)
def test_observation_round_trips(
    config: tuple[str, int], seed: int, round_number: int, tokens: list[int]
) -> None:
    variant, players = config
    game, rng = random_round(variant, players, seed)
    while True:
        for seat in range(players):
            check_round_trips(game, seat, tuple(tokens[:players]), round_number)
        if game.over:
            break
        step_randomly(game, rng, 0.05)
