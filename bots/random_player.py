"""``random``: Huibers 2016, section 3.1.1.

The forced Countess is respected, the Princess is never played, otherwise a card is chosen at
random; a Guard names a card from 2 to 8 at random; a Prince targets the opponent or itself with
equal chance (itself when the opponent is protected). With more players the target of any card is
a uniformly chosen opponent that can be targeted (docs/bots.md).
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import COUNTESS, GUARD, HANDMAID, PRINCE, PRINCESS, V_HAND, V_SEAT
from arena.engine.rng import rand_below
from bots.policy import PolicyInfo
from bots.views import find_action, random_opponent

BOT = PolicyInfo(
    name="random",
    description="Huibers 2016 3.1.1: random, but never the Princess",
    order=10,
)


@njit(cache=True)
def random_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The random player's choice among ``legal[:nlegal]``."""
    if nlegal == 1:
        return legal[0]
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    if c0 == PRINCESS:
        card = c1
    elif c1 == PRINCESS:
        card = c0
    else:
        card = c0 if rand_below(rng, 2) == 0 else c1
    me = view[V_SEAT]
    if card == HANDMAID or card == COUNTESS:
        return find_action(legal, nlegal, card, -2, 0)
    if card == PRINCE:
        target = random_opponent(view, rng)
        if target < 0 or rand_below(rng, 2) == 1:
            target = me
        return find_action(legal, nlegal, card, target, 0)
    target = random_opponent(view, rng)
    if card == GUARD and target >= 0:
        return find_action(legal, nlegal, card, target, 2 + rand_below(rng, 7))
    return find_action(legal, nlegal, card, target, 0)
