"""The Gymnasium environment in batches: ``num_envs`` rounds of :class:`SingleSeatEnv
<arena.rl.single_seat.SingleSeatEnv>` against reference bots' compiled policies, stepped together
by one kernel call.

:class:`SingleSeatVectorEnv` is a :class:`gymnasium.vector.VectorEnv` (Gymnasium 1.x's API, in its
default ``NEXT_STEP`` autoreset mode). Each ``step`` is one kernel call that, for every round of
the batch, plays the learning seat's action and the bots up to its next decision (with
``_advance``, the kernel :class:`~arena.rl.compiled_table.CompiledTable` steps one round with),
or deals the round that ended at the previous step again; the rules are the engine's, as
everywhere, and the Python work per step is the same whatever the batch's size.

Each round of the batch draws its learning seats and deals from its own seed (``seed + i`` for
``reset(seed=seed)``, as :class:`gymnasium.vector.SyncVectorEnv` seeds its environments): in the
kernel by default, or, with ``seeding="single_seat"``, from a NumPy generator exactly as
``SingleSeatEnv`` draws them, so that round ``i`` plays the episodes of a ``SingleSeatEnv`` reset
with the same seed and given the same actions. Only bots with a numba policy can be played so; a
bot in its host plays in ``SingleSeatEnv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import types
from numba.typed import List

from arena.botspec import BotSpec
from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    MAX_PLAYERS,
    N_CARDS,
    S_WINNERS,
    STATE_SIZE,
    VIEW_SIZE,
)
from arena.engine.rng import next_u64, rand_below
from arena.engine.rules import EVENTS_PER_CALL, forfeit, standard_deck
from arena.errors import ArenaError, UnknownBotError
from arena.game.cards import Card
from arena.game.deck import check_deck
from arena.rl.compiled_table import MAX_MOVES, CompiledTable, _advance
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE
from arena.rl.extra import missing_extra
from arena.rl.round import OVER, _deal, round_rewards
from arena.rl.single_seat import ILLEGAL_REWARD, MAX_REDEALS, _opponent_names, checked_seating
from arena.seeds import derive_seed
from bots.simulate import POLICY, SimulationError

try:
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as exc:  # pragma: no cover - the extra brings gymnasium
    raise missing_extra("arena.rl's Gymnasium vector environment", exc) from None

#: What a round of the batch does at the next kernel call: play the learner's action.
STEP = 0
#: ... deal a new round.
DEAL = 1
#: ... nothing (a partial reset leaves it as it is).
SKIP = 2
#: The ways a batch draws its seats and deals (:class:`SingleSeatVectorEnv`'s ``seeding``).
SEEDINGS = ("engine", "single_seat")
#: Deals the kernel tries in a row for a round that keeps ending before the learner's first move.
_KERNEL_REDEALS = 64

_I8S = types.Array(types.int8, 1, "C")
_I64S = types.Array(types.int64, 1, "C")
_BOOLS = types.Array(types.boolean, 1, "C")
_INT32S = types.Array(types.int32, 1, "C")
_INT32S2 = types.Array(types.int32, 2, "C")
_RNGS = types.Array(types.uint64, 2, "C")
_TABLE = types.Array(types.int16, 1, "C")


@njit(
    types.int64(
        _I8S,
        _I64S,
        _I64S,
        _BOOLS,
        types.boolean,
        types.int64,
        _RNGS,
        _INT32S2,
        _INT32S2,
        _RNGS,
        _RNGS,
        types.ListType(types.ListType(POLICY)),
        types.Array(types.float64, 3, "C"),
        types.UniTuple(types.UniTuple(_TABLE, MAX_PLAYERS), MAX_PLAYERS),
        types.Array(types.float64, 2, "C"),
        types.int64,
        types.int64,
        types.Array(types.float32, 2, "C"),
        types.Array(types.int8, 2, "C"),
        types.Array(types.float64, 1, "C"),
        _BOOLS,
        _BOOLS,
        _I8S,
        _INT32S,
        _INT32S,
        _INT32S2,
        _INT32S2,
        _INT32S,
    ),
    cache=True,
)
def _step_all(
    modes: np.ndarray,
    actions: np.ndarray,
    seats: np.ndarray,
    shuffled: np.ndarray,
    draw: bool,
    fixed_seat: int,
    draw_rngs: np.ndarray,
    states: np.ndarray,
    decks: np.ndarray,
    deck_rngs: np.ndarray,
    bot_rngs: np.ndarray,
    policies: Any,
    params: np.ndarray,
    tables: tuple[tuple[np.ndarray, ...], ...],
    reward_of: np.ndarray,
    players: int,
    variant: int,
    obs: np.ndarray,
    masks: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    illegal: np.ndarray,
    redeal: np.ndarray,
    view: np.ndarray,
    acts: np.ndarray,
    deal_ev: np.ndarray,
    ev: np.ndarray,
    played: np.ndarray,
) -> int:
    """Step every round ``i`` of the batch as ``modes[i]`` says.

    :data:`STEP` plays ``actions[i]`` for the learner in ``seats[i]`` (an action its mask
    ``masks[i]`` does not allow forfeits the round), then the bots (seated around it as
    ``policies[seats[i]]``, ``params[seats[i]]``, ``tables[seats[i]]``) until it is to move again
    or the round is over. :data:`DEAL` deals a round (``decks[i]`` from the standard order
    shuffled from ``deck_rngs[i]`` if ``shuffled[i]``, else as it is) and plays the bots up to the
    learner's first move; with ``draw`` it first draws the learner's seat (``fixed_seat`` unless
    negative) and the seeds of ``deck_rngs[i]`` and ``bot_rngs[i]`` from ``draw_rngs[i]``, and
    deals again (a few times) while the round ends before the learner moves. :data:`SKIP` leaves
    the round. Writes each stepped round's observation, mask (zeros once over), reward
    (``reward_of[winners, seat]`` at the end), end and illegal flags, and ``redeal[i]`` (1: the
    round dealt ended before the learner moved). Returns how many rounds need dealing again, or
    ``-1 - i`` when a bot's policy in round ``i`` answered an illegal action."""
    again = 0
    for i in range(modes.shape[0]):
        mode = modes[i]
        if mode == SKIP:
            continue
        state = states[i]
        rewards[i] = 0.0
        terminated[i] = False
        illegal[i] = False
        redeal[i] = 0
        tries = 0
        while True:
            index = -1
            if mode == DEAL:
                if draw:
                    if fixed_seat >= 0:
                        seats[i] = fixed_seat
                    else:
                        seats[i] = rand_below(draw_rngs[i], players)
                    deck_rngs[i, 0] = next_u64(draw_rngs[i]) >> np.uint64(1)
                    bot_rngs[i, 0] = next_u64(draw_rngs[i]) >> np.uint64(1)
                if shuffled[i]:
                    standard_deck(decks[i])
                _deal(
                    state,
                    decks[i],
                    deck_rngs[i],
                    shuffled[i],
                    players,
                    variant,
                    0,
                    deal_ev,
                    view,
                    acts,
                    obs[i],
                    masks[i],
                )
            else:
                index = actions[i]
                if index < 0 or index >= N_ACTIONS or masks[i, index] == 0:
                    forfeit(state, seats[i], ev)
                    illegal[i] = True
                    index = -1
            seat = seats[i]
            code = _advance(
                state,
                seat,
                index,
                policies[seat],
                params[seat],
                tables[seat],
                bot_rngs[i],
                view,
                acts,
                ev,
                obs[i],
                masks[i],
                played,
            )
            if code < OVER:  # a policy's fault (a refusal the mask rules out)
                return -1 - i
            if code != OVER:
                break
            masks[i, :] = 0
            if mode == STEP:
                terminated[i] = True
                rewards[i] = ILLEGAL_REWARD if illegal[i] else reward_of[state[S_WINNERS], seat]
                break
            tries += 1
            if not (draw and shuffled[i]) or tries == _KERNEL_REDEALS:
                redeal[i] = 1
                again += 1
                break
    return again


def _reward_table(players: int) -> np.ndarray:
    """:func:`~arena.rl.round.round_rewards` as a table: row ``w`` (the engine's bit mask of
    winners), column ``seat``."""
    table = np.zeros((1 << MAX_PLAYERS, MAX_PLAYERS), dtype=np.float64)
    for w in range(1, 1 << players):
        winners = [s for s in range(players) if w >> s & 1]
        table[w, :players] = round_rewards(winners, players)
    return table


class SingleSeatVectorEnv(VectorEnv):
    """``num_envs`` rounds of :class:`~arena.rl.single_seat.SingleSeatEnv` (``opponents``,
    ``players``, ``variant``, ``seat`` as there) stepped together by one kernel call.

    Observations are ``float32[num_envs, 184]``, actions ``MultiDiscrete([41] * num_envs)``;
    rewards, terminations and truncations (never) are arrays of ``num_envs``. A round that ends
    is dealt again at the next ``step`` (Gymnasium's ``NEXT_STEP`` autoreset: that step ignores
    its action and returns the new round's first observation and infos, reward 0, not
    terminated). :meth:`action_masks` gives the legal actions of every round (all false for one
    that ended at the last step). An action its mask does not allow ends the round with -1 and
    ``"illegal_action"``, as in ``SingleSeatEnv``.

    ``reset(seed=S)`` seeds round ``i`` with ``S + i`` (or takes a list of seeds, as
    :class:`gymnasium.vector.SyncVectorEnv`), so a batch replays exactly. ``seeding`` says how
    each round draws its learning seats and deals from its seed: ``"engine"`` (the default) in the
    kernel, from the engine's generator; ``"single_seat"`` from a NumPy generator, in Python, as
    ``SingleSeatEnv`` does, so round ``i`` plays exactly the episodes of a ``SingleSeatEnv``
    reset with the same seed (slower: a few microseconds of Python per deal). ``reset``'s
    ``options`` may give a ``"seat"`` and a ``"deck"`` (for every round reset, as
    ``SingleSeatEnv``'s) and Gymnasium's ``"reset_mask"`` (reset only those rounds).

    Infos hold ``"seat"`` and ``"action_mask"`` for every round, and for rounds that ended
    ``"winners"`` (``bool[num_envs, players]``) and ``"illegal_action"``, each with Gymnasium's
    ``"_key"`` mask. ``copy=False`` returns the environment's own observation array (overwritten
    at the next step). Only bots with a numba policy can be played: ``hosted=True`` or another
    bot is an :class:`~arena.errors.ArenaError`.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 1,
        opponents: str | Sequence[str] = "random",
        players: int = 2,
        variant: str = "classic",
        seat: int | None = None,
        hosted: bool | None = None,
        seeding: str = "engine",
        copy: bool = True,
    ) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ArenaError(f"num_envs must be a positive int, not {num_envs!r}")
        rules = checked_seating(players, variant, seat)
        if seeding not in SEEDINGS:
            raise ArenaError(f"unknown seeding {seeding!r} (known: {', '.join(SEEDINGS)})")
        names = _opponent_names(opponents, players)
        if hosted:
            raise ArenaError(
                "SingleSeatVectorEnv plays bots in this process only, not hosted: play a hosted "
                "bot with SingleSeatEnv (one per process in gymnasium's AsyncVectorEnv)"
            )
        from bots.policy import policies

        known = policies()
        for name in names:
            bot = BotSpec.parse(name).name
            if bot not in known:
                raise UnknownBotError(
                    f"bot {bot!r} has no numba policy, and SingleSeatVectorEnv plays only those, "
                    f"in this process (bots it can play: {', '.join(known)}); play it in its "
                    "host with SingleSeatEnv"
                )
        table = CompiledTable(names, players, rules)
        self.num_envs = num_envs
        self.players = players
        self.variant = rules
        self.seat = seat
        self.seeding = seeding
        self.copy = copy
        #: The bots, in seat order, the learning seat left out (canonical names).
        self.opponents = table.opponents
        self.single_observation_space = spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        # The bots around the learner in each seat (seatings past the table repeat the last).
        seatings = [table._seating(s) for s in range(players)]
        seatings += [seatings[-1]] * (MAX_PLAYERS - players)
        self._policies = List.empty_list(types.ListType(POLICY))
        for around, _, _ in seatings:
            self._policies.append(around)
        self._params = np.ascontiguousarray(np.stack([p for _, p, _ in seatings]))
        self._tables = tuple(t for _, _, t in seatings)
        self._reward_of = _reward_table(players)
        n = num_envs
        self._gens: list[np.random.Generator | None] = [None] * n
        self._seeded = np.zeros(n, dtype=np.bool_)
        self._draw_rngs = np.zeros((n, 1), dtype=np.uint64)
        self._modes = np.full(n, SKIP, dtype=np.int8)
        self._actions = np.zeros(n, dtype=np.int64)
        self._seats = np.zeros(n, dtype=np.int64)
        self._shuffled = np.ones(n, dtype=np.bool_)
        self._states = np.zeros((n, STATE_SIZE), dtype=np.int32)
        self._decks = np.zeros((n, N_CARDS), dtype=np.int32)
        self._deck_rngs = np.zeros((n, 1), dtype=np.uint64)
        self._bot_rngs = np.zeros((n, 1), dtype=np.uint64)
        self._obs = np.zeros((n, OBSERVATION_SIZE), dtype=np.float32)
        self._masks = np.zeros((n, N_ACTIONS), dtype=np.int8)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._illegal = np.zeros(n, dtype=np.bool_)
        self._redeal = np.zeros(n, dtype=np.int8)
        self._autoreset = np.zeros(n, dtype=np.bool_)
        self._every = np.ones(n, dtype=np.bool_)
        self._seat_bits = np.arange(players)
        self._view = np.zeros(VIEW_SIZE, dtype=np.int32)
        self._acts = np.zeros(MAX_ACTIONS, dtype=np.int32)
        self._deal_ev = np.zeros((EVENTS_PER_CALL, EVENT_WIDTH), dtype=np.int32)
        self._ev = np.zeros((0, EVENT_WIDTH), dtype=np.int32)
        self._played = np.zeros(MAX_MOVES + 1, dtype=np.int32)
        self._dealt = False

    def _seed(self, i: int, seed: int | None) -> None:
        """Seed round ``i``'s draws with ``seed``; without one, from the operating system's
        entropy the first time, then go on with its generator (as ``SingleSeatEnv``)."""
        if seed is None and self._seeded[i]:
            return
        if self.seeding == "single_seat":
            self._gens[i], _ = seeding.np_random(seed)
        else:
            if seed is None:
                seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
            self._draw_rngs[i, 0] = derive_seed(seed, "arena.rl.vector")
        self._seeded[i] = True

    def _draw(self, i: int, seat: int | None) -> None:
        """With ``seeding="single_seat"``: draw round ``i``'s learning seat (unless given) and
        deal seed from its generator, as ``SingleSeatEnv.reset`` draws them; set it to be
        dealt."""
        gen = self._gens[i]
        assert gen is not None
        if seat is None:
            seat = int(gen.integers(self.players))
        seed = int(gen.integers(2**63))
        self._seats[i] = seat
        self._deck_rngs[i, 0] = seed
        self._bot_rngs[i, 0] = derive_seed(seed, "opponents")
        self._modes[i] = DEAL

    def _run(self, seat: int | None) -> int:
        """One call of the kernel over the batch as ``_modes`` says; the rounds to deal again."""
        code = _step_all(
            self._modes,
            self._actions,
            self._seats,
            self._shuffled,
            self.seeding == "engine",
            -1 if seat is None else seat,
            self._draw_rngs,
            self._states,
            self._decks,
            self._deck_rngs,
            self._bot_rngs,
            self._policies,
            self._params,
            self._tables,
            self._reward_of,
            self.players,
            self.variant.code,
            self._obs,
            self._masks,
            self._rewards,
            self._terminated,
            self._illegal,
            self._redeal,
            self._view,
            self._acts,
            self._deal_ev,
            self._ev,
            self._played,
        )
        if code < 0:
            raise SimulationError(
                f"a policy answered an illegal action in round {-1 - code} (a bug in that bot)"
            )
        return int(code)

    def _deal_again(self, count: int, seat: int | None, fixed_deck: bool) -> None:
        """Deal the rounds that ended before the learner's first move again (``SingleSeatEnv``
        does too), until every one of them has it to move."""
        for _ in range(MAX_REDEALS):
            if count == 0:
                return
            if fixed_deck:
                raise ArenaError("on this deck the round ends before the learning seat moves")
            np.copyto(self._modes, np.where(self._redeal != 0, DEAL, SKIP), casting="unsafe")
            if self.seeding == "single_seat":
                for i in np.flatnonzero(self._redeal).tolist():
                    self._draw(i, seat)
            count = self._run(seat)
        if count:  # pragma: no cover - a seat that never moves in a thousand deals
            raise ArenaError(f"a learning seat never got to move in {MAX_REDEALS} deals")

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a round in every sub-environment (those of ``options["reset_mask"]`` only, if
        given) and play the bots up to each learning seat's first move; the observations and
        ``{"seat", "action_mask"}`` (with their ``"_key"`` masks)."""
        n = self.num_envs
        options = dict(options or {})
        reset_mask = options.pop("reset_mask", None)
        if reset_mask is None:
            chosen = self._every
        else:
            chosen = np.asarray(reset_mask)
            if chosen.shape != (n,) or chosen.dtype != np.bool_ or not chosen.any():
                raise ArenaError(
                    f"options['reset_mask'] must be {n} booleans, some true, not {reset_mask!r}"
                )
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, int | np.integer):
            super().reset(seed=int(seed))  # the batch's own np_random, as Gymnasium's
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = [None if s is None else int(s) for s in seed]
            if len(seeds) != n:
                raise ArenaError(f"reset(seed=...) needs one seed per sub-environment ({n})")
        seat = options.get("seat", self.seat)
        if seat is not None:
            seat = int(seat)
            if not 0 <= seat < self.players:
                raise ArenaError(f"seat {seat} is not one of the {self.players} seats")
        deck = options.get("deck")
        cards = None
        if deck is not None:
            cards = [int(c) for c in check_deck([Card(int(c)) for c in deck], self.variant)]
        self._modes[:] = SKIP
        for i in np.flatnonzero(chosen).tolist():
            self._seed(i, seeds[i])
            self._modes[i] = DEAL
            if self.seeding == "single_seat":
                self._draw(i, seat)
            if cards is not None:
                self._shuffled[i] = False
                self._decks[i] = cards
        try:
            self._deal_again(self._run(seat), seat, cards is not None)
        finally:
            self._shuffled[:] = True
        self._autoreset[chosen] = False
        self._dealt = True
        infos = {
            "seat": self._seats.copy(),
            "_seat": chosen.copy(),
            "action_mask": self._masks.copy(),
            "_action_mask": chosen.copy(),
        }
        return (self._obs.copy() if self.copy else self._obs), infos

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each sub-environment's action (an index of ``Discrete(41)``; the action of one
        whose round ended at the last step is ignored, and it is dealt again), then the bots
        until each learning seat is to move again or its round is over."""
        if not self._dealt:
            raise ArenaError("call reset() before step()")
        given = np.asarray(actions)
        if given.shape != (self.num_envs,):
            raise ArenaError(
                f"step() needs one action per sub-environment, shape ({self.num_envs},), "
                f"not {given.shape}"
            )
        np.copyto(self._actions, given, casting="unsafe")
        np.copyto(self._modes, self._autoreset, casting="unsafe")  # STEP 0, DEAL 1
        if self.seeding == "single_seat" and self._autoreset.any():
            for i in np.flatnonzero(self._autoreset).tolist():
                self._draw(i, self.seat)
        count = self._run(self.seat)
        if count:
            self._deal_again(count, self.seat, False)
        ended = self._terminated.copy()
        np.copyto(self._autoreset, ended)
        infos: dict[str, Any] = {
            "seat": self._seats.copy(),
            "_seat": self._every.copy(),
            "action_mask": self._masks.copy(),
            "_action_mask": self._every.copy(),
        }
        if ended.any():
            winners = self._states[:, S_WINNERS, None] >> self._seat_bits & 1
            infos["winners"] = (winners != 0) & ended[:, None]
            infos["_winners"] = ended.copy()
            if self._illegal.any():
                infos["illegal_action"] = self._illegal.copy()
                infos["_illegal_action"] = self._illegal.copy()
        return (
            self._obs.copy() if self.copy else self._obs,
            self._rewards.copy(),
            ended,
            self._truncated.copy(),
            infos,
        )

    def action_masks(self) -> np.ndarray:
        """The legal actions of every sub-environment now, ``bool[num_envs, 41]`` (the method
        sb3-contrib's ``MaskablePPO`` asks for); all false for one whose round ended at the last
        step (its next action is ignored)."""
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the bots are kernels of this process."""
