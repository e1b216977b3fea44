"""What ``ace`` believes the other seats hold, from everything its seat has seen this round.

A seat's view (:mod:`arena.engine.view`) says which copies of each card the seat has not seen
(``V_UNSEEN``) and the cards it knows others hold (``V_KNOWN``); it keeps no history. The events
the seat saw tell more. For each other seat ``s`` the belief keeps a *likelihood* ``L[s, v]`` of
the card ``v`` it holds now, and the chance that it holds ``v`` is proportional to
``U[v] * L[s, v]`` with ``U`` the unseen counts (:func:`hand_weights`): the counts carry what is
known of the whole deal, the likelihood what the events say of this one card.

:func:`belief_from_events` reads the events in order:

- a Guard that missed (``GUARD_MISS``): the target does not hold the guess, ``L[t, g] = 0``;
- a Priest look, a Baron comparison this seat took part in, a King swap with it: the card is
  known, ``L`` is 1 for it and 0 for the others;
- a Baron between two others that knocked one out: the winner holds a higher card than the one
  the loser showed;
- a Prince's discard and redraw, or a King swap between two others: the redrawn card is new
  (``L = 1``), the swapped hands swap their likelihoods;
- a card ``c`` another seat played: it held an old card and drew a new one (uniformly from the
  cards this seat has not seen) and kept the other. With ``model[c, k]`` the chance that a player
  holding ``c`` and ``k`` plays ``c`` (:mod:`bots.ace_model`), the kept card's likelihood becomes
  ``model[c, k] * (L[k] + L[c])``: the two orders (kept the old card ``k`` and played the new
  ``c``, or the reverse) weigh ``U[k] L[k] (U[c] - [k = c])`` and ``U[c] L[c] (U[k] - [k = c])``,
  which over the new unseen counts leave that, up to a factor the same for every ``k``.

The engine's rules come in only through the engine: which cards a hand may play is
:func:`arena.engine.rules.legal_from`'s answer (in :mod:`bots.ace_model`), and the events are
the engine's own. :func:`sample_hands` deals a determinization (:func:`bots.determinize.
determinize`) whose unknown hands follow the belief, the rest of the unseen cards shuffled into
the set-aside card and the draw pile.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    EV_BARON_SHOW,
    EV_DEALT,
    EV_DISCARD,
    EV_DRAW,
    EV_GUARD_MISS,
    EV_KNOCKOUT,
    EV_PLAY,
    EV_PRIEST_SEE,
    EV_RECEIVE,
    EV_REDRAW,
    EV_SWAP,
    MAX_PLAYERS,
    PRINCESS,
    S_HAND,
    V_ALIVE,
    V_KNOWN,
    V_NPLAYERS,
    V_SEAT,
    V_UNSEEN,
)
from arena.engine.rng import rand_unit, shuffle
from bots.determinize import determinize, hidden_slots

__all__ = ["belief_from_events", "hand_weights", "sample_hands"]

#: Deals :func:`sample_hands` tries before it gives up the belief of a seat whose cards the
#: seats dealt before it took (with three or four players, seats are dealt one after another).
SAMPLE_ATTEMPTS = 20
#: Columns of an event row (as :mod:`arena.engine.layout` orders them).
_KIND, _SEAT, _TARGET, _CARD, _VALUE = 0, 1, 2, 3, 4


@njit(cache=True)
def _know(likelihood: np.ndarray, seat: int, card: int) -> None:
    """``seat`` holds ``card``, for certain."""
    for v in range(1, PRINCESS + 1):
        likelihood[seat, v] = 1.0 if v == card else 0.0


@njit(cache=True)
def _forget(likelihood: np.ndarray, seat: int) -> None:
    """``seat`` holds a card nothing is known of (a fresh draw)."""
    for v in range(1, PRINCESS + 1):
        likelihood[seat, v] = 1.0


@njit(cache=True)
def _played(likelihood: np.ndarray, seat: int, card: int, model: np.ndarray) -> None:
    """``seat`` drew a card and played ``card``: its kept card's likelihood (module docs)."""
    before = likelihood[seat, card]
    top = 0.0
    for v in range(1, PRINCESS + 1):
        likelihood[seat, v] = model[card, v] * (likelihood[seat, v] + before)
        top = max(top, likelihood[seat, v])
    if top > 0.0:
        for v in range(1, PRINCESS + 1):
            likelihood[seat, v] /= top
    else:  # nothing the model allows: the play says nothing
        _forget(likelihood, seat)


@njit(cache=True)
def belief_from_events(
    events: np.ndarray, count: int, me: int, model: np.ndarray, likelihood: np.ndarray
) -> None:
    """Fill ``likelihood`` (``MAX_PLAYERS x 9``) with each seat's card likelihood after the first
    ``count`` rows of ``events`` (the engine's event rows that seat ``me`` saw, in order; see the
    module docs). ``model`` is a ``9 x 9`` table of the chance of playing a card from a hand
    (:mod:`bots.ace_model`); a table of ones keeps only what the rules and the events rule out.
    Seat ``me``'s own row is left at ones."""
    for s in range(MAX_PLAYERS):
        likelihood[s, 0] = 0.0
        _forget(likelihood, s)
    mine = 0  # the card this seat holds between its turns
    drawn = 0  # the card it drew on its turn, until it plays
    last_play = -1  # the row of the latest play
    for i in range(count):
        kind = events[i, _KIND]
        seat = events[i, _SEAT]
        target = events[i, _TARGET]
        card = events[i, _CARD]
        value = events[i, _VALUE]
        if kind == EV_DEALT or kind == EV_DRAW:
            if seat == me:
                if mine == 0:
                    mine = card
                else:
                    drawn = card
        elif kind == EV_PLAY:
            last_play = i
            if seat == me:
                if card == drawn:
                    drawn = 0
                elif card == mine:  # it played the card it held, and keeps the one it drew
                    mine = drawn
                    drawn = 0
            else:
                _played(likelihood, seat, card, model)
        elif kind == EV_GUARD_MISS:
            if target != me:
                likelihood[target, value] = 0.0
        elif kind == EV_PRIEST_SEE:
            if seat == me:
                _know(likelihood, target, card)
        elif kind == EV_BARON_SHOW:
            if seat == me:
                _know(likelihood, target, value)
            elif target == me:
                _know(likelihood, seat, card)
        elif kind == EV_KNOCKOUT:
            # a Baron between two other seats: the one still in holds a higher card
            if last_play >= 0 and events[last_play, _CARD] == BARON:
                a = events[last_play, _SEAT]
                t = events[last_play, _TARGET]
                winner = t if seat == a else a
                if winner != me and seat != me and t >= 0:
                    for v in range(1, card + 1):
                        likelihood[winner, v] = 0.0
        elif kind == EV_DISCARD:
            if seat == me:
                mine = 0
        elif kind == EV_REDRAW:
            if seat != me:
                _forget(likelihood, seat)
        elif kind == EV_SWAP:
            if seat == me or target == me:
                other = target if seat == me else seat
                if mine != 0:
                    _know(likelihood, other, mine)  # it now holds the card this seat held
            else:
                for v in range(1, PRINCESS + 1):
                    swap = likelihood[seat, v]
                    likelihood[seat, v] = likelihood[target, v]
                    likelihood[target, v] = swap
        elif kind == EV_RECEIVE and seat == me:
            mine = card
    _forget(likelihood, me)


@njit(cache=True)
def hand_weights(
    view: np.ndarray, likelihood: np.ndarray, seat: int, pool: np.ndarray, out: np.ndarray
) -> float:
    """Write into ``out[1..8]`` the weight of each card for ``seat``'s hand, ``pool[v] *
    likelihood[seat, v]`` (``pool``: the unseen copies not yet dealt elsewhere), and return their
    sum (0 where the likelihood rules out every copy left)."""
    total = 0.0
    for v in range(1, PRINCESS + 1):
        out[v] = pool[v] * likelihood[seat, v]
        total += out[v]
    return total


@njit(cache=True)
def _by_support(view: np.ndarray, likelihood: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The other seats whose card ``view`` does not know, those with the fewest cards they may
    hold first (-1 past the last): dealt in this order, a seat that may hold only a few cards
    gets one of them before the others take them."""
    me = view[V_SEAT]
    order = np.full(MAX_PLAYERS, -1, dtype=np.int64)
    support = np.zeros(MAX_PLAYERS, dtype=np.int64)
    k = 0
    for s in range(view[V_NPLAYERS]):
        if s == me or view[V_ALIVE + s] == 0 or view[V_KNOWN + s] != 0:
            continue
        for v in range(1, PRINCESS + 1):
            if pool[v] > 0 and likelihood[s, v] > 0.0:
                support[s] += 1
        i = k
        while i > 0 and support[order[i - 1]] > support[s]:
            order[i] = order[i - 1]
            i -= 1
        order[i] = s
        k += 1
    return order


@njit(cache=True)
def _pool_weights(pool: np.ndarray, out: np.ndarray) -> float:
    """Write the pool's counts into ``out[1..8]`` as weights; their sum."""
    total = 0.0
    for v in range(1, PRINCESS + 1):
        out[v] = pool[v]
        total += out[v]
    return total


@njit(cache=True)
def sample_hands(
    view: np.ndarray,
    likelihood: np.ndarray,
    rng: np.ndarray,
    state: np.ndarray,
    slots: np.ndarray,
    cards: np.ndarray,
    pool: np.ndarray,
    weights: np.ndarray,
) -> None:
    """Fill ``state`` with a determinization of ``view`` (:func:`bots.determinize.determinize`)
    in which each other seat whose card ``view`` does not know holds a card drawn from its
    belief (:func:`hand_weights`, over the copies not yet given to an earlier seat, the seats
    with the fewest cards they may hold first; where those took every card a later seat may
    hold, the deal starts again, :data:`SAMPLE_ATTEMPTS` times
    at most, the last time with the pool's counts alone for that seat), and the copies left are
    shuffled into the set-aside card and the draw pile. It is for the seat to
    move (``view``'s own seat, the only one ``ace`` decides for): every other seat holds one
    card. ``slots``, ``cards`` (16 each), ``pool`` and ``weights`` (9) are scratch space."""
    determinize(view, rng, state)
    nslots = hidden_slots(view, slots)
    for attempt in range(SAMPLE_ATTEMPTS):
        pool[0] = 0
        for v in range(1, PRINCESS + 1):
            pool[v] = view[V_UNSEEN + v]
        dealt = True
        for s in _by_support(view, likelihood, pool):
            if s < 0:
                break
            total = hand_weights(view, likelihood, s, pool, weights)
            if total <= 0.0:
                if attempt < SAMPLE_ATTEMPTS - 1:
                    dealt = False  # the seats before took what this one may hold: again
                    break
                total = _pool_weights(pool, weights)
            pick = rand_unit(rng) * total
            card = 0
            for v in range(1, PRINCESS + 1):
                if weights[v] > 0.0:
                    card = v  # the last card with weight, should rounding leave pick above 0
                    pick -= weights[v]
                    if pick < 0.0:
                        break
            state[S_HAND + 2 * s] = card
            pool[card] -= 1
        if dealt:
            break
    # the copies left, shuffled, into the other hidden slots (set-aside card, draw pile)
    n = 0
    for v in range(1, PRINCESS + 1):
        for _ in range(pool[v]):
            cards[n] = v
            n += 1
    shuffle(rng, cards, 0, n)
    k = 0
    for i in range(nslots):
        where = slots[i]
        if S_HAND <= where < S_HAND + 2 * MAX_PLAYERS:
            continue
        state[where] = cards[k]
        k += 1
