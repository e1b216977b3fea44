"""The PettingZoo environment: one round of Love Letter as an AEC (agent-environment cycle)
environment, following PettingZoo's classic card games.

``env(players=2, variant="classic", render_mode=None)`` is the wrapped environment (an illegal
action ends the round with reward -1 for its player, an action outside the space is an error,
calls out of order are refused); :class:`raw_env` is the environment itself. Agents are
``player_0`` .. ``player_{n-1}`` (seat order; ``player_0`` moves first unless ``reset``'s
options say otherwise). An observation is ``{"observation": float32[184], "action_mask":
int8[41]}`` (:mod:`arena.rl.encoding`), the agent's own view only; the action space is
``Discrete(41)``. Rewards come at the round's end (:func:`arena.rl.round.round_rewards`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from arena.errors import ArenaError, IllegalActionError
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE
from arena.rl.extra import missing_extra
from arena.rl.render import table_text
from arena.rl.round import EncodedRound

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as exc:
    raise missing_extra("arena.rl's PettingZoo environment", exc) from None

#: The environment's name and version, as PettingZoo names its environments.
ENV_NAME = "love_letter_v0"
#: ``render()``'s modes: the table as text, returned or printed.
RENDER_MODES = ["ansi", "human"]


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's name for the unwrapped environment
    """One round of Love Letter between ``players`` agents (2 to 4) under ``variant``
    (``classic`` or ``huibers``); ``render_mode`` is ``None``, ``"ansi"`` (``render()`` returns
    the table as text) or ``"human"`` (it prints it, after every step too).

    ``reset(seed=None, options=None)``: a seed starts the deck generator again (the same seed,
    the same deals); without one the next deal follows from the last seed (or from the
    operating system's entropy if never seeded). ``options`` may give ``"deck"`` (16 cards, top
    first, as ``arena play --deck``) and ``"first"`` (the seat to move first, default 0).
    """

    metadata = {  # noqa: RUF012 - PettingZoo reads it from the class
        "render_modes": RENDER_MODES,
        "name": ENV_NAME,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self, players: int = 2, variant: str = "classic", render_mode: str | None = None
    ) -> None:
        super().__init__()
        if not isinstance(players, int) or isinstance(players, bool):
            raise ArenaError(f"players must be an int from 2 to 4, not {players!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            modes = ", ".join(RENDER_MODES)
            raise ArenaError(f"unknown render_mode {render_mode!r} (known: {modes}, or None)")
        self.game = EncodedRound(players, variant)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self._seats = {agent: s for s, agent in enumerate(self.possible_agents)}
        space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._seeded = False
        self._current: dict[str, np.ndarray] | None = None
        self._final: dict[str, dict[str, np.ndarray]] | None = None
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> Any:
        """The observation space of ``agent`` (the same for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        """The action space of ``agent``: ``Discrete(41)``."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new round (see the class docstring for ``seed`` and ``options``)."""
        if seed is not None:
            self.game.seed(int(seed))
            self._seeded = True
        elif not self._seeded:
            self.game.seed(int.from_bytes(os.urandom(8), "little"))
            self._seeded = True
        options = options or {}
        obs, mask = self.game.deal(options.get("deck"), int(options.get("first", 0)))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.turn]
        self._current = {"observation": obs, "action_mask": mask}
        self._final = None
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` knows now: its observation vector and its action mask (all zero
        unless it is to move)."""
        if agent == self.agent_selection and self._current is not None:
            return self._current
        if self._final is not None:
            return self._final[agent]
        obs, mask = self.game.observe(self._seats[agent])
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index of the action space) for the agent to move; ``None`` for an
        agent whose round is over. An action the rules do not allow now raises
        :class:`~arena.errors.IllegalActionError` here (``env()``'s wrapper ends the round with
        -1 for that agent instead)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} is to move: step() needs an action, not None")
        following = self.game.step(int(action))
        # Rewards come only at the end, so every cumulative reward is 0 until then.
        if following is not None:
            seat, obs, mask = following
            self._current = {"observation": obs, "action_mask": mask}
            self.agent_selection = self.possible_agents[seat]
        else:
            self._end()
        if self.render_mode == "human":
            self.render()

    def _end(self) -> None:
        """The round is over: every agent gets its reward, its last observation and the result."""
        names = self.possible_agents
        obs, mask = self.game.observe_all()
        self._final = {
            agent: {"observation": obs[s], "action_mask": mask[s]} for s, agent in enumerate(names)
        }
        self._current = None
        ended = {
            "winners": [names[s] for s in self.game.winners],
            "end_reason": self.game.end_reason,
        }
        self.rewards = dict(zip(names, self.game.rewards(), strict=True))
        self.terminations = dict.fromkeys(names, True)
        self.infos = {agent: dict(ended) for agent in names}
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The table as text (``"ansi"``), or printed (``"human"``); ``None`` without a mode."""
        if self.render_mode is None:
            return None
        text = table_text(self.game, self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release (no window, no process)."""


def env(**kwargs: Any) -> Any:
    """The environment with PettingZoo's usual wrappers for classic games: an illegal action
    ends the round with reward -1 for its agent (others 0), an action outside ``Discrete(41)``
    is an assertion error, and calls out of order (``step`` before ``reset``) are refused.
    ``kwargs`` are :class:`raw_env`'s."""
    wrapped = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
