"""``knowledge``: the knowledge-based agent of Omarov et al. 2018 ("Knowledge based agent").

The paper's paragraph, rule by rule (docs/bots.md quotes the paper for each):

1. The game's rules are enforced: a forced move (the Countess with the King or a Prince) is
   played.
2. A move that wins at once is played: from a card it knows an opponent holds, a Guard naming
   that card (not a Guard), a Baron when its other card is higher, a Prince at a known Princess.
3. Otherwise the smallest card in hand is played (so never the Princess), with no exception.
4. A Guard names the card "encountered the minimum number of times in the played deck": the
   non-Guard value with the most copies not in the public discard pile (copies in the deck minus
   copies played or discarded), ties to the lowest value.
5. A Prince targets an opponent, itself only when no opponent can be targeted.

With ``code_rules`` (the default) the agent also follows the further rules of the authors' code
(the paper: "The full set of checks and conditions can be found in the code repository"), after
rules 1-2 and in this order: on the last turn (the draw pile empty) the smaller card; never the
Princess; one of a pair; a card an opponent knows it holds, while a Guard is unaccounted for; the
Priest rather than the Guard; a Priest, Baron or Handmaid an opponent is likely to guess; then
the smaller card, but never a Baron that would lose. Its Guard names the non-Guard value with
the most copies it cannot account for (not played, face up or in its own hand), ties at random
as in the authors' code. docs/bots.md gives each rule with the code behaviour it rests on.

With 3-4 players every target is chosen in turn order from the next seat: a seat a sure win is
aimed at first (rule 2), then a seat whose card is not known, then any targetable seat
(:func:`bots.views.first_target`). With ``code_rules=false`` the agent is deterministic, as the
paper says, and reads no ``rng``.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    CARD_COUNTS,
    GUARD,
    HANDMAID,
    PRIEST,
    PRINCESS,
    V_DECK_SIZE,
    V_FACEUP,
    V_HAND,
    V_KNOWN,
    V_KNOWN_BY,
    V_NFACEUP,
    V_NPILE,
    V_NPLAYERS,
    V_PILE,
    V_SEAT,
)
from arena.engine.rng import rand_below
from bots.policy import PolicyInfo
from bots.views import count_unaccounted, first_target, other_card, play_card, sure_knockout

BOT = PolicyInfo(
    name="knowledge",
    description=(
        "Omarov et al. 2018: knowledge-based agent, an immediate win, else the smallest card"
    ),
    params={"code_rules": True},
    order=30,
)

#: The cards the authors' code tries to get rid of when an opponent is likely to guess them, in
#: its order (its list names the Priest twice and no Prince: kept as the code behaves).
TWIN_CARDS = (PRIEST, BARON, HANDMAID, PRIEST)


@njit(cache=True)
def least_played_guess(view: np.ndarray) -> int:
    """The non-Guard card with the most copies not yet in the public discard pile (the "played
    deck"), ties to the lowest value."""
    best = PRIEST
    best_left = -1
    for v in range(PRIEST, PRINCESS + 1):
        left = CARD_COUNTS[v]
        for i in range(view[V_NPILE]):
            if view[V_PILE + i] & 15 == v:
                left -= 1
        if left > best_left:
            best = v
            best_left = left
    return best


@njit(cache=True)
def unaccounted(view: np.ndarray) -> np.ndarray:
    """Per value, the copies this seat cannot account for: not in the discard pile, face up or in
    its own hand (the authors' ``card_count``; cards it knows others hold still count)."""
    left = np.empty(PRINCESS + 1, dtype=np.int32)
    count_unaccounted(view, V_PILE, view[V_NPILE], V_FACEUP, view[V_NFACEUP], V_HAND, left)
    return left


@njit(cache=True)
def code_guess(left: np.ndarray, rng: np.ndarray) -> int:
    """The authors' Guard guess: a non-Guard value with the most ``left`` copies, ties drawn
    uniformly."""
    most = 0
    for v in range(PRIEST, PRINCESS + 1):
        most = max(most, left[v])
    ties = 0
    for v in range(PRIEST, PRINCESS + 1):
        if left[v] == most:
            ties += 1
    pick = rand_below(rng, ties)
    for v in range(PRIEST, PRINCESS + 1):
        if left[v] == most:
            if pick == 0:
                return v
            pick -= 1
    return PRIEST


@njit(cache=True)
def baron_loses(view: np.ndarray, card: int) -> bool:
    """The authors' ``lose_with_baron``: ``card`` is a Baron and the other card is no higher than
    the Baron itself, or than the card known in the hand of the seat it would be played at."""
    if card != BARON:
        return False
    mine = other_card(view, BARON)
    if mine <= BARON:
        return True
    target = first_target(view)
    known = view[V_KNOWN + target] if target >= 0 else 0
    return known > GUARD and mine <= known


@njit(cache=True)
def known_by_an_opponent(view: np.ndarray, card: int) -> bool:
    """Whether another seat knows this seat holds ``card``."""
    for s in range(view[V_NPLAYERS]):
        if s != view[V_SEAT] and view[V_KNOWN_BY + s] == card:
            return True
    return False


@njit(cache=True)
def likely_guessed(left: np.ndarray, view: np.ndarray, card: int) -> bool:
    """The authors' ``get_probability(card) >= 0.5``: with another copy of ``card`` unaccounted
    for, at most two entries of :data:`TWIN_CARDS` with two copies unaccounted for or one and in
    hand; else at most two values unaccounted for or in hand."""
    hand0 = view[V_HAND]
    hand1 = view[V_HAND + 1]
    count = 0
    if left[card] > 0:
        for t in TWIN_CARDS:
            if left[t] == 2 or (left[t] == 1 and (hand0 == t or hand1 == t)):
                count += 1
    else:
        for v in range(GUARD, PRINCESS + 1):
            if left[v] > 0 or hand0 == v or hand1 == v:
                count += 1
    return count <= 2


@njit(cache=True)
def settled_card(view: np.ndarray) -> int:
    """The card the first of the authors' further rules settle, or 0: on the last turn the
    smaller card, never the Princess, one of a pair (the rules their search agents also apply
    before searching)."""
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    if view[V_DECK_SIZE] == 0:
        return min(c0, c1)
    if c0 == PRINCESS:
        return c1
    if c1 == PRINCESS:
        return c0
    if c0 == c1:
        return c0
    return 0


@njit(cache=True)
def settled_move(view: np.ndarray, legal: np.ndarray, nlegal: int, rng: np.ndarray) -> int:
    """The move the authors' rule-based checks settle before their PIMC searches (a sure win,
    then :func:`settled_card`, played as :func:`knowledge_policy` plays it), or -1."""
    win = sure_knockout(view, legal, nlegal)
    if win >= 0:
        return win
    card = settled_card(view)
    if card == 0:
        return -1
    guess = code_guess(unaccounted(view), rng) if card == GUARD else 0
    return play_card(view, legal, nlegal, card, guess)


@njit(cache=True)
def code_rules_card(view: np.ndarray, left: np.ndarray) -> int:
    """The card the authors' further rules play (after a forced move and a sure win)."""
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    low = min(c0, c1)
    settled = settled_card(view)
    if settled != 0:
        return settled
    guard_left = left[GUARD] > 0
    for card in (c0, c1):
        if (
            card != GUARD
            and known_by_an_opponent(view, card)
            and guard_left
            and not baron_loses(view, card)
        ):
            return card
    if low == GUARD and max(c0, c1) == PRIEST:
        return PRIEST
    for card in TWIN_CARDS:
        if (
            (c0 == card or c1 == card)
            and guard_left
            and likely_guessed(left, view, card)
            and not baron_loses(view, card)
        ):
            return card
    if baron_loses(view, low):
        return max(c0, c1)
    return low


@njit(cache=True)
def knowledge_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The knowledge-based agent's choice among ``legal[:nlegal]`` (``params[0]`` nonzero: with
    the authors' further rules)."""
    if nlegal == 1:
        return legal[0]
    win = sure_knockout(view, legal, nlegal)
    if win >= 0:
        return win
    if params[0] == 0.0:
        card = min(view[V_HAND], view[V_HAND + 1])
        guess = least_played_guess(view) if card == GUARD else 0
        return play_card(view, legal, nlegal, card, guess)
    left = unaccounted(view)
    card = code_rules_card(view, left)
    guess = code_guess(left, rng) if card == GUARD else 0
    return play_card(view, legal, nlegal, card, guess)
