"""The encodings every learning environment of :mod:`arena.rl` shares: an action as one index of a
fixed ``Discrete`` space, and a seat's knowledge as one vector of floats, made from the engine's
per-seat view (:func:`arena.engine.view.seat_view`) and nothing else.

Seats are *relative*: offset 0 is the encoded seat itself, offset ``k`` the seat ``k`` places
after it in turn order. One policy can so play any seat.

Actions (:data:`N_ACTIONS` = 41 indices; :data:`ACTIONS` lists each as card, target offset, guess)::

    0        Guard, without effect (every other player protected)
    1-21     Guard at offset 1-3, naming Priest..Princess: 1 + 7 * (offset - 1) + (guess - 2)
    22       Priest, without effect          23-25  Priest at offset 1-3
    26       Baron, without effect           27-29  Baron at offset 1-3
    30       Handmaid
    31-34    Prince at offset 0-3 (0: itself)
    35       King, without effect            36-38  King at offset 1-3
    39       Countess
    40       Princess

Which of them are legal is the engine's answer (:func:`arena.engine.rules.legal_actions`), given
as a mask; an offset past the player count is never legal.

The observation (:data:`OBSERVATION_SIZE` = 184 floats in [0, 1], fields in
:data:`OBSERVATION_FIELDS`, documented in docs/rl.md) holds every field of the view: player
count, variant, whose turn, the seat's hand, per relative seat whether it is at the table, in the
round, protected, its discard total, the card this seat knows it holds and the card of this seat
it knows, its discards and its last discard; the face-up cards, the unseen copies, the draw
pile's size, whether the set-aside card was drawn, and the end with its winners.

Everything here needs only NumPy and numba (the arena's own dependencies): a trained policy plays
as a bot with it and nothing of the ``[rl]`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    CARD_COUNT_VALUES,
    GUARD,
    KING,
    MAX_PLAYERS,
    N_CARDS,
    PRIEST,
    PRINCE,
    PRINCESS,
    S_END,
    S_NPLAYERS,
    S_TURN,
    V_ALIVE,
    V_ASIDE_TAKEN,
    V_DECK_SIZE,
    V_DTOTAL,
    V_END,
    V_FACEUP,
    V_HAND,
    V_KNOWN,
    V_KNOWN_BY,
    V_NFACEUP,
    V_NPILE,
    V_NPLAYERS,
    V_PILE,
    V_PROT,
    V_SEAT,
    V_TURN,
    V_UNSEEN,
    V_VARIANT,
    V_WINNERS,
    VIEW_SIZE,
)
from arena.engine.rules import action_card, action_guess, action_target, legal_actions, pack_action
from arena.errors import InvalidActionError
from arena.game.actions import Action
from arena.game.observation import Observation


def _action_rows() -> list[tuple[int, int, int]]:
    """The action space in index order: (card, target offset or -1, guess or 0)."""
    rows: list[tuple[int, int, int]] = []
    for card in range(GUARD, PRINCESS + 1):
        if card == GUARD:
            rows.append((card, -1, 0))
            rows += [(card, k, g) for k in range(1, MAX_PLAYERS) for g in range(PRIEST, 9)]
        elif card in (PRIEST, BARON, KING):
            rows.append((card, -1, 0))
            rows += [(card, k, 0) for k in range(1, MAX_PLAYERS)]
        elif card == PRINCE:
            rows += [(card, k, 0) for k in range(MAX_PLAYERS)]
        else:  # Handmaid, Countess, Princess: no target
            rows.append((card, -1, 0))
    return rows


#: Each action index as (card, target offset or -1, guess or 0).
ACTIONS = np.array(_action_rows(), dtype=np.int32)
#: Size of the ``Discrete`` action space.
N_ACTIONS = len(ACTIONS)
#: ``ACTION_INDEX[card, offset + 1, guess]``: the index of an action, -1 where there is none.
ACTION_INDEX = np.full((PRINCESS + 1, MAX_PLAYERS + 1, PRINCESS + 1), -1, dtype=np.int32)
for _i, (_card, _offset, _guess) in enumerate(ACTIONS.tolist()):
    ACTION_INDEX[_card, _offset + 1, _guess] = _i

# --- the observation vector's layout ------------------------------------------------------------
#: Per relative seat: (field, size), in order.
SEAT_FIELDS: tuple[tuple[str, int], ...] = (
    ("seated", 1),
    ("alive", 1),
    ("protected", 1),
    ("discard_total", 1),
    ("known", 8),
    ("known_by", 8),
    ("discards", 8),
    ("last_discard", 8),
)
SEAT_BLOCK = sum(size for _, size in SEAT_FIELDS)
SB_SEATED = 0
SB_ALIVE = 1
SB_PROTECTED = 2
SB_DISCARD_TOTAL = 3
SB_KNOWN = 4
SB_KNOWN_BY = 12
SB_DISCARDS = 20
SB_LAST_DISCARD = 28

O_PLAYERS = 0  # 3: one-hot of 2, 3, 4 players
O_VARIANT = 3  # 2: one-hot of the variant's engine code
O_TO_MOVE = 5  # 4: one-hot of the offset of the seat to move (zeros once the round is over)
O_HAND = 9  # 8: copies of each value in this seat's hand, halved
O_SEATS = 17  # 4 blocks of SEAT_BLOCK, offsets 0..3
O_FACE_UP = O_SEATS + MAX_PLAYERS * SEAT_BLOCK  # 8: face-up copies of each value / its copies
O_UNSEEN = O_FACE_UP + 8  # 8: unseen copies of each value / its copies
O_DECK_SIZE = O_UNSEEN + 8  # 1: cards in the draw pile / 16
O_SET_ASIDE_TAKEN = O_DECK_SIZE + 1  # 1
O_ENDED = O_SET_ASIDE_TAKEN + 1  # 1
O_WINNERS = O_ENDED + 1  # 4: one-hot offsets of the winning seats once over
OBSERVATION_SIZE = O_WINNERS + MAX_PLAYERS

#: The observation's fields in order, as (name, size); per-seat fields are ``seat+K.FIELD``.
OBSERVATION_FIELDS: tuple[tuple[str, int], ...] = (
    ("players", 3),
    ("variant", 2),
    ("to_move", 4),
    ("hand", 8),
    *((f"seat+{k}.{name}", size) for k in range(MAX_PLAYERS) for name, size in SEAT_FIELDS),
    ("face_up", 8),
    ("unseen", 8),
    ("deck_size", 1),
    ("set_aside_taken", 1),
    ("ended", 1),
    ("winners", 4),
)

#: The largest discard total a seat can reach: every card's value.
MAX_DISCARD_TOTAL = sum(v * n for v, n in enumerate(CARD_COUNT_VALUES))
#: ``1 / copies`` of each value (index 0 unused): scales counts of a value into [0, 1].
_PER_COPY = np.array([0.0] + [1.0 / n for n in CARD_COUNT_VALUES[1:]], dtype=np.float32)


# --- kernels ------------------------------------------------------------------------------------


@njit(cache=True)
def _action_index(packed: int, seat: int, nplayers: int) -> int:
    """The index of the engine's packed action for ``seat`` (-1 if it has none)."""
    target = action_target(packed)
    offset = -1 if target < 0 else (target - seat + nplayers) % nplayers
    return ACTION_INDEX[action_card(packed), offset + 1, action_guess(packed)]


@njit(cache=True)
def _packed_action(index: int, seat: int, nplayers: int) -> int:
    """The engine's packed action of index ``index`` for ``seat``; -1 when its target offset is
    past the player count."""
    offset = ACTIONS[index, 1]
    if offset >= nplayers:
        return -1
    target = -1 if offset < 0 else (seat + offset) % nplayers
    return pack_action(ACTIONS[index, 0], target, ACTIONS[index, 2])


@njit(cache=True)
def _legal_mask(state: np.ndarray, seat: int, acts: np.ndarray, mask: np.ndarray) -> int:
    """Set ``mask`` to the engine's legal actions of ``seat`` (all zero unless it is to move);
    return how many there are."""
    mask[:] = 0
    if state[S_END] != 0 or state[S_TURN] != seat:
        return 0
    k = legal_actions(state, acts)
    n = state[S_NPLAYERS]
    for i in range(k):
        mask[_action_index(acts[i], seat, n)] = 1
    return k


@njit(cache=True)
def _encode_view(view: np.ndarray, out: np.ndarray) -> None:
    """Write the observation vector of ``view`` into ``out`` (see the module's docstring)."""
    out[:] = 0.0
    n = view[V_NPLAYERS]
    me = view[V_SEAT]
    out[O_PLAYERS + n - 2] = 1.0
    out[O_VARIANT + view[V_VARIANT]] = 1.0
    if view[V_END] == 0:
        out[O_TO_MOVE + (view[V_TURN] - me + n) % n] = 1.0
    for slot in range(2):
        c = view[V_HAND + slot]
        if c != 0:
            out[O_HAND + c - 1] += 0.5
    for k in range(n):
        s = (me + k) % n
        b = O_SEATS + k * SEAT_BLOCK
        out[b + SB_SEATED] = 1.0
        out[b + SB_ALIVE] = 1.0 if view[V_ALIVE + s] != 0 else 0.0
        out[b + SB_PROTECTED] = 1.0 if view[V_PROT + s] != 0 else 0.0
        out[b + SB_DISCARD_TOTAL] = view[V_DTOTAL + s] / MAX_DISCARD_TOTAL
        c = view[V_KNOWN + s]
        if c != 0:
            out[b + SB_KNOWN + c - 1] = 1.0
        c = view[V_KNOWN_BY + s]
        if c != 0:
            out[b + SB_KNOWN_BY + c - 1] = 1.0
    last = np.zeros(MAX_PLAYERS, dtype=np.int32)
    for i in range(view[V_NPILE]):
        p = view[V_PILE + i]
        c = p & 15
        k = ((p >> 4) - me + n) % n
        out[O_SEATS + k * SEAT_BLOCK + SB_DISCARDS + c - 1] += _PER_COPY[c]
        last[k] = c
    for k in range(n):
        if last[k] != 0:
            out[O_SEATS + k * SEAT_BLOCK + SB_LAST_DISCARD + last[k] - 1] = 1.0
    for i in range(view[V_NFACEUP]):
        c = view[V_FACEUP + i]
        out[O_FACE_UP + c - 1] += _PER_COPY[c]
    for v in range(1, 9):
        out[O_UNSEEN + v - 1] = view[V_UNSEEN + v] * _PER_COPY[v]
    out[O_DECK_SIZE] = view[V_DECK_SIZE] / N_CARDS
    out[O_SET_ASIDE_TAKEN] = 1.0 if view[V_ASIDE_TAKEN] != 0 else 0.0
    if view[V_END] != 0:
        out[O_ENDED] = 1.0
        w = view[V_WINNERS]
        for s in range(n):
            if (w >> s) & 1:
                out[O_WINNERS + (s - me + n) % n] = 1.0


# --- the Python face ----------------------------------------------------------------------------


def action_index(action: Action, seat: int, players: int) -> int:
    """The index of ``action`` played by ``seat`` at a table of ``players``."""
    return int(_action_index(action.to_int(), seat, players))


def index_action(index: int, seat: int, players: int) -> Action:
    """The action of index ``index`` for ``seat`` at a table of ``players``;
    :class:`~arena.errors.InvalidActionError` for an index that names no action there."""
    if not 0 <= index < N_ACTIONS:
        raise InvalidActionError(f"action index {index} is not in 0..{N_ACTIONS - 1}")
    packed = int(_packed_action(index, seat, players))
    if packed < 0:
        raise InvalidActionError(
            f"action index {index} targets a seat past the {players} at the table"
        )
    return Action.from_int(packed)


def encode_view(view: np.ndarray) -> np.ndarray:
    """The observation vector (float32, :data:`OBSERVATION_SIZE`) of an engine view array."""
    out = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    _encode_view(np.ascontiguousarray(view, dtype=np.int32), out)
    return out


def encode_observation(observation: Observation) -> np.ndarray:
    """The observation vector of a referee's :class:`~arena.game.Observation` (what a bot is
    given): the same as the environments give for that seat at that moment."""
    return encode_view(observation.to_view())


def legal_mask(
    legal: Sequence[Action], seat: int, players: int, out: np.ndarray | None = None
) -> np.ndarray:
    """The action mask (int8, :data:`N_ACTIONS`) of the legal actions ``legal`` of ``seat``."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8) if out is None else out
    mask[:] = 0
    for action in legal:
        mask[action_index(action, seat, players)] = 1
    return mask


def field_slice(name: str) -> slice:
    """Where the field ``name`` of :data:`OBSERVATION_FIELDS` lies in the observation vector."""
    start = 0
    for field, size in OBSERVATION_FIELDS:
        if field == name:
            return slice(start, start + size)
        start += size
    raise KeyError(f"no observation field {name!r}")


__all__ = [
    "ACTIONS",
    "N_ACTIONS",
    "OBSERVATION_FIELDS",
    "OBSERVATION_SIZE",
    "VIEW_SIZE",
    "action_index",
    "encode_observation",
    "encode_view",
    "field_slice",
    "index_action",
    "legal_mask",
]
