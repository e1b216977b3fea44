"""The simulator: whole rounds between reference bots' numba policies, inside the engine.

This is the research tool behind ``arena simulate``: trusted reference bots only, no referee, no
processes, no records; each decision is the bot's policy on the seat's view made by
:func:`arena.engine.view.seat_view`, exactly as in a refereed game. Deal ``k`` is a fresh
shuffle and seat 0 moves first; with ``swap`` every deal is played in every seat rotation, so that
a bot's strength is not confused with its seat's advantage.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest

from arena.botspec import BotSpec
from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
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
from bots.dispatch import decide
from bots.policy import POLICIES, policy_table


class SimulationError(ArenaError):
    """A policy answered an action that is not legal (a bug in that policy)."""


@njit(cache=True)
def _simulate(
    ids: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
    nplayers: int,
    variant: int,
    deals: int,
    seed: int,
    swap: bool,
) -> np.ndarray:
    """Play ``deals`` deals; return ``tally[r]``: wins per seat in seating ``r``, then its shared
    rounds, with -1 in ``tally[0, -1]`` if a policy ever answered an illegal action (and stop).

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
                    p = p0
                elif bot == 1:
                    p = p1
                elif bot == 2:
                    p = p2
                else:
                    p = p3
                a = decide(ids[bot], view, acts, k, play, p, table)
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


def policy_specs(bots: Sequence[str]) -> list[tuple[str, int, np.ndarray]]:
    """Resolve bot names (``NAME[param=value]``) to (canonical name, policy id, params);
    :class:`UnknownBotError` for a bot without a numba policy."""
    out = []
    for text in bots:
        spec = BotSpec.parse(text)
        info = POLICIES.get(spec.name)
        if info is None:
            known = ", ".join(POLICIES)
            raise UnknownBotError(
                f"bot {spec.name!r} has no numba policy, so it cannot be simulated "
                f"(bots that can: {known}); use a tournament to play it"
            )
        canonical = spec.resolve(dict(info.params), info.rules())
        out.append((str(canonical), info.policy_id, info.param_array(dict(canonical.params))))
    return out


def _table_for(names: Sequence[str]) -> np.ndarray:
    """The Dynamic Programming table's policy array if a bot reads it, else an empty one."""
    for name in names:
        info = POLICIES[BotSpec.parse(name).name]
        if info.needs_table:
            return policy_table(info)
    return policy_table(POLICIES["random"])


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
    ids = np.array([pid for _, pid, _ in specs], dtype=np.int64)
    width = max(1, max(len(p) for _, _, p in specs))
    params = np.zeros((len(specs), width), dtype=np.float64)
    for seat, (_, _, p) in enumerate(specs):
        params[seat, : len(p)] = p
    table = _table_for([name for name, _, _ in specs])
    n = len(specs)
    _simulate(ids, params, table, n, rules.code, 1, seed, swap)  # compile or load first
    begun = time.perf_counter()
    tally = _simulate(ids, params, table, n, rules.code, games, seed, swap)
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
