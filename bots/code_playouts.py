"""The playout policy of Omarov et al. 2018's code, for ``pimc``'s rollouts.

The authors' PIMC plays its rollouts out with a heuristic (their ``strategy.get_optimal_move``),
not with random moves; the paper does not describe it. :func:`code_playout_policy` plays it from
a seat's view, rule by rule in the code's order (``low``/``high``: the lower and higher card in
hand; the opponent: a seat still in the round drawn at random):

1. A single legal card is played.
2. Against a protected opponent: Guard and Priest, the Guard on the last draw while a Guard is
   unaccounted for, else the Priest; Guard and Handmaid, the Handmaid if an opponent knows it is
   held and a Guard is unaccounted for, else the Guard on the last draw, else the Handmaid; a
   Prince or a King an opponent knows is held, while a Guard is unaccounted for; else ``low``.
3. A Guard naming a card known in a targetable seat's hand (not a Guard).
4. At that seat: a Baron if the other card is higher than the known one; a Prince if the known
   card is the Princess.
5. A Baron if at least 60% of the unaccounted copies are lower than the other card.
6. The Priest rather than the Guard.
7. ``low`` if an opponent knows it is held and not all Guards are played; else ``high`` if an
   opponent knows it is held, it is not the Princess and not all Guards are played (the Handmaid
   instead when ``low`` is the Handmaid).
8. Guard and Handmaid: the Guard when two cards or fewer are left to draw, else the Handmaid.
9. ``low``.

A card goes to the opponent (a Prince to itself when the opponent is protected); a Guard names
the card known in the target's hand if it is not a Guard, else the authors' guess
(:func:`bots.knowledge.code_guess`). "Unaccounted" is :func:`bots.knowledge.unaccounted`.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    END_NONE,
    GUARD,
    HANDMAID,
    KING,
    PRIEST,
    PRINCE,
    PRINCESS,
    S_END,
    S_TURN,
    V_ALIVE,
    V_DECK_SIZE,
    V_HAND,
    V_KNOWN,
    V_NPILE,
    V_NPLAYERS,
    V_PILE,
    V_PROT,
    V_SEAT,
)
from arena.engine.rng import rand_below
from arena.engine.rules import apply_action, legal_actions
from arena.engine.view import seat_view
from bots.knowledge import code_guess, known_by_an_opponent, unaccounted
from bots.playout import share
from bots.views import find_action, other_card, play_card, targetable


@njit(cache=True)
def _opponent(view: np.ndarray, rng: np.ndarray) -> int:
    """A seat still in the round other than this one, drawn uniformly (protected or not)."""
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    count = 0
    for s in range(n):
        if s != me and view[V_ALIVE + s] != 0:
            count += 1
    pick = rand_below(rng, count) if count > 1 else 0
    for s in range(n):
        if s != me and view[V_ALIVE + s] != 0:
            if pick == 0:
                return s
            pick -= 1
    return -1


@njit(cache=True)
def _play_at(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    card: int,
    target: int,
    left: np.ndarray,
    rng: np.ndarray,
) -> int:
    """The legal action playing ``card`` at ``target`` (see the module's last paragraph), or
    the rule-based policies' way of playing it where ``target`` cannot be aimed at."""
    guess = 0
    if card == GUARD:
        known = view[V_KNOWN + target] if target >= 0 else 0
        guess = known if known > GUARD else code_guess(left, rng)
    if target >= 0 and targetable(view, target):
        a = find_action(legal, nlegal, card, target, guess)
        if a >= 0:
            return a
    if card == PRINCE:
        a = find_action(legal, nlegal, PRINCE, view[V_SEAT], 0)
        if a >= 0:
            return a
    return play_card(view, legal, nlegal, card, guess)


@njit(cache=True)
def _guards_played(view: np.ndarray) -> int:
    count = 0
    for i in range(view[V_NPILE]):
        if view[V_PILE + i] & 15 == GUARD:
            count += 1
    return count


@njit(cache=True)
def _protected_card(view: np.ndarray, left: np.ndarray, low: int, high: int) -> int:
    """Rule 2: the card played when the opponent is protected."""
    guard_left = left[GUARD] > 0
    last_draw = view[V_DECK_SIZE] <= 1
    if low == GUARD and high == PRIEST:
        return GUARD if guard_left and last_draw else PRIEST
    if low == GUARD and high == HANDMAID:
        if guard_left and known_by_an_opponent(view, HANDMAID):
            return HANDMAID
        return GUARD if last_draw else HANDMAID
    for card in (PRINCE, KING):
        if (low == card or high == card) and guard_left and known_by_an_opponent(view, card):
            return card
    return low


@njit(cache=True)
def code_playout_policy(view: np.ndarray, legal: np.ndarray, nlegal: int, rng: np.ndarray) -> int:
    """The authors' playout choice among ``legal[:nlegal]`` for the seat of ``view`` (a full
    seat view, :func:`arena.engine.view.seat_view`)."""
    if nlegal == 1:
        return legal[0]
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    low = min(c0, c1)
    high = max(c0, c1)
    left = unaccounted(view)
    opponent = _opponent(view, rng)
    if opponent >= 0 and view[V_PROT + opponent] != 0:
        return _play_at(view, legal, nlegal, _protected_card(view, left, low, high), -1, left, rng)
    me = view[V_SEAT]
    victim = -1
    for s in range(view[V_NPLAYERS]):
        if s != me and targetable(view, s) and view[V_KNOWN + s] > GUARD:
            victim = s
            break
    if victim >= 0:
        known = view[V_KNOWN + victim]
        if low == GUARD:
            return _play_at(view, legal, nlegal, GUARD, victim, left, rng)
        if (c0 == BARON or c1 == BARON) and other_card(view, BARON) > known:
            return _play_at(view, legal, nlegal, BARON, victim, left, rng)
        if known == PRINCESS and (c0 == PRINCE or c1 == PRINCE):
            return _play_at(view, legal, nlegal, PRINCE, victim, left, rng)
    if c0 == BARON or c1 == BARON:
        second = other_card(view, BARON)
        total = 0
        lower = 0
        for v in range(GUARD, PRINCESS + 1):
            total += left[v]
            if v < second:
                lower += left[v]
        if total > 0 and lower >= 0.6 * total:
            return _play_at(view, legal, nlegal, BARON, opponent, left, rng)
    if low == GUARD and high == PRIEST:
        return _play_at(view, legal, nlegal, PRIEST, opponent, left, rng)
    guards_out = _guards_played(view) >= 5
    if not guards_out and known_by_an_opponent(view, low):
        return _play_at(view, legal, nlegal, low, opponent, left, rng)
    if not guards_out and high != PRINCESS and known_by_an_opponent(view, high):
        card = HANDMAID if low == HANDMAID else high
        return _play_at(view, legal, nlegal, card, opponent, left, rng)
    if low == GUARD and high == HANDMAID:
        card = GUARD if view[V_DECK_SIZE] <= 2 else HANDMAID
        return _play_at(view, legal, nlegal, card, opponent, left, rng)
    return _play_at(view, legal, nlegal, low, opponent, left, rng)


@njit(cache=True)
def code_playout_with(
    state: np.ndarray,
    rng: np.ndarray,
    seat: int,
    view: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
) -> float:
    """Play the round in ``state`` (modified in place) to its end with every seat playing
    :func:`code_playout_policy`; return ``seat``'s share of the result. ``view``, ``acts`` and
    ``ev`` are scratch buffers as for :func:`bots.playout.random_playout_with`."""
    while state[S_END] == END_NONE:
        k = legal_actions(state, acts)
        mover = state[S_TURN]
        seat_view(state, mover, view)
        apply_action(state, code_playout_policy(view, acts, k, rng), ev)
    return share(state, seat)
