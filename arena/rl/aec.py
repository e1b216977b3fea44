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
    from pettingzoo.utils.env_logger import EnvLogger
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
        self.action_spaces = {a: Actions(N_ACTIONS) for a in self.possible_agents}
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


class Actions(spaces.Discrete):
    """Gymnasium's ``Discrete`` action space whose ``sample(mask)`` draws exactly what
    Gymnasium's does (the same generator call: ``choice`` of the legal indices is ``integers``
    below their count, indexed), with the same checks of the mask, in a tenth of the time: a
    training loop that samples its random actions so pays for the game, not for the sampling."""

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        """A random action, uniform among the legal ones of ``mask`` (see Gymnasium's
        ``Discrete.sample`` for ``probability`` and no mask)."""
        if mask is None or probability is not None:
            return super().sample(mask, probability)
        assert isinstance(mask, np.ndarray), (
            f"The expected type of the sample mask is np.ndarray, actual type: {type(mask)}"
        )
        assert mask.dtype == np.int8, (
            f"The expected dtype of the sample mask is np.int8, actual dtype: {mask.dtype}"
        )
        assert mask.shape == (self.n,), (
            f"The expected shape of the sample mask is {(int(self.n),)}, actual shape: "
            f"{mask.shape}"
        )
        legal = np.flatnonzero(mask == 1)
        assert len(legal) == np.count_nonzero(mask), (
            f"All values of the sample mask should be 0 or 1, actual values: {mask}"
        )
        if not len(legal):
            return self.start
        return self.start + self.dtype.type(legal[self.np_random.integers(0, len(legal))])


#: What :class:`checked_env` refuses to give before ``reset`` (as PettingZoo's order wrapper).
_AFTER_RESET = frozenset(
    {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}
)


class checked_env(raw_env):  # noqa: N801 - named like raw_env
    """:class:`raw_env` with what PettingZoo's three usual wrappers for classic games do
    (``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``,
    ``OrderEnforcingWrapper``) done in the environment itself, call for call as they do it: an
    illegal action ends the round with -1 for its agent (PettingZoo's logger warns), an action
    outside ``Discrete(41)`` is an assertion error, ``step``, ``observe``, ``render`` and
    ``agent_iter`` before ``reset`` are PettingZoo's errors, and the round's data before
    ``reset`` an ``AttributeError``. The wrappers themselves reach every attribute through a
    chain of ``__getattr__`` calls, which cost four times the step itself."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._has_reset = False
        del self.agents  # as the order wrapper: no agents before reset

    def __getattr__(self, name: str) -> Any:
        if name in _AFTER_RESET and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """:meth:`raw_env.reset`."""
        self._has_reset = True
        super().reset(seed=seed, options=options)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """:meth:`raw_env.observe` (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return super().observe(agent)

    def render(self) -> str | None:
        """:meth:`raw_env.render` (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """PettingZoo's agent iterator (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return super().agent_iter(max_iter)

    def step(self, action: int | None) -> None:
        """Play ``action`` for the agent to move, as the three wrappers would pass it on."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        assert (action is None and dead) or _in_actions(action), "action is not in action space"
        if dead:
            super().step(action)  # a dead agent's step, however its round ended
            return
        assert self._current is not None
        if not self._current["action_mask"][action]:
            EnvLogger.warn_on_illegal_move()
            self._cumulative_rewards[agent] = 0
            self.terminations = dict.fromkeys(self.agents, True)
            self.truncations = dict.fromkeys(self.agents, True)
            self.rewards = dict.fromkeys(self.truncations, 0)
            self.rewards[agent] = -1.0
            self._accumulate_rewards()
            self._deads_step_first()
            return
        super().step(action)


def _in_actions(action: Any) -> bool:
    """Whether ``action`` is in ``Discrete(41)``, as Gymnasium's ``Discrete.contains`` says (a
    Python or NumPy integer, or a zero-dimensional integer array)."""
    if isinstance(action, int | np.integer):
        return bool(0 <= action < N_ACTIONS)
    if isinstance(action, np.ndarray) and action.shape == ():
        return np.issubdtype(action.dtype, np.integer) and bool(0 <= int(action) < N_ACTIONS)
    return False


def env(**kwargs: Any) -> Any:
    """The environment as PettingZoo's classic games give it, with their usual wrappers'
    behaviour (:class:`checked_env`: an illegal action ends the round with reward -1 for its
    agent, others 0; an action outside ``Discrete(41)`` is an assertion error; calls out of
    order, ``step`` before ``reset``, are refused). ``kwargs`` are :class:`raw_env`'s."""
    return checked_env(**kwargs)
