"""The OpenSpiel game: importing this module registers ``python_love_letter`` with pyspiel.

``pyspiel.load_game("python_love_letter")`` is a two-player ``classic`` round;
``python_love_letter(players=3)`` and ``python_love_letter(variant=huibers)`` the others. The
deal is chance: sixteen chance nodes, one per card of the deck order top first (an outcome is a
card value less one, with the chance of its copies left), then the engine deals from that order
and the seats move (actions as in :mod:`arena.rl.encoding`, legal as the engine says). The
utilities are :func:`arena.rl.round.round_rewards` (zero-sum, from -1 to 1).

What a player observes comes from the engine's per-seat view (:func:`arena.engine.view.seat_view`)
and from the moves, which are public (card, target and guess): the observation (tensor and
string) is its view now; the information state adds, for perfect recall, its view after every
earlier move and the moves themselves. docs/rl.md lays both out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.engine.layout import CARD_COUNT_VALUES, MAX_PLAYERS, N_CARDS
from arena.errors import InvalidCardError
from arena.game.cards import Card
from arena.game.observation import Observation
from arena.game.variants import Variant
from arena.rl.encoding import (
    N_ACTIONS,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    encode_view,
    index_action,
)
from arena.rl.extra import missing_extra
from arena.rl.round import EncodedRound, round_rewards
from bots.determinize import determinized

try:
    import pyspiel
except ImportError as exc:
    raise missing_extra("arena.rl's OpenSpiel game", exc) from None

#: The name the game is registered under.
GAME_NAME = "python_love_letter"
#: A chance outcome is a card value less one.
CHANCE_OUTCOMES = 8
#: The most moves a round can have: one per card of the draw pile (13 in the two-player game
#: without face-up cards); the information state keeps a slot for each.
MAX_MOVES = N_CARDS - 1 - 2
#: One move in the information state tensor: the mover's offset from the player, and its index.
MOVE_SIZE = MAX_PLAYERS + N_ACTIONS
#: The observation's fields that only the observing seat knows (the rest is public).
PRIVATE_FIELDS = frozenset(
    {"hand", "unseen"}
    | {f"seat+{k}.{name}" for k in range(MAX_PLAYERS) for name in ("known", "known_by")}
)

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Love Letter (the engine of loveletter-arena)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "variant": "classic"},
)


def _field_mask(public: bool, private: bool) -> np.ndarray:
    """Which entries of the observation vector an observer of that kind sees."""
    mask = np.zeros(OBSERVATION_SIZE, dtype=bool)
    start = 0
    for name, size in OBSERVATION_FIELDS:
        mask[start : start + size] = private if name in PRIVATE_FIELDS else public
        start += size
    return mask


class LoveLetterGame(pyspiel.Game):
    """One round of Love Letter; ``params``: ``players`` (2 to 4), ``variant``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        players = int(params.get("players", 2))
        variant = Variant.get(str(params.get("variant", "classic")))
        variant.check_players(players)
        self.players = players
        self.variant = variant
        self.max_moves = N_CARDS - 1 - variant.face_up(players) - players
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS,
            max_chance_outcomes=CHANCE_OUTCOMES,
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.max_moves,
        )
        super().__init__(_GAME_TYPE, info, {"players": players, "variant": variant.name})

    def new_initial_state(self) -> LoveLetterState:
        """The start of a round: the deal's first chance node."""
        return LoveLetterState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> LoveLetterObserver:
        """An observer: the view now, or (``perfect_recall``) the views after every move and the
        moves; ``private_info`` NONE leaves out what only the seat knows, ``public_info`` False
        what every seat knows."""
        if params:
            raise ValueError(f"the observer takes no parameters, not {params}")
        return LoveLetterObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), self.max_moves
        )


class LoveLetterState(pyspiel.State):
    """A round: first the deal's chance nodes, then the seats' moves."""

    def __init__(self, game: LoveLetterGame) -> None:
        super().__init__(game)
        self._players = game.players
        self._round = EncodedRound(game.players, game.variant)
        self._deck: list[int] = []
        #: Each move so far, as (seat, action index).
        self.moves: list[tuple[int, int]] = []
        #: Every seat's view after the deal and after each move (rows: seats).
        self.views: list[np.ndarray] = []

    def _snapshot(self) -> None:
        self.views.append(np.stack([self._round.view(s) for s in range(self._players)]))

    def current_player(self) -> int:
        """The seat to move, or the chance or terminal player."""
        if len(self._deck) < N_CARDS:
            return int(pyspiel.PlayerId.CHANCE)
        if self._round.over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self._round.turn

    def _legal_actions(self, player: int) -> list[int]:
        """The action indices the engine allows ``player`` now, ascending."""
        if player != self.current_player():
            return []
        return [int(i) for i in np.flatnonzero(self._round.mask(player))]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the deck order: each value with the copies left, less one."""
        left = list(CARD_COUNT_VALUES)
        for value in self._deck:
            left[value] -= 1
        total = N_CARDS - len(self._deck)
        return [(v - 1, n / total) for v, n in enumerate(left) if v and n]

    def _apply_action(self, action: int) -> None:
        if len(self._deck) < N_CARDS:
            if int(action) not in (outcome for outcome, _ in self.chance_outcomes()):
                raise InvalidCardError(f"no copy of card value {int(action) + 1} is left to deal")
            self._deck.append(int(action) + 1)
            if len(self._deck) == N_CARDS:
                self._round.deal(self._deck)
                self._snapshot()
            return
        seat = self._round.turn
        self._round.step(int(action))
        self.moves.append((seat, int(action)))
        self._snapshot()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {Card(int(action) + 1)}"
        return str(index_action(int(action), player, self._players))

    def is_terminal(self) -> bool:
        """Whether the round is over."""
        return len(self._deck) == N_CARDS and self._round.over

    def returns(self) -> list[float]:
        """Each seat's share of the round once over (:func:`~arena.rl.round.round_rewards`)."""
        if not self.is_terminal():
            return [0.0] * self._players
        return round_rewards(self._round.winners, self._players)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> LoveLetterState:
        """A state ``player_id`` cannot tell from this one, for OpenSpiel's ISMCTS: the cards it
        has not seen dealt again among the places it does not see
        (:func:`bots.determinize.determinize`: uniform among the states its view allows; what
        earlier moves hint, a Guard that missed, is not used), its own views and the moves kept.
        The other seats' earlier views are not the player's to know: in the sample, each is
        their view now."""
        seed = int(probability_sampler() * 2**62)
        sample = self.clone()
        sample._round.state[:] = determinized(self.views[-1][player_id], seed)
        now = np.stack([sample._round.view(s) for s in range(self._players)])
        others = [s for s in range(self._players) if s != player_id]
        sample.views = [moment.copy() for moment in self.views]
        for moment in sample.views:
            moment[others] = now[others]
        return sample

    def __str__(self) -> str:
        """The deck order dealt so far and the moves (which say everything about the state)."""
        deck = "".join(str(v) for v in self._deck)
        played = " ".join(f"{s}:{index_action(a, s, self._players)}" for s, a in self.moves)
        return f"deck {deck}; moves {played}"


def view_text(view: np.ndarray, public: bool = True, private: bool = True) -> str:
    """A seat's view as one line: the public facts (whose turn, who is in and protected, the
    pile, the face-up cards, the draw pile) and what only the seat knows (its hand, held card
    first; the cards it knows others hold; its cards they know)."""
    seen = Observation.from_view(view)

    def cards(values: Any) -> str:
        return ",".join(str(c) if c else "-" for c in values) or "-"

    parts = [f"seat {seen.seat} of {seen.players} ({seen.variant})"]
    if public:
        if seen.ended:
            parts.append(f"over, won by {','.join(map(str, seen.winners))}")
        else:
            parts.append(f"seat {seen.turn} to move")
        parts += [
            f"alive {''.join(str(int(a)) for a in seen.alive)}",
            f"protected {''.join(str(int(p)) for p in seen.protected)}",
            "pile " + (" ".join(f"{s}:{c}" for s, c in seen.pile) or "-"),
            f"face up {cards(seen.face_up)}",
            f"deck {seen.deck_size}" + (", set-aside drawn" if seen.set_aside_taken else ""),
        ]
    if private:
        parts += [
            f"hand {cards(seen.hand)}",
            f"known {cards(seen.known)}",
            f"known by {cards(seen.known_by)}",
        ]
    return "; ".join(parts)


class LoveLetterObserver:
    """OpenSpiel's observer (the ``PyObserver`` interface) of :class:`LoveLetterGame`."""

    def __init__(self, iig_obs_type: Any, max_moves: int) -> None:
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self._public = bool(iig_obs_type.public_info)
        self._private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self._shown = _field_mask(self._public, self._private)
        moments = max_moves + 1 if self.perfect_recall else 1
        pieces = [("views", moments * OBSERVATION_SIZE, (moments, OBSERVATION_SIZE))]
        if self.perfect_recall:
            pieces.append(("moves", max_moves * MOVE_SIZE, (max_moves, MOVE_SIZE)))
        self.tensor = np.zeros(sum(size for _, size, _ in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, size, shape in pieces:
            self.dict[name] = self.tensor[at : at + size].reshape(shape)
            at += size

    def _moments(self, state: LoveLetterState) -> list[np.ndarray]:
        return state.views if self.perfect_recall else state.views[-1:]

    def set_from(self, state: LoveLetterState, player: int) -> None:
        """Fill the tensor with what ``player`` observes of ``state``."""
        self.tensor.fill(0)
        views = self.dict["views"]
        for k, moment in enumerate(self._moments(state)):
            views[k] = encode_view(moment[player]) * self._shown
        if self.perfect_recall and self._public:
            moves = self.dict["moves"]
            for k, (seat, index) in enumerate(state.moves):
                moves[k, (seat - player) % state._players] = 1.0
                moves[k, MAX_PLAYERS + index] = 1.0

    def string_from(self, state: LoveLetterState, player: int) -> str:
        """What ``player`` observes of ``state``, as text (the same facts as the tensor)."""
        parts = [f"p{player}"]
        if not state.views:
            return f"p{player} dealing"
        for k, moment in enumerate(self._moments(state)):
            if self.perfect_recall and k and self._public:
                seat, index = state.moves[k - 1]
                parts.append(f"seat {seat} plays {index_action(index, seat, state._players)}")
            parts.append(view_text(moment[player], self._public, self._private))
        return " | ".join(parts)


pyspiel.register_game(_GAME_TYPE, LoveLetterGame)
