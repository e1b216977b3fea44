"""The other seats played by reference bots' numba policies, inside the engine: one kernel call
per decision of the learning seat plays its action and every bot's move until it is to move
again, then observes it.

The policies are called as numba first-class functions, as :mod:`bots.simulate` calls them
(:func:`bots.simulate.compiled_policy`, :data:`bots.simulate.POLICY`), so the kernel is compiled
once for every choice of bots. They are handed over in a typed list of their addresses, found
once: a dispatcher passed as an argument has its address looked up again on every call, which
costs more than a whole decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import types
from numba.core.types.function_type import CompileResultWAP
from numba.typed import List

from arena.engine.jit import njit
from arena.engine.layout import EVENT_WIDTH, MAX_PLAYERS, S_END, S_NPLAYERS, S_TURN
from arena.engine.rng import new_rng
from arena.engine.rules import apply_action, legal_actions
from arena.engine.view import seat_view
from arena.errors import ArenaError
from arena.game.actions import Action
from arena.game.variants import Variant
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE, _legal_mask, _packed_action
from arena.rl.render import table_text
from arena.rl.round import OVER, REFUSED, EncodedRound, _observe
from arena.rl.seat_table import Observed, SeatTable
from arena.seeds import derive_seed
from bots.simulate import (
    POLICY,
    POLICY_SIGNATURE,
    SimulationError,
    compiled_policy,
    policy_specs,
)

#: What :func:`_advance` returns when a bot's policy answered an illegal action (a bot's bug).
POLICY_FAULT = -3
#: Most moves a round has (13 turns in the two-player game without face-up cards), and room.
MAX_MOVES = 16

_INT32S = types.Array(types.int32, 1, "C")
_TABLE = types.Array(types.int16, 1, "C")


@njit(
    types.int64(
        _INT32S,
        types.int64,
        types.int64,
        types.ListType(POLICY),
        types.Array(types.float64, 2, "C"),
        types.UniTuple(_TABLE, MAX_PLAYERS),
        types.Array(types.uint64, 1, "C"),
        _INT32S,
        _INT32S,
        types.Array(types.int32, 2, "C"),
        types.Array(types.float32, 1, "C"),
        types.Array(types.int8, 1, "C"),
        _INT32S,
    ),
    cache=True,
)
def _advance(
    state: np.ndarray,
    seat: int,
    index: int,
    policies: Any,
    params: np.ndarray,
    tables: tuple[np.ndarray, ...],
    rng: np.ndarray,
    view: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    played: np.ndarray,
) -> int:
    """Play action ``index`` for ``seat`` (none when negative), then the policies of the other
    seats (``policies[s]`` with ``params[s]`` and ``tables[s]`` for seat ``s``) until ``seat`` is
    to move or the round is over; observe ``seat`` into ``obs`` and ``mask``. ``played[0]`` is set
    to the number of moves made, ``played[1:]`` to each as ``seat << 12 | packed action``. Returns
    ``seat``, :data:`OVER`, :data:`REFUSED` (``index`` not legal; nothing played) or
    :data:`POLICY_FAULT`."""
    n = state[S_NPLAYERS]
    played[0] = 0
    if index >= 0:
        packed = _packed_action(index, seat, n)
        k = _legal_mask(state, seat, acts, mask)
        legal = False
        for i in range(k):
            if acts[i] == packed:
                legal = True
        if not legal:
            return REFUSED
        apply_action(state, packed, ev)
        played[0] = 1
        played[1] = (seat << 12) | packed
    while state[S_END] == 0 and state[S_TURN] != seat:
        s = state[S_TURN]
        k = legal_actions(state, acts)
        seat_view(state, s, view)
        policy = policies[s]
        a = policy(view, acts, k, rng, params[s], tables[s])
        ok = False
        for i in range(k):
            if acts[i] == a:
                ok = True
        if not ok:
            return POLICY_FAULT
        apply_action(state, a, ev)
        m = played[0] + 1
        played[0] = m
        played[m] = (s << 12) | a
    _observe(state, seat, view, acts, obs, mask)
    return OVER if state[S_END] != 0 else seat


class CompiledTable(SeatTable):
    """The other seats played by reference bots (``NAME[param=value]``, each with a numba
    policy), in this process; :class:`~arena.errors.UnknownBotError` names the bots that can be
    played so, for one that cannot (play it with :class:`~arena.rl.hosted_table.HostedTable`)."""

    def __init__(self, opponents: Sequence[str], players: int, variant: str | Variant) -> None:
        self.variant = Variant.get(variant)
        self.variant.check_players(players)
        if len(opponents) != players - 1:
            raise ArenaError(
                f"{players} players need {players - 1} opponents, not {len(opponents)}"
            )
        specs = policy_specs(opponents)
        for name, info, _ in specs:
            if info.variants is not None and self.variant.name not in info.variants:
                raise ArenaError(
                    f"bot {name!r} plays {', '.join(info.variants)}, not {self.variant.name}"
                )
            if info.players is not None and players not in info.players:
                raise ArenaError(
                    f"bot {name!r} plays {', '.join(map(str, info.players))} players, not {players}"
                )
        self.players = players
        self.opponents = tuple(name for name, _, _ in specs)
        self.game = EncodedRound(players, self.variant)
        self._specs = specs
        kernels: dict[str, Callable[..., int]] = {}
        self._tables: dict[str, np.ndarray] = {}
        for _, info, _ in specs:
            if info.name not in kernels:
                dispatcher: Any = compiled_policy(info)
                compiled = dispatcher.get_compile_result(POLICY_SIGNATURE)
                kernels[info.name] = CompileResultWAP(compiled)
                self._tables[info.name] = info.table()
        self._kernels = kernels
        self._seat = 0
        self._seatings = [self._seating(seat) for seat in range(players)]
        self._rng = new_rng(0)
        self._played = np.zeros(MAX_MOVES + 1, dtype=np.int32)
        self._moves: list[int] = []
        #: The round's moves so far, as (seat, action).
        self.history: list[tuple[int, Action]] = []
        self._view = np.zeros_like(self.game._view)
        self._acts = np.zeros_like(self.game._acts)
        self._ev = np.zeros((0, EVENT_WIDTH), dtype=np.int32)
        self._final = np.zeros(0, dtype=np.float32)

    def _seating(self, seat: int) -> tuple[Any, np.ndarray, tuple[np.ndarray, ...]]:
        """The bots around the learner in ``seat``: per seat, the policy, parameters and table of
        the bot listed for it (the learner's own slot repeats a bot's, never asked)."""
        order = list(range(self.players - 1))
        order.insert(seat, 0)
        order += [order[-1]] * (MAX_PLAYERS - self.players)
        names = [self._specs[b][1].name for b in order]
        policies = List.empty_list(POLICY)
        for name in names:
            policies.append(self._kernels[name])
        width = max(1, max(len(p) for _, _, p in self._specs))
        params = np.zeros((MAX_PLAYERS, width), dtype=np.float64)
        for s, b in enumerate(order):
            given = self._specs[b][2]
            params[s, : len(given)] = given
        return policies, params, tuple(self._tables[name] for name in names)

    def _run(self, index: int) -> Observed | None:
        obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(N_ACTIONS, dtype=np.int8)
        policies, params, tables = self._seatings[self._seat]
        code = _advance(
            self.game.state,
            self._seat,
            index,
            policies,
            params,
            tables,
            self._rng,
            self._view,
            self._acts,
            self._ev,
            obs,
            mask,
            self._played,
        )
        self._moves = self._played[1 : 1 + self._played[0]].tolist()
        self.history += [(m >> 12, Action.from_int(m & 4095)) for m in self._moves]
        if code == POLICY_FAULT:
            raise SimulationError("a policy answered an illegal action (a bug in that bot)")
        if code == REFUSED:
            raise ArenaError(f"action {index} is not legal for the learning seat now")
        if code == OVER:
            self._final = obs
            return None
        return obs, mask

    def deal(self, seat: int, seed: int, deck: Sequence[int] | None = None) -> Observed | None:
        """See :meth:`SeatTable.deal`."""
        if not 0 <= seat < self.players:
            raise ArenaError(f"seat {seat} is not one of the {self.players} seats")
        self._seat = seat
        if deck is None:
            self.game.seed(seed)
        self.game.deal(deck, 0)
        self._rng = new_rng(derive_seed(seed, "opponents"))
        self.history = []
        return self._run(-1)

    def step(self, index: int) -> Observed | None:
        """See :meth:`SeatTable.step`."""
        return self._run(index)

    def forfeit(self) -> None:
        """See :meth:`SeatTable.forfeit`: the learner is knocked out and the bots play on."""
        from arena.engine.rules import forfeit

        if not self.game.over:
            forfeit(self.game.state, self._seat, self._ev)
            self._run(-1)

    def final_observation(self) -> np.ndarray:
        """See :meth:`SeatTable.final_observation`."""
        if not self.game.over:
            raise ArenaError("the round is not over")
        return self._final

    @property
    def winners(self) -> tuple[int, ...]:
        """See :meth:`SeatTable.winners`."""
        return self.game.winners

    def names(self) -> list[str]:
        """Each seat's name: the bots', and ``learner``."""
        names = list(self.opponents)
        names.insert(self._seat, "learner")
        return names

    def table_text(self) -> str:
        """See :meth:`SeatTable.table_text`."""
        names = self.names()
        moves = [f"{names[m >> 12]} plays {Action.from_int(m & 4095)}" for m in self._moves]
        return table_text(self.game, names, moves)
