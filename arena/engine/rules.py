"""The rules of Love Letter: the one implementation, as numba kernels over the flat state array.

Kernels take and return arrays and numbers only; they trust their input (the typed face in
:mod:`arena.game` checks it). Every kernel that changes the state also writes the events it causes
into ``ev`` (rows of :data:`~arena.engine.layout.EVENT_WIDTH` ints) and returns how many it wrote.
Rows past ``ev``'s capacity are dropped but still counted, so a caller that needs the log passes a
buffer of :data:`EVENTS_PER_CALL` rows and one that does not (a rollout) passes an empty one.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    CARD_COUNTS,
    COUNTESS,
    END_DECK_EMPTY,
    END_LAST_STANDING,
    END_NONE,
    EV_BARON_SHOW,
    EV_BARON_TIE,
    EV_DEALT,
    EV_DISCARD,
    EV_DRAW,
    EV_FACE_UP,
    EV_FORFEIT,
    EV_GUARD_MISS,
    EV_KNOCKOUT,
    EV_NO_EFFECT,
    EV_PLAY,
    EV_PRIEST_SEE,
    EV_PROTECTED,
    EV_RECEIVE,
    EV_REDRAW,
    EV_ROUND_END,
    EV_SHOWDOWN,
    EV_SWAP,
    EV_TURN,
    FACE_UP_2P,
    GUARD,
    HANDMAID,
    KING,
    N_CARDS,
    NO_TARGET,
    PRIEST,
    PRINCE,
    PRINCESS,
    S_ALIVE,
    S_ASIDE_TAKEN,
    S_AWARE,
    S_DECK,
    S_DTOTAL,
    S_END,
    S_HAND,
    S_KNOW,
    S_NFACEUP,
    S_NMOVES,
    S_NPILE,
    S_NPLAYERS,
    S_PILE,
    S_PROT,
    S_TOP,
    S_TURN,
    S_VARIANT,
    S_WINNERS,
    STATE_SIZE,
    VIS_ALL,
)

#: Enough event rows for any single kernel call (a round's start or one action).
EVENTS_PER_CALL = 32


# --- actions --------------------------------------------------------------------------------------


@njit(cache=True)
def pack_action(card: int, target: int, guess: int) -> int:
    """Pack a card, a target seat (-1: none) and a guess (0: none) into one action int."""
    return card | ((target + 1) << 4) | (guess << 8)


@njit(cache=True)
def action_card(action: int) -> int:
    """The card an action plays."""
    return action & 15


@njit(cache=True)
def action_target(action: int) -> int:
    """The seat an action targets, or -1."""
    return ((action >> 4) & 7) - 1


@njit(cache=True)
def action_guess(action: int) -> int:
    """The card an action's Guard names, or 0."""
    return (action >> 8) & 15


@njit(cache=True)
def legal_from(
    arr: np.ndarray,
    seat: int,
    nplayers: int,
    c0: int,
    c1: int,
    alive_at: int,
    prot_at: int,
    out: np.ndarray,
) -> int:
    """Write the legal actions of ``seat`` holding ``c0`` and ``c1`` into ``out``; return the count.

    ``arr[alive_at + s]`` and ``arr[prot_at + s]`` say whether seat ``s`` is in the round and
    protected, so the same kernel serves the full state and a seat's view. Actions come in a fixed
    order: lower card first, then targets by seat, then guesses from Priest to Princess.
    """
    if (c0 == COUNTESS and (c1 == PRINCE or c1 == KING)) or (
        c1 == COUNTESS and (c0 == PRINCE or c0 == KING)
    ):
        out[0] = pack_action(COUNTESS, NO_TARGET, 0)
        return 1
    lo = min(c0, c1)
    hi = max(c0, c1)
    k = 0
    for which in range(2):
        card = lo if which == 0 else hi
        if which == 1 and hi == lo:
            break
        if card == GUARD or card == PRIEST or card == BARON or card == KING:
            found = False
            for t in range(nplayers):
                if t != seat and arr[alive_at + t] != 0 and arr[prot_at + t] == 0:
                    found = True
                    if card == GUARD:
                        for g in range(PRIEST, PRINCESS + 1):
                            out[k] = pack_action(card, t, g)
                            k += 1
                    else:
                        out[k] = pack_action(card, t, 0)
                        k += 1
            if not found:
                out[k] = pack_action(card, NO_TARGET, 0)
                k += 1
        elif card == PRINCE:
            for t in range(nplayers):
                if t == seat or (arr[alive_at + t] != 0 and arr[prot_at + t] == 0):
                    out[k] = pack_action(card, t, 0)
                    k += 1
        else:
            out[k] = pack_action(card, NO_TARGET, 0)
            k += 1
    return k


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal actions of the seat to move into ``out``; return the count (0 once ended)."""
    if state[S_END] != END_NONE:
        return 0
    seat = state[S_TURN]
    h = S_HAND + 2 * seat
    return legal_from(state, seat, state[S_NPLAYERS], state[h], state[h + 1], S_ALIVE, S_PROT, out)


@njit(cache=True)
def is_legal(state: np.ndarray, action: int) -> bool:
    """Whether ``action`` is legal for the seat to move."""
    out = np.empty(64, dtype=np.int32)
    k = legal_actions(state, out)
    for i in range(k):
        if out[i] == action:
            return True
    return False


# --- events ---------------------------------------------------------------------------------------


@njit(cache=True)
def _emit(
    ev: np.ndarray, n: int, kind: int, seat: int, target: int, card: int, value: int, vis: int
) -> int:
    if n < ev.shape[0]:
        ev[n, 0] = kind
        ev[n, 1] = seat
        ev[n, 2] = target
        ev[n, 3] = card
        ev[n, 4] = value
        ev[n, 5] = vis
    return n + 1


# --- internal steps -------------------------------------------------------------------------------


@njit(cache=True)
def _to_pile(state: np.ndarray, seat: int, card: int) -> None:
    state[S_PILE + state[S_NPILE]] = seat * 16 + card
    state[S_NPILE] += 1
    state[S_DTOTAL + seat] += card


@njit(cache=True)
def _forget(state: np.ndarray, seat: int) -> None:
    """Nobody knows ``seat``'s hand any more."""
    for o in range(state[S_NPLAYERS]):
        state[S_KNOW + o * 4 + seat] = 0
        state[S_AWARE + seat * 4 + o] = 0


@njit(cache=True)
def _knock_out(state: np.ndarray, seat: int, ev: np.ndarray, n: int) -> int:
    """Take ``seat`` out of the round; its hand goes face up onto the pile."""
    h = S_HAND + 2 * seat
    c0 = state[h]
    c1 = state[h + 1]
    if c0 != 0:
        _to_pile(state, seat, c0)
    if c1 != 0:
        _to_pile(state, seat, c1)
    state[h] = 0
    state[h + 1] = 0
    state[S_ALIVE + seat] = 0
    state[S_PROT + seat] = 0
    np_ = state[S_NPLAYERS]
    for o in range(np_):
        state[S_KNOW + o * 4 + seat] = 0
        state[S_KNOW + seat * 4 + o] = 0
        state[S_AWARE + o * 4 + seat] = 0
        state[S_AWARE + seat * 4 + o] = 0
    return _emit(ev, n, EV_KNOCKOUT, seat, NO_TARGET, c0, c1, VIS_ALL)


@njit(cache=True)
def _begin_turn(state: np.ndarray, seat: int, ev: np.ndarray, n: int) -> int:
    state[S_TURN] = seat
    state[S_PROT + seat] = 0
    card = state[S_DECK + state[S_TOP]]
    state[S_TOP] += 1
    state[S_HAND + 2 * seat + 1] = card
    n = _emit(ev, n, EV_TURN, seat, NO_TARGET, 0, 0, VIS_ALL)
    return _emit(ev, n, EV_DRAW, seat, NO_TARGET, card, 0, 1 << seat)


@njit(cache=True)
def _finish_turn(state: np.ndarray, ev: np.ndarray, n: int) -> int:
    """End the round if it is over, otherwise hand the turn to the next seat still in."""
    np_ = state[S_NPLAYERS]
    alive = 0
    mask = 0
    for s in range(np_):
        if state[S_ALIVE + s] != 0:
            alive += 1
            mask |= 1 << s
    if alive <= 1:
        state[S_END] = END_LAST_STANDING
        state[S_WINNERS] = mask
        return _emit(ev, n, EV_ROUND_END, NO_TARGET, NO_TARGET, END_LAST_STANDING, mask, VIS_ALL)
    if state[S_TOP] >= N_CARDS:
        best_card = 0
        best_total = -1
        for s in range(np_):
            if state[S_ALIVE + s] != 0:
                c = state[S_HAND + 2 * s]
                t = state[S_DTOTAL + s]
                n = _emit(ev, n, EV_SHOWDOWN, s, NO_TARGET, c, t, VIS_ALL)
                if c > best_card or (c == best_card and t > best_total):
                    best_card = c
                    best_total = t
        mask = 0
        for s in range(np_):
            if (
                state[S_ALIVE + s] != 0
                and state[S_HAND + 2 * s] == best_card
                and state[S_DTOTAL + s] == best_total
            ):
                mask |= 1 << s
        state[S_END] = END_DECK_EMPTY
        state[S_WINNERS] = mask
        return _emit(ev, n, EV_ROUND_END, NO_TARGET, NO_TARGET, END_DECK_EMPTY, mask, VIS_ALL)
    t = state[S_TURN]
    while True:
        t = (t + 1) % np_
        if state[S_ALIVE + t] != 0:
            break
    return _begin_turn(state, t, ev, n)


# --- public kernels -------------------------------------------------------------------------------


@njit(cache=True)
def new_round(
    state: np.ndarray, deck: np.ndarray, nplayers: int, variant: int, first: int, ev: np.ndarray
) -> int:
    """Set ``state`` to the start of a round dealt from ``deck`` (top first), ``first`` to move.

    ``deck[0]`` is set aside face down; in a two-player round of a variant that sets cards aside
    face up, the next three are; then one card per seat in seat order; the rest is the draw pile.
    """
    for i in range(STATE_SIZE):
        state[i] = 0
    state[S_NPLAYERS] = nplayers
    state[S_VARIANT] = variant
    for i in range(N_CARDS):
        state[S_DECK + i] = deck[i]
    nfaceup = FACE_UP_2P[variant] if nplayers == 2 else 0
    state[S_NFACEUP] = nfaceup
    n = 0
    for i in range(nfaceup):
        n = _emit(ev, n, EV_FACE_UP, NO_TARGET, NO_TARGET, deck[1 + i], 0, VIS_ALL)
    top = 1 + nfaceup
    for s in range(nplayers):
        state[S_HAND + 2 * s] = deck[top]
        state[S_ALIVE + s] = 1
        n = _emit(ev, n, EV_DEALT, s, NO_TARGET, deck[top], 0, 1 << s)
        top += 1
    state[S_TOP] = top
    return _begin_turn(state, first, ev, n)


@njit(cache=True)
def apply_action(state: np.ndarray, action: int, ev: np.ndarray) -> int:
    """Play ``action`` (which must be legal) for the seat to move; return the events written."""
    a = state[S_TURN]
    card = action & 15
    target = ((action >> 4) & 7) - 1
    guess = (action >> 8) & 15
    np_ = state[S_NPLAYERS]
    h = S_HAND + 2 * a
    if state[h] == card:
        state[h] = state[h + 1]
    state[h + 1] = 0
    _to_pile(state, a, card)
    state[S_NMOVES] += 1
    for o in range(np_):
        if state[S_KNOW + o * 4 + a] == card:
            state[S_KNOW + o * 4 + a] = 0
        if state[S_AWARE + a * 4 + o] == card:
            state[S_AWARE + a * 4 + o] = 0
    n = _emit(ev, 0, EV_PLAY, a, target, card, guess, VIS_ALL)
    if target == NO_TARGET and (card == GUARD or card == PRIEST or card == BARON or card == KING):
        n = _emit(ev, n, EV_NO_EFFECT, a, NO_TARGET, card, 0, VIS_ALL)
    elif card == GUARD:
        if state[S_HAND + 2 * target] == guess:
            n = _knock_out(state, target, ev, n)
        else:
            n = _emit(ev, n, EV_GUARD_MISS, a, target, card, guess, VIS_ALL)
    elif card == PRIEST:
        seen = state[S_HAND + 2 * target]
        state[S_KNOW + a * 4 + target] = seen
        state[S_AWARE + target * 4 + a] = seen
        n = _emit(ev, n, EV_PRIEST_SEE, a, target, seen, 0, 1 << a)
    elif card == BARON:
        mine = state[h]
        theirs = state[S_HAND + 2 * target]
        n = _emit(ev, n, EV_BARON_SHOW, a, target, mine, theirs, (1 << a) | (1 << target))
        if mine > theirs:
            n = _knock_out(state, target, ev, n)
        elif mine < theirs:
            n = _knock_out(state, a, ev, n)
        else:
            state[S_KNOW + a * 4 + target] = theirs
            state[S_KNOW + target * 4 + a] = mine
            state[S_AWARE + target * 4 + a] = theirs
            state[S_AWARE + a * 4 + target] = mine
            n = _emit(ev, n, EV_BARON_TIE, a, target, 0, 0, VIS_ALL)
    elif card == HANDMAID:
        state[S_PROT + a] = 1
        n = _emit(ev, n, EV_PROTECTED, a, NO_TARGET, 0, 0, VIS_ALL)
    elif card == PRINCE:
        th = S_HAND + 2 * target
        lost = state[th]
        state[th] = 0
        _to_pile(state, target, lost)
        _forget(state, target)
        n = _emit(ev, n, EV_DISCARD, target, NO_TARGET, lost, 0, VIS_ALL)
        if lost == PRINCESS:
            n = _knock_out(state, target, ev, n)
        else:
            aside = 0
            if state[S_TOP] < N_CARDS:
                fresh = state[S_DECK + state[S_TOP]]
                state[S_TOP] += 1
            else:
                fresh = state[S_DECK]
                state[S_ASIDE_TAKEN] = 1
                aside = 1
            state[th] = fresh
            n = _emit(ev, n, EV_REDRAW, target, NO_TARGET, 0, aside, VIS_ALL)
            n = _emit(ev, n, EV_DRAW, target, NO_TARGET, fresh, aside, 1 << target)
    elif card == KING:
        th = S_HAND + 2 * target
        mine = state[h]
        theirs = state[th]
        state[h] = theirs
        state[th] = mine
        for o in range(np_):
            if o != a and o != target:
                ka = state[S_KNOW + o * 4 + a]
                state[S_KNOW + o * 4 + a] = state[S_KNOW + o * 4 + target]
                state[S_KNOW + o * 4 + target] = ka
                state[S_AWARE + a * 4 + o] = 0
                state[S_AWARE + target * 4 + o] = 0
        state[S_KNOW + a * 4 + target] = mine
        state[S_KNOW + target * 4 + a] = theirs
        state[S_AWARE + target * 4 + a] = mine
        state[S_AWARE + a * 4 + target] = theirs
        n = _emit(ev, n, EV_SWAP, a, target, 0, 0, VIS_ALL)
        n = _emit(ev, n, EV_RECEIVE, a, target, theirs, 0, 1 << a)
        n = _emit(ev, n, EV_RECEIVE, target, a, mine, 0, 1 << target)
    elif card == PRINCESS:
        n = _knock_out(state, a, ev, n)
    return _finish_turn(state, ev, n)


@njit(cache=True)
def forfeit(state: np.ndarray, seat: int, ev: np.ndarray) -> int:
    """Knock ``seat`` out of the round for a fault; the round goes on without it."""
    n = _emit(ev, 0, EV_FORFEIT, seat, NO_TARGET, 0, 0, VIS_ALL)
    if state[S_END] != END_NONE or state[S_ALIVE + seat] == 0:
        return n
    n = _knock_out(state, seat, ev, n)
    np_ = state[S_NPLAYERS]
    alive = 0
    for s in range(np_):
        alive += state[S_ALIVE + s]
    if alive <= 1 or state[S_TURN] == seat:
        return _finish_turn(state, ev, n)
    return n


@njit(cache=True)
def cards_in_play(state: np.ndarray, counts: np.ndarray) -> None:
    """Count, per value, the cards in hands, the draw pile, the pile, face up and set aside."""
    for v in range(9):
        counts[v] = 0
    counts[state[S_DECK]] += 1
    for i in range(state[S_NFACEUP]):
        counts[state[S_DECK + 1 + i]] += 1
    for i in range(state[S_TOP], N_CARDS):
        counts[state[S_DECK + i]] += 1
    for i in range(state[S_NPILE]):
        counts[state[S_PILE + i] & 15] += 1
    for s in range(state[S_NPLAYERS]):
        for slot in range(2):
            counts[state[S_HAND + 2 * s + slot]] += 1
    if state[S_ASIDE_TAKEN] != 0:
        counts[state[S_DECK]] -= 1
    counts[0] = 0


@njit(cache=True)
def standard_deck(out: np.ndarray) -> None:
    """Write the 16 cards in value order into ``out``."""
    k = 0
    for v in range(1, 9):
        for _ in range(CARD_COUNTS[v]):
            out[k] = v
            k += 1
