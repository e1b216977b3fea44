"""``knowledge``: the knowledge-based agent of Omarov et al. 2018 ("Knowledge based agent").

Rule by rule (docs/bots.md quotes the paper for each):

1. The game's rules are enforced: a forced move (the Countess with the King or a Prince) is
   played.
2. A move that wins at once is played: from a card it knows an opponent holds, a Guard naming
   that card (not a Guard), a Baron when its other card is higher, a Prince at a known Princess.
3. Otherwise the smallest card in hand is played (so never the Princess), with no exception.
4. A Guard names the card "encountered the minimum number of times in the played deck": the
   non-Guard value with the most copies not in the public discard pile (copies in the deck minus
   copies played or discarded), ties to the lowest value.
5. A Prince targets an opponent, itself only when no opponent can be targeted.

With 3-4 players every target is chosen in turn order from the next seat: a seat a sure win is
aimed at first (rule 2), then a seat whose card is not known, then any targetable seat
(:func:`bots.views.first_target`). The agent is deterministic, as the paper says; ``rng`` and
``params`` are unused.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import CARD_COUNTS, GUARD, PRIEST, PRINCESS, V_HAND, V_NPILE, V_PILE
from bots.policy import PolicyInfo
from bots.views import play_card, sure_knockout

BOT = PolicyInfo(
    name="knowledge",
    description=(
        "Omarov et al. 2018: knowledge-based agent, an immediate win, else the smallest card"
    ),
    order=30,
)


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
def knowledge_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The knowledge-based agent's choice among ``legal[:nlegal]``."""
    if nlegal == 1:
        return legal[0]
    win = sure_knockout(view, legal, nlegal)
    if win >= 0:
        return win
    card = min(view[V_HAND], view[V_HAND + 1])
    guess = least_played_guess(view) if card == GUARD else 0
    return play_card(view, legal, nlegal, card, guess)
