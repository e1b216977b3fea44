"""Small numba helpers that read a seat's view array (:mod:`arena.engine.view`) for the policies."""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    CARD_COUNTS,
    GUARD,
    PRINCESS,
    V_ALIVE,
    V_HAND,
    V_NPLAYERS,
    V_PROT,
    V_SEAT,
    V_UNSEEN,
)
from arena.engine.rng import rand_below
from arena.engine.rules import action_card, action_guess, action_target


@njit(cache=True)
def targetable(view: np.ndarray, seat: int) -> bool:
    """Whether another seat ``seat`` can be targeted (in the round, not protected)."""
    return view[V_ALIVE + seat] != 0 and view[V_PROT + seat] == 0 and seat != view[V_SEAT]


@njit(cache=True)
def other_card(view: np.ndarray, card: int) -> int:
    """The card in hand besides one copy of ``card`` (0 if the hand holds one card)."""
    if view[V_HAND] == card:
        return view[V_HAND + 1]
    return view[V_HAND]


@njit(cache=True)
def find_action(legal: np.ndarray, nlegal: int, card: int, target: int, guess: int) -> int:
    """The legal action playing ``card`` at ``target`` naming ``guess`` (-2: any target, 0: any
    guess), or -1 if there is none."""
    for i in range(nlegal):
        a = legal[i]
        if action_card(a) != card:
            continue
        if target != -2 and action_target(a) != target:
            continue
        if guess != 0 and action_guess(a) != guess:
            continue
        return a
    return -1


@njit(cache=True)
def most_unseen_guess(view: np.ndarray) -> int:
    """The non-Guard card with the most unseen copies, ties to the lowest value."""
    best = 2
    for v in range(3, PRINCESS + 1):
        if view[V_UNSEEN + v] > view[V_UNSEEN + best]:
            best = v
    return best


@njit(cache=True)
def random_opponent(view: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly chosen other seat that can be targeted, or -1 if none can."""
    if view[V_NPLAYERS] == 2:  # no choice to draw
        other = 1 - view[V_SEAT]
        return other if targetable(view, other) else -1
    n = 0
    for s in range(view[V_NPLAYERS]):
        if targetable(view, s):
            n += 1
    if n == 0:
        return -1
    pick = rand_below(rng, n)
    for s in range(view[V_NPLAYERS]):
        if targetable(view, s):
            if pick == 0:
                return s
            pick -= 1
    return -1


@njit(cache=True)
def plain_play(legal: np.ndarray, nlegal: int, card: int) -> int:
    """The legal action of ``card`` without a target or guess choice to make (the first one)."""
    return find_action(legal, nlegal, card, -2, 0)


# --- helpers of the rule-based policies (strategic, knowledge) ----------------------------------

from arena.engine.layout import BARON, KING, PRIEST, PRINCE, V_KNOWN  # noqa: E402


@njit(cache=True)
def first_target(view: np.ndarray) -> int:
    """The other seat a rule-based policy aims an ordinary play at, or -1 if none can be targeted.

    Seats are taken in turn order from the one after this seat; the first targetable seat whose
    card this seat does not know is chosen, else the first targetable seat.
    """
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    fallback = -1
    for i in range(1, n):
        s = (me + i) % n
        if targetable(view, s):
            if view[V_KNOWN + s] == 0:
                return s
            if fallback < 0:
                fallback = s
    return fallback


@njit(cache=True)
def sure_knockout(view: np.ndarray, legal: np.ndarray, nlegal: int) -> int:
    """A legal action that knocks another seat out for certain from a card this seat knows it
    holds (``V_KNOWN``), or -1 if there is none.

    Tried in this order, each over the targetable seats in turn order from the next seat: a Guard
    naming a known card that is not a Guard; a Baron at a seat whose known card is lower than this
    seat's other card; a Prince at a seat known to hold the Princess.
    """
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    if c0 == GUARD or c1 == GUARD:
        for i in range(1, n):
            s = (me + i) % n
            k = view[V_KNOWN + s]
            if k > GUARD and targetable(view, s):
                a = find_action(legal, nlegal, GUARD, s, k)
                if a >= 0:
                    return a
    if c0 == BARON or c1 == BARON:
        mine = other_card(view, BARON)
        for i in range(1, n):
            s = (me + i) % n
            k = view[V_KNOWN + s]
            if k != 0 and k < mine and targetable(view, s):
                a = find_action(legal, nlegal, BARON, s, 0)
                if a >= 0:
                    return a
    if c0 == PRINCE or c1 == PRINCE:
        for i in range(1, n):
            s = (me + i) % n
            if view[V_KNOWN + s] == PRINCESS and targetable(view, s):
                a = find_action(legal, nlegal, PRINCE, s, 0)
                if a >= 0:
                    return a
    return -1


@njit(cache=True)
def play_card(view: np.ndarray, legal: np.ndarray, nlegal: int, card: int, guess: int) -> int:
    """The legal action playing ``card`` the way the rule-based policies do.

    A Guard, Priest, Baron or King goes to :func:`first_target` (without a target when none can be
    targeted); a Guard names the card known to be in the target's hand if that is not a Guard,
    else ``guess``. A Prince goes to :func:`first_target`, or to this seat when no other can be
    targeted. Any other card has a single way to be played.
    """
    if card == GUARD or card == PRIEST or card == BARON or card == KING:
        t = first_target(view)
        if card == GUARD and t >= 0:
            k = view[V_KNOWN + t]
            return find_action(legal, nlegal, GUARD, t, k if k > GUARD else guess)
        return find_action(legal, nlegal, card, t, 0)
    if card == PRINCE:
        t = first_target(view)
        if t < 0:
            t = view[V_SEAT]
        return find_action(legal, nlegal, PRINCE, t, 0)
    return find_action(legal, nlegal, card, -2, 0)


# --- helpers of the risk-matrix policy (riskmatrix) ---------------------------------------------

from arena.engine.layout import V_NPILE, V_PILE  # noqa: E402


@njit(cache=True)
def seat_discard_count(view: np.ndarray, seat: int) -> int:
    """How many cards of the public discard pile ``seat`` put there (played, discarded to a
    Prince, or shown when knocked out)."""
    count = 0
    for i in range(view[V_NPILE]):
        if view[V_PILE + i] >> 4 == seat:
            count += 1
    return count


@njit(cache=True)
def random_unseen_card(view: np.ndarray, rng: np.ndarray, lowest: int) -> int:
    """A card value drawn from the copies this seat has not seen (``V_UNSEEN``), every copy of
    value ``lowest`` or more equally likely; 0 if there is no such copy."""
    total = 0
    for v in range(lowest, PRINCESS + 1):
        total += view[V_UNSEEN + v]
    if total <= 0:
        return 0
    pick = rand_below(rng, total)
    for v in range(lowest, PRINCESS + 1):
        pick -= view[V_UNSEEN + v]
        if pick < 0:
            return v
    return 0


@njit(cache=True)
def count_unaccounted(
    cards: np.ndarray, pile: int, npile: int, faceup: int, nfaceup: int, hand: int, left: np.ndarray
) -> None:
    """Fill ``left[v]`` with the copies of each value ``v`` that a seat cannot account for: not
    in the discard pile ``cards[pile:pile + npile]`` (entries ``seat * 16 + card``), face up
    (``cards[faceup:faceup + nfaceup]``) or in its hand (the two slots at ``cards[hand]``). The
    same arithmetic reads an engine state and a seat's view; ``left`` has 9 entries."""
    for v in range(PRINCESS + 1):
        left[v] = CARD_COUNTS[v]
    for i in range(npile):
        left[cards[pile + i] & 15] -= 1
    for i in range(nfaceup):
        left[cards[faceup + i]] -= 1
    for slot in range(2):
        left[cards[hand + slot]] -= 1
    left[0] = 0
