"""``ace`` (docs/ace.md): its belief never rules out a card a seat may hold, its deals follow the
belief and keep what the seat knows, it finds what its belief tells, and it plays as declared.
The obvious wins (a Guard naming a card it saw, a Baron it can win, a Prince at a known
Princess) are in tests/test_obvious_wins.py with the other bots'."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from positions import after, bot_choice, deal, random_positions

from arena.engine.layout import (
    N_CARDS,
    S_ASIDE_TAKEN,
    S_DECK,
    S_HAND,
    S_NFACEUP,
    S_NPILE,
    S_PILE,
    S_TOP,
    STATE_SIZE,
    V_ALIVE,
    V_KNOWN,
    V_UNSEEN,
)
from arena.engine.rng import new_rng
from arena.game import Action, Card, Game, Observation, Variant
from bots.ace import BOT, AceBot, event_rows
from bots.ace_belief import belief_from_events, sample_hands
from bots.ace_model import model_table

SETTINGS = [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]


def belief(observation: Observation) -> np.ndarray:
    """The likelihoods ``ace`` keeps for ``observation`` (with its opponent model)."""
    rows = event_rows(observation)
    table = model_table(Variant.get(observation.variant).code, observation.players)
    likelihood = np.ones((4, 9), dtype=np.float64)
    belief_from_events(rows, len(rows), observation.seat, table, likelihood)
    return likelihood


@pytest.mark.parametrize(("variant", "players"), SETTINGS)
def test_the_belief_never_rules_out_the_card_a_seat_holds(variant: str, players: int) -> None:
    checked = 0
    for game, seat in random_positions(variant, players, rounds=150, seed=players):
        observation = game.observation(seat)
        view = observation.to_view()
        likelihood = belief(observation)
        for other in range(players):
            if other == seat or not game.alive[other]:
                continue
            (card,) = game.hand(other)
            if view[V_KNOWN + other]:  # known: the belief agrees
                assert likelihood[other, card] > 0, (other, card)
                continue
            assert view[V_UNSEEN + card] * likelihood[other, card] > 0, (other, card)
            checked += 1
    assert checked > 400


def test_a_missed_guess_rules_the_card_out() -> None:
    # seat 1 (Guard, Baron) names a Priest in seat 0's hand and misses: seat 0 holds the Princess
    game = after(Game(2, "huibers", deck=deal(7, 8, 1, 3), first=1), "Guard->0:Priest")
    seen_by_1 = belief(game.observation(1))
    assert seen_by_1[0, Card.PRIEST] == 0
    assert all(seen_by_1[0, card] > 0 for card in range(1, 9) if card != Card.PRIEST)


def test_a_played_card_weighs_the_kept_one_by_the_chances_of_that_play() -> None:
    chances = model_table(0, 2)
    # the Countess is played from a King or a Prince whatever else: kept cards are weighed so
    assert chances[Card.COUNTESS, Card.KING] == 1.0 and chances[Card.KING, Card.COUNTESS] == 0.0
    assert chances[Card.COUNTESS, Card.PRINCE] == 1.0 and chances[Card.PRINCE, Card.COUNTESS] == 0
    # the Princess is hardly ever played while another card can be
    assert all(chances[Card.PRINCESS, k] < 0.05 for k in range(1, 8))
    for c in range(1, 9):
        assert chances[c, c] == 1.0
        for k in range(1, 9):
            if c != k and chances[c, k] not in (0.0, 1.0):
                assert chances[c, k] + chances[k, c] == pytest.approx(1.0)


@pytest.mark.parametrize(("variant", "players"), SETTINGS)
def test_deals_follow_the_belief_and_keep_what_the_seat_knows(variant: str, players: int) -> None:
    rng = new_rng(7)
    state = np.zeros(STATE_SIZE, dtype=np.int32)
    slots = np.empty(16, dtype=np.int64)
    cards = np.empty(16, dtype=np.int32)
    pool = np.zeros(9, dtype=np.int64)
    weights = np.zeros(9, dtype=np.float64)
    full = Counter(int(c) for c in Variant.get(variant).cards)
    for n, (game, seat) in enumerate(random_positions(variant, players, rounds=40, seed=11)):
        observation = game.observation(seat)
        view = observation.to_view()
        likelihood = belief(observation)
        for _ in range(3 if n % 2 else 1):
            sample_hands(view, likelihood, rng, state, slots, cards, pool, weights)
            assert tuple(state[S_HAND + 2 * seat : S_HAND + 2 * seat + 2]) == tuple(
                list(map(int, observation.hand)) + [0] * (2 - len(observation.hand))
            )
            dealt = Counter()
            for other in range(players):
                hand = [int(c) for c in state[S_HAND + 2 * other : S_HAND + 2 * other + 2] if c]
                dealt.update(hand)
                if other == seat or not view[V_ALIVE + other]:
                    continue
                if view[V_KNOWN + other]:
                    assert hand == [view[V_KNOWN + other]]
                else:
                    assert likelihood[other, hand[0]] > 0
            top = state[S_TOP]
            dealt.update(int(state[S_DECK + i]) for i in range(top, N_CARDS))
            if not state[S_ASIDE_TAKEN]:
                dealt[int(state[S_DECK])] += 1
            dealt.update(int(state[S_DECK + 1 + i]) for i in range(state[S_NFACEUP]))
            dealt.update(int(state[S_PILE + i]) & 15 for i in range(state[S_NPILE]))
            assert dealt == full


def test_the_same_seed_plays_the_same_and_parameters_are_declared() -> None:
    game = after(Game(2, "classic", seed=5), "Guard->1:Priest")
    choices = {bot_choice("ace", game, seed=3, samples=200) for _ in range(3)}
    assert len(choices) == 1
    rules = BOT.rules()
    assert set(rules) == set(BOT.params) == {"samples", "model", "belief", "playout"}
    with pytest.raises(ValueError):
        rules["samples"].check(0)
    with pytest.raises(ValueError):
        rules["model"].check(1.5)


def test_ace_plays_every_variant_and_table_size() -> None:
    bot = AceBot(samples=20)
    for variant, players in SETTINGS:
        for game, seat in random_positions(variant, players, rounds=3, seed=1):
            bot.reset(game.turn)
            action = bot.act(game.observation(seat))
            assert isinstance(action, Action) and action in game.legal_actions()
