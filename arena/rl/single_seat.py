"""The Gymnasium environment: one seat of a round against bots, for single-agent learning.

``SingleSeatEnv(opponents="random", players=2)`` plays the learning seat (its observation and
action encodings are :mod:`arena.rl.encoding`'s) against reference bots' numba policies in this
process (:class:`~arena.rl.compiled_table.CompiledTable`, fast enough to train on), or against
any installed bot through the referee and its sandboxed host
(:class:`~arena.rl.hosted_table.HostedTable`). An episode is one round; the reward comes at its
end (:func:`~arena.rl.round.round_rewards`); :meth:`SingleSeatEnv.action_masks` gives the legal
actions (the method sb3-contrib's ``MaskablePPO`` asks for).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.botspec import BotSpec
from arena.errors import ArenaError, GameOverError
from arena.game.variants import Variant
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE
from arena.rl.extra import missing_extra
from arena.rl.round import round_rewards
from arena.rl.seat_table import SeatTable

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as exc:
    raise missing_extra("arena.rl's Gymnasium environment", exc) from None

#: The id :func:`gymnasium.make` knows the environment by (its keywords are the class's).
GYMNASIUM_ID = "arena/LoveLetter-v0"
#: Rounds dealt again at most when they end before the learning seat's first move.
MAX_REDEALS = 1000
#: The reward of an illegal action: worse than any lost round.
ILLEGAL_REWARD = -1.0


def checked_seating(players: Any, variant: str, seat: int | None) -> Variant:
    """The rules of ``variant`` for a table of ``players`` with the learning seat ``seat``
    (``None``: drawn each round); an :class:`~arena.errors.ArenaError` for any of them that is
    not valid."""
    if not isinstance(players, int) or isinstance(players, bool):
        raise ArenaError(f"players must be an int from 2 to 4, not {players!r}")
    rules = Variant.get(variant)
    rules.check_players(players)
    if seat is not None and not 0 <= seat < players:
        raise ArenaError(f"seat {seat} is not one of the {players} seats")
    return rules


def _opponent_names(opponents: str | Sequence[str], players: int) -> list[str]:
    if isinstance(opponents, str):
        return [opponents] * (players - 1)
    names = list(opponents) if isinstance(opponents, Sequence) else []
    if len(names) != players - 1 or not all(isinstance(n, str) for n in names):
        raise ArenaError(
            f"opponents must be one bot name or {players - 1} of them for {players} players, "
            f"not {opponents!r}"
        )
    return names


def _table(
    names: list[str],
    players: int,
    variant: Variant,
    hosted: bool | None,
    sandbox: str,
    move_time: float | None,
) -> SeatTable:
    """The compiled table when every opponent has a numba policy (unless ``hosted``), else the
    hosted one."""
    if hosted is None:
        from bots.policy import policies

        known = policies()
        hosted = not all(BotSpec.parse(n).name in known for n in names)
    if hosted:
        from arena.rl.hosted_table import HostedTable

        return HostedTable(names, players, variant, sandbox, move_time)
    from arena.rl.compiled_table import CompiledTable

    return CompiledTable(names, players, variant)


class SingleSeatEnv(gymnasium.Env):
    """One seat of a round of ``players`` (2 to 4) under ``variant`` against ``opponents``: one
    bot name (``NAME[param=value]``, every other seat) or one per other seat in seat order.

    ``seat`` fixes the learning seat (``None``: a seat drawn each episode; seat 0 moves first).
    Reference bots with numba policies play in this process unless ``hosted``; any other
    installed bot plays in its host under ``sandbox`` with ``move_time`` seconds a move.
    Observations are ``float32[184]``, actions ``Discrete(41)``; the episode's reward is the
    seat's share of the round (+1 won, -1 lost with two players), and an illegal action ends it
    with -1. ``reset``'s options may give a ``"deck"`` (16 cards, top first) and a ``"seat"``.
    A round that ends before the learning seat's first move has nothing to learn from, and is
    dealt again. ``render_mode`` is ``"ansi"`` or ``"human"`` (the table as text).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        opponents: str | Sequence[str] = "random",
        players: int = 2,
        variant: str = "classic",
        seat: int | None = None,
        render_mode: str | None = None,
        hosted: bool | None = None,
        sandbox: str = "auto",
        move_time: float | None = 1.0,
    ) -> None:
        rules = checked_seating(players, variant, seat)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ArenaError(f"unknown render_mode {render_mode!r} (known: ansi, human, or None)")
        self.players = players
        self.variant = rules
        self.seat = seat
        self.render_mode = render_mode
        self.table = _table(
            _opponent_names(opponents, players), players, rules, hosted, sandbox, move_time
        )
        self.observation_space = spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._seat = 0
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._over = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a round and play the bots up to the learning seat's first move; its observation
        and ``{"seat", "action_mask"}``."""
        super().reset(seed=seed)
        options = options or {}
        deck = options.get("deck")
        for _ in range(MAX_REDEALS):
            seat = options.get("seat", self.seat)
            if seat is None:
                seat = int(self.np_random.integers(self.players))
            first = self.table.deal(int(seat), int(self.np_random.integers(2**63)), deck)
            if first is not None:
                break
            if deck is not None:
                raise ArenaError(f"on this deck the round ends before seat {seat} moves")
        else:  # pragma: no cover - a seat that never moves in a thousand deals
            raise ArenaError(f"seat {seat} never got to move in {MAX_REDEALS} deals")
        self._seat = int(seat)
        obs, self._mask = first
        self._over = False
        if self.render_mode == "human":
            self.render()
        return obs, {"seat": self._seat, "action_mask": self._mask}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action`` (an index of the action space), then the bots until the learning seat
        is to move again or the round is over."""
        if self._over:
            raise GameOverError("the round is over: call reset()")
        index = int(action)
        if not 0 <= index < N_ACTIONS or not self._mask[index]:
            self.table.forfeit()
            return self._end(ILLEGAL_REWARD, illegal=True)
        following = self.table.step(index)
        if following is None:
            return self._end(round_rewards(self.table.winners, self.players)[self._seat])
        obs, self._mask = following
        if self.render_mode == "human":
            self.render()
        return obs, 0.0, False, False, {"seat": self._seat, "action_mask": self._mask}

    def _end(
        self, reward: float, illegal: bool = False
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._over = True
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        info: dict[str, Any] = {
            "seat": self._seat,
            "action_mask": self._mask,
            "winners": self.table.winners,
        }
        if illegal:
            info["illegal_action"] = True
        if self.render_mode == "human":
            self.render()
        return self.table.final_observation(), reward, True, False, info

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans (all false once the round is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """The table as text (``"ansi"``), or printed (``"human"``); ``None`` without a mode."""
        if self.render_mode is None:
            return None
        text = self.table.table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Stop the bots' hosts, if any."""
        self.table.close()


if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(
        GYMNASIUM_ID,
        entry_point=f"{__name__}:SingleSeatEnv",
        vector_entry_point="arena.rl.vector:SingleSeatVectorEnv",  # make_vec's batched form
    )
