"""Integer constants shared by every engine kernel: cards, variants, the state and view layouts,
action packing and event kinds.

The engine keeps a round in one flat ``int32`` array (the *state*) and a seat's knowledge of it in
another (the *view*). The offsets below name the slots of both; numba folds them into the compiled
kernels as constants.

The two tables (:data:`CARD_COUNTS`, :data:`FACE_UP_2P`) are numpy arrays for the kernels, made on
first use; their plain-tuple forms (:data:`CARD_COUNT_VALUES`, :data:`FACE_UP_2P_VALUES`) let the
typed face, and so a pure-Python bot's host, go without numpy.
"""

from __future__ import annotations

from typing import Any

# Cards (their values).
GUARD = 1
PRIEST = 2
BARON = 3
HANDMAID = 4
PRINCE = 5
KING = 6
COUNTESS = 7
PRINCESS = 8

N_CARDS = 16
MAX_PLAYERS = 4
#: Copies of each card value (index 0 unused); :data:`CARD_COUNTS` is the same as an array.
CARD_COUNT_VALUES = (0, 5, 2, 2, 2, 2, 1, 1, 1)

# Variants.
VARIANT_CLASSIC = 0
VARIANT_HUIBERS = 1
#: Cards set aside face up in a two-player round, per variant (:data:`FACE_UP_2P` as an array).
FACE_UP_2P_VALUES = (3, 0)

# How a round ended.
END_NONE = 0
END_LAST_STANDING = 1
END_DECK_EMPTY = 2

# --- state layout -------------------------------------------------------------------------------
S_NPLAYERS = 0
S_VARIANT = 1
S_TOP = 2  # index in the deck order of the next card to draw
S_TURN = 3  # seat to move
S_END = 4  # END_* code; END_NONE while the round runs
S_WINNERS = 5  # bit mask of winning seats once ended
S_NFACEUP = 6
S_NMOVES = 7  # actions applied so far
S_NPILE = 8  # cards in the public discard pile
S_ASIDE_TAKEN = 9  # 1 once a Prince made someone draw the set-aside card
S_DECK = 16  # 16 cards, top first: [set-aside, face-up..., one per seat, draw pile...]
S_HAND = 32  # 2 slots per seat; slot 1 holds a card only for the seat to move
S_ALIVE = 40
S_PROT = 44  # 1 while a Handmaid protects the seat
S_DTOTAL = 48  # total value of the seat's discards
S_KNOW = 52  # KNOW + i * 4 + j: value seat i knows seat j holds (0: not known)
S_PILE = 68  # public discard pile in order: seat * 16 + card
# AWARE + i * 4 + j: value of seat i's card that seat i knows seat j knows (0: none). Kept apart
# from KNOW because a seat learns that another knows its card only from a Priest look at it, a
# Baron tie or a King swap it took part in; knowledge that a King swap between two other seats
# carries over to it is the knower's alone.
S_AWARE = 84
STATE_SIZE = 100

# --- view layout (what one seat knows) ----------------------------------------------------------
V_SEAT = 0
V_NPLAYERS = 1
V_VARIANT = 2
V_TURN = 3
V_DECK_SIZE = 4  # cards left in the draw pile
V_END = 5
V_WINNERS = 6
V_NFACEUP = 7
V_NPILE = 8
V_ASIDE_TAKEN = 9
V_HAND = 10  # 2 slots
V_ALIVE = 12  # 4
V_PROT = 16  # 4
V_DTOTAL = 20  # 4
V_KNOWN = 24  # 4: value this seat knows each other seat holds (0: not known)
V_KNOWN_BY = 28  # 4: value of this seat's card that each other seat knows (0: none)
V_FACEUP = 32  # 3
V_UNSEEN = 35  # 9: per value, copies this seat has not seen (index 0 unused)
V_PILE = 44  # 16, as S_PILE
VIEW_SIZE = 60

# --- actions ------------------------------------------------------------------------------------
# An action is packed in one int: card | (target + 1) << 4 | guess << 8; target -1 means the card
# is played without a target (every other player protected), guess 0 means no guess.
NO_TARGET = -1
MAX_ACTIONS = 64

# --- events -------------------------------------------------------------------------------------
# One event is a row of EVENT_WIDTH ints: kind, seat, target, card, value, visibility bit mask.
EVENT_WIDTH = 6
E_KIND = 0
E_SEAT = 1
E_TARGET = 2
E_CARD = 3
E_VALUE = 4
E_VIS = 5
#: Visibility mask meaning every seat.
VIS_ALL = 15

EV_DEALT = 1  # seat was dealt card (private)
EV_FACE_UP = 2  # card set aside face up (public)
EV_TURN = 3  # seat begins its turn and draws (public)
EV_DRAW = 4  # seat drew card; value 1 when it is the set-aside card (private)
EV_PLAY = 5  # seat played card at target (-1: none), value = guess (public)
EV_NO_EFFECT = 6  # the played card had no effect: every other player is protected (public)
EV_GUARD_MISS = 7  # seat's guess value at target was wrong (public)
EV_PRIEST_SEE = 8  # seat saw that target holds card (private to seat)
EV_BARON_SHOW = 9  # seat holds card, target holds value (private to both)
EV_BARON_TIE = 10  # the comparison was a tie (public)
EV_PROTECTED = 11  # seat is protected until its next turn (public)
EV_DISCARD = 12  # seat discarded card because of a Prince (public)
EV_REDRAW = 13  # seat drew a replacement; value 1 when it is the set-aside card (public)
EV_SWAP = 14  # seat and target swapped hands (public)
EV_RECEIVE = 15  # seat received card in a swap with target (private to seat)
EV_KNOCKOUT = 16  # seat is out of the round, revealing card (0 if none left) (public)
EV_FORFEIT = 17  # seat forfeits the round (a fault) (public)
EV_SHOWDOWN = 18  # the deck is empty: seat shows card, value = its discard total (public)
EV_ROUND_END = 19  # round over: value = winners bit mask, card = END_* code (public)


#: Arrays made from tuples on first use (``int32``, as the kernels read them).
_ARRAYS = {"CARD_COUNTS": CARD_COUNT_VALUES, "FACE_UP_2P": FACE_UP_2P_VALUES}


def __getattr__(name: str) -> Any:
    if name in _ARRAYS:
        import numpy as np

        value = np.array(_ARRAYS[name], dtype=np.int32)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arena.engine.layout' has no attribute {name!r}")
