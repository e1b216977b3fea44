"""``dp``: Huibers 2016, section 3.2: plays the Dynamic Programming table's choice.

The table (:mod:`solver`) holds, for every reachable two-player configuration f(b1, b2, c, A,
maid, known, p), the card to play, the Guard's guess and the Prince's target. The policy reads
those arguments off the seat's view: its two cards, the cards it has not seen plus a known
opponent card (A), whether the opponent is protected by a Handmaid (maid), the opponent's card when
known (c, known), and which of its cards the opponent knows (p). It then plays the table's entry.

When the opponent's card is unknown, the table's choice is made on the player's belief and does
not depend on the opponent's true card c (thesis 3.2.3), so any computed entry with known = 0
gives it; the policy takes the first of c = 0, 1, ..., 8 that the table computed. A configuration
the table does not hold (never in a ``huibers`` round; possible in a ``classic`` round, whose
face-up cards leave unseen sets the two-player game without them cannot reach) falls back to
the strategic player's rule, as does a table that was not loaded.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    GUARD,
    PRINCE,
    V_HAND,
    V_KNOWN,
    V_KNOWN_BY,
    V_NPLAYERS,
    V_PROT,
    V_SEAT,
    V_UNSEEN,
)
from bots.policy import PolicyInfo
from bots.strategic import strategic_policy
from bots.views import find_action
from solver.index import state_index

BOT = PolicyInfo(
    name="dp",
    description="Huibers 2016 3.2: the Dynamic Programming table's choice (2-player huibers)",
    variants=("huibers",),
    players=(2,),
    order=60,
)

#: The table entry's "computed" bit (solver.DPTable.policy).
COMPUTED = 1 << 10


def policy_table() -> np.ndarray:
    """The policy's ``table``: the ``huibers`` Dynamic Programming table's policy array
    (:class:`solver.DPTable`), built and cached by the solver on first use."""
    from solver import load_table

    return load_table("huibers").policy


@njit(cache=True)
def table_entry(view: np.ndarray, table: np.ndarray) -> int:
    """The table's policy entry for the seat's configuration, or -1 if it holds none."""
    if table.shape[0] == 0 or view[V_NPLAYERS] != 2:
        return -1
    me = view[V_SEAT]
    opp = 1 - me
    b1 = min(view[V_HAND], view[V_HAND + 1])
    b2 = max(view[V_HAND], view[V_HAND + 1])
    if b1 == 0:
        return -1
    a = np.zeros(9, dtype=np.int64)
    for v in range(1, 9):
        a[v] = view[V_UNSEEN + v]
    c = view[V_KNOWN + opp]
    if c != 0:
        a[c] += 1  # the opponent's card is one of the remaining cards, known or not
    maid = 1 if view[V_PROT + opp] != 0 else 0
    kb = view[V_KNOWN_BY + opp]
    p = 0
    if kb != 0:
        p = 1 if kb == b1 else 2
    if c != 0:
        code = table[state_index(b1, b2, c, a, maid, 1, p)]
        return code if code & COMPUTED else -1
    for guess_c in range(9):
        code = table[state_index(b1, b2, guess_c, a, maid, 0, p)]
        if code & COMPUTED:
            return code
    return -1


@njit(cache=True)
def dp_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The table's choice for the seat, as one of ``legal[:nlegal]``."""
    if nlegal == 1:
        return legal[0]
    code = table_entry(view, table)
    if code >= 0:
        card = code & 15
        guess = (code >> 4) & 15
        target = (code >> 8) & 3
        me = view[V_SEAT]
        opp = 1 - me
        action = -1
        if card == GUARD:
            action = find_action(legal, nlegal, card, opp, guess)
            if action < 0:  # the opponent is protected: the Guard has no target
                action = find_action(legal, nlegal, card, -1, 0)
        elif card == PRINCE:
            action = find_action(legal, nlegal, card, me if target == 2 else opp, 0)
        else:
            action = find_action(legal, nlegal, card, -2, 0)
        if action >= 0:
            return action
    return strategic_policy(view, legal, nlegal, rng, params, table)
