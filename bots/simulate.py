"""The simulator: whole rounds between reference bots' numba policies, inside the engine.

This is the research tool behind ``arena simulate``: trusted reference bots only, no referee, no
processes, no records; each decision is the bot's policy on the seat's view made by
:func:`arena.engine.view.seat_view`, exactly as in a refereed game. Deal ``k`` is a fresh
shuffle and seat 0 moves first; with ``swap`` every deal is played in every seat rotation, so that
a bot's strength is not confused with its seat's advantage.

The simulator names no bot. Every policy takes the same arguments (:mod:`bots.policy`), so
:func:`_simulate` takes the seats' policies as numba first-class functions
(:data:`POLICY`): a call is an indirect call to the policy's own compiled code, with no Python in
between, and :func:`_simulate` is compiled (and cached) once for every choice of bots. (Passing
the policies' dispatchers themselves would specialise it for each combination of bots, and numba
does not find such specialisations in its cache in a later process: it would compile them on
every run.) Its cache entry holds none of the policies' code, so editing a bot recompiles that
bot's kernels only: the simulator calls whatever they are.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import types
from numba.core.errors import NumbaExperimentalFeatureWarning
from scipy.stats import binomtest

from arena.botspec import BotSpec
from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    MAX_PLAYERS,
    N_CARDS,
    S_END,
    S_TURN,
    STATE_SIZE,
    VIEW_SIZE,
)
from arena.engine.playout import count_result
from arena.engine.rng import next_u64, shuffle
from arena.engine.rules import apply_action, legal_actions, new_round, standard_deck
from arena.engine.view import seat_view
from arena.errors import ArenaError, UnknownBotError
from arena.game.variants import Variant
from bots.policy import PolicyInfo, policies


class SimulationError(ArenaError):
    """A policy answered an action that is not legal (a bug in that policy), or a policy whose
    compiled form is not the one every policy has (:data:`POLICY_SIGNATURE`)."""


_INT32S = types.Array(types.int32, 1, "C")
_TABLE = types.Array(types.int16, 1, "C")
#: Every policy's compiled signature: ``(view, legal, nlegal, rng, params, table) -> action``.
POLICY_SIGNATURE = types.int64(
    _INT32S,
    _INT32S,
    types.int64,
    types.Array(types.uint64, 1, "C"),
    types.Array(types.float64, 1, "C"),
    _TABLE,
)
#: A policy as a numba first-class function.
POLICY = types.FunctionType(POLICY_SIGNATURE)


@njit(
    types.Array(types.int64, 2, "C")(
        POLICY,
        POLICY,
        POLICY,
        POLICY,
        types.Array(types.float64, 2, "C"),
        types.UniTuple(_TABLE, MAX_PLAYERS),
        types.int64,
        types.int64,
        types.int64,
        types.int64,
        types.boolean,
    ),
    cache=True,
)
def _simulate(
    f0: Callable[..., int],
    f1: Callable[..., int],
    f2: Callable[..., int],
    f3: Callable[..., int],
    params: np.ndarray,
    tables: tuple[np.ndarray, ...],
    nplayers: int,
    variant: int,
    deals: int,
    seed: int,
    swap: bool,
) -> np.ndarray:
    """Play ``deals`` deals; return ``tally[r]``: wins per seat in seating ``r``, then its shared
    rounds, with -1 in ``tally[0, -1]`` if a policy ever answered an illegal action (and stop).
    Bot ``i`` plays policy ``f<i>`` with parameters ``params[i]`` and table ``tables[i]`` (the
    entries past ``nplayers`` are not used).

    Without ``swap`` there is one seating (bot ``i`` in seat ``i``) and one generator for the
    shuffles and the decisions. With ``swap`` every deal is played in every seat rotation: in
    seating ``r`` bot ``i`` sits in seat ``(i + r) % nplayers``, and each seating of a deal
    replays the same decision stream, seeded by the deal stream, which only shuffles.
    """
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    replay = np.empty(1, dtype=np.uint64)
    play = replay if swap else rng
    seatings = nplayers if swap else 1
    state = np.zeros(STATE_SIZE, dtype=np.int32)
    view = np.zeros(VIEW_SIZE, dtype=np.int32)
    deck = np.empty(N_CARDS, dtype=np.int32)
    standard_deck(deck)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    tally = np.zeros((seatings, nplayers + 2), dtype=np.int64)
    # Each bot's parameter row, taken once (a slice per decision costs more than the policy).
    p0 = params[0]
    p1 = params[min(1, nplayers - 1)]
    p2 = params[min(2, nplayers - 1)]
    p3 = params[min(3, nplayers - 1)]
    t0, t1, t2, t3 = tables
    for _ in range(deals):
        shuffle(rng, deck, 0, N_CARDS)
        stream = next_u64(rng) if swap else np.uint64(0)
        for r in range(seatings):
            replay[0] = stream
            new_round(state, deck, nplayers, variant, 0, ev)
            while state[S_END] == 0:
                seat = state[S_TURN]
                k = legal_actions(state, acts)
                seat_view(state, seat, view)
                bot = seat - r
                if bot < 0:
                    bot += nplayers
                if bot == 0:
                    a = f0(view, acts, k, play, p0, t0)
                elif bot == 1:
                    a = f1(view, acts, k, play, p1, t1)
                elif bot == 2:
                    a = f2(view, acts, k, play, p2, t2)
                else:
                    a = f3(view, acts, k, play, p3, t3)
                ok = False
                for i in range(k):
                    if acts[i] == a:
                        ok = True
                        break
                if not ok:
                    tally[0, nplayers + 1] = -1
                    return tally
                apply_action(state, a, ev)
            count_result(state, tally[r])
    return tally


@dataclass(frozen=True)
class SimulationResult:
    """What a simulation found: wins per seat and per bot, shared rounds, the first seat's win
    rate with its 95% (Clopper-Pearson) interval, and the speed.

    ``deals`` deals were played in ``seatings`` seatings each (1, or every seat rotation with
    ``swap``), ``games`` rounds in all. ``wins[s]`` counts the rounds won from seat ``s``,
    ``bot_wins[i]`` those won by the ``i``-th bot listed, from whichever seat; without ``swap`` the
    two are the same.
    """

    bots: tuple[str, ...]
    variant: str
    swap: bool
    deals: int
    seatings: int
    games: int
    wins: tuple[int, ...]
    bot_wins: tuple[int, ...]
    draws: int
    first_seat_rate: float
    first_seat_ci: tuple[float, float]
    rounds_per_s: float

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {
            "bots": list(self.bots),
            "variant": self.variant,
            "swap": self.swap,
            "deals": self.deals,
            "seatings": self.seatings,
            "games": self.games,
            "wins": list(self.wins),
            "bot_wins": list(self.bot_wins),
            "draws": self.draws,
            "first_seat_rate": self.first_seat_rate,
            "first_seat_ci": list(self.first_seat_ci),
            "rounds_per_s": self.rounds_per_s,
        }


def policy_specs(bots: Sequence[str]) -> list[tuple[str, PolicyInfo, np.ndarray]]:
    """Resolve bot names (``NAME[param=value]``) to (canonical name, declaration, params);
    :class:`UnknownBotError` for a bot without a numba policy."""
    known = policies()
    out = []
    for text in bots:
        spec = BotSpec.parse(text)
        info = known.get(spec.name)
        if info is None:
            raise UnknownBotError(
                f"bot {spec.name!r} has no numba policy, so it cannot be simulated "
                f"(bots that can: {', '.join(known)}); use a tournament to play it"
            )
        canonical = spec.resolve(dict(info.params), info.rules())
        out.append((str(canonical), info, info.param_array(dict(canonical.params))))
    return out


def compiled_policy(info: PolicyInfo) -> Callable[..., int]:
    """Bot ``info``'s policy, compiled (or loaded from the cache) for
    :data:`POLICY_SIGNATURE`; :class:`SimulationError` if it answers another type than int64
    (the simulator would read its answers wrongly)."""
    kernel = info.kernel()
    kernel.compile(POLICY_SIGNATURE.args)  # type: ignore[attr-defined]
    for signature in kernel.nopython_signatures:  # type: ignore[attr-defined]
        if signature.args == POLICY_SIGNATURE.args:
            if signature.return_type != POLICY_SIGNATURE.return_type:
                raise SimulationError(
                    f"the policy of bot {info.name!r} answers {signature.return_type}, not "
                    f"{POLICY_SIGNATURE.return_type} (answer numba.types.int64(action))"
                )
            break
    return kernel


def simulate(
    bots: Sequence[str],
    games: int,
    variant: str = "classic",
    seed: int = 0,
    swap: bool = False,
) -> SimulationResult:
    """Play ``games`` deals between ``bots`` in the engine, seat 0 first.

    Without ``swap`` bot ``i`` sits in seat ``i`` and each deal is one round. With ``swap`` each
    deal is played in every seat rotation (both seatings with two bots; bot ``i`` in seat
    ``(i + r) % players`` in rotation ``r``), ``games * players`` rounds in all, every seating of a
    deal with the same random decisions: each bot meets every deal from every seat, so its wins
    are free of the seats' advantages, and bots of one policy win exactly as often. The deals
    come from ``seed`` alone, so listing the bots in another rotation plays the same rounds.
    """
    rules = Variant.get(variant)
    rules.check_players(len(bots))
    if games < 1:
        raise ArenaError(f"--games must be at least 1, not {games}")
    specs = policy_specs(bots)
    width = max(1, max(len(p) for _, _, p in specs))
    params = np.zeros((len(specs), width), dtype=np.float64)
    for seat, (_, _, p) in enumerate(specs):
        params[seat, : len(p)] = p
    kernels: dict[str, Callable[..., int]] = {}
    tables: dict[str, np.ndarray] = {}
    for _, info, _ in specs:
        if info.name not in kernels:
            kernels[info.name] = compiled_policy(info)
            tables[info.name] = info.table()
    n = len(specs)
    # The policy and table of each of the simulator's MAX_PLAYERS bots: those past the table's
    # size repeat the last bot and never play.
    names = [specs[min(i, n - 1)][1].name for i in range(MAX_PLAYERS)]
    f0, f1, f2, f3 = (kernels[name] for name in names)
    seat_tables = tuple(tables[name] for name in names)

    def run(deals: int) -> np.ndarray:
        with warnings.catch_warnings():  # numba calls first-class functions "experimental"
            warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
            return _simulate(f0, f1, f2, f3, params, seat_tables, n, rules.code, deals, seed, swap)

    run(1)  # load the policies' code first
    begun = time.perf_counter()
    tally = run(games)
    spent = time.perf_counter() - begun
    if tally[0, -1] < 0:
        raise SimulationError("a policy answered an illegal action (a bug in that bot)")
    seatings = tally.shape[0]
    rounds = games * seatings
    wins = tuple(int(x) for x in tally[:, :n].sum(axis=0))
    bot_wins = tuple(sum(int(tally[r, (i + r) % n]) for r in range(seatings)) for i in range(n))
    ci = binomtest(wins[0], rounds).proportion_ci(confidence_level=0.95)
    return SimulationResult(
        bots=tuple(name for name, _, _ in specs),
        variant=rules.name,
        swap=swap,
        deals=games,
        seatings=seatings,
        games=rounds,
        wins=wins,
        bot_wins=bot_wins,
        draws=int(tally[:, n].sum()),
        first_seat_rate=wins[0] / rounds,
        first_seat_ci=(float(ci.low), float(ci.high)),
        rounds_per_s=rounds / spent if spent > 0 else float("inf"),
    )
