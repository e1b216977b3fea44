"""``strategic``: Huibers 2016, section 3.1.3 (the "strategic player").

Rule by rule (docs/bots.md quotes the thesis for each):

1. A forced move (the Countess with the King or a Prince) is played; the Princess never is.
2. With a card it knows an opponent holds, it wins at once when it can: a Guard naming that card
   (not a Guard), a Baron when its other card is higher, a Prince at a known Princess.
3. Otherwise it plays its lowest card, with one exception: not knowing the card of the seat the
   Baron would compare with, it plays the Baron only when its other card is the King, the Countess
   or the Princess, and the other card otherwise.
4. A Guard names the card with the most unseen copies (``V_UNSEEN``), ties to the lowest value.
5. A Prince targets an opponent, itself only when no opponent can be targeted.

With 3-4 players every target is chosen in turn order from the next seat, a seat whose card is
known and beatable first (rule 2), then a seat whose card is not known, then any targetable seat
(:func:`bots.views.first_target`). The policy is deterministic; ``rng`` and ``params`` are unused.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import BARON, GUARD, KING, V_ALIVE, V_HAND, V_KNOWN, V_NPLAYERS, V_SEAT
from bots.policy import PolicyInfo
from bots.views import first_target, most_unseen_guess, play_card, sure_knockout

BOT = PolicyInfo(
    name="strategic",
    description="Huibers 2016 3.1.3: wins at once if it can, else the lowest card",
    order=20,
)


@njit(cache=True)
def _knows_baron_target(view: np.ndarray) -> bool:
    """Whether this seat knows the card of the seat its Baron would compare with; with no seat to
    target, whether it knows the card of every other seat still in the round."""
    t = first_target(view)
    if t >= 0:
        return view[V_KNOWN + t] != 0
    me = view[V_SEAT]
    for s in range(view[V_NPLAYERS]):
        if s != me and view[V_ALIVE + s] != 0 and view[V_KNOWN + s] == 0:
            return False
    return True


@njit(cache=True)
def strategic_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The strategic player's choice among ``legal[:nlegal]``."""
    if nlegal == 1:
        return legal[0]
    win = sure_knockout(view, legal, nlegal)
    if win >= 0:
        return win
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    card = min(c0, c1)
    high = max(c0, c1)
    if card == BARON and high < KING and not _knows_baron_target(view):
        card = high
    guess = most_unseen_guess(view) if card == GUARD else 0
    return play_card(view, legal, nlegal, card, guess)
