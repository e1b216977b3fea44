"""The ``ppo`` bot: the trained network over the arena's observation encoding.

Each move, the seat's :class:`~arena.game.Observation` becomes the same observation vector and
action mask the training environment gave (:func:`arena.rl.encoding.encode_observation` and
:func:`~arena.rl.encoding.legal_mask`, from the engine's view of the seat), the network picks an
action index, and :func:`~arena.rl.encoding.index_action` turns it into the
:class:`~arena.game.Action` the referee gets. Playing needs NumPy and the arena, nothing of
training's.
"""

from __future__ import annotations

import numpy as np

from arena.bot import Bot
from arena.game import Action, Game, Observation
from arena.rl.encoding import encode_observation, index_action, legal_mask

from .network import WEIGHTS, Network, choose


class PPOBot(Bot):
    """Plays the trained network's likeliest legal action; with ``temperature`` above 0, one
    drawn from its probabilities at that temperature (from the round's seed). ``weights`` names
    another network's ``.npz`` file to play instead of the shipped one."""

    name = "ppo"

    def __init__(
        self, temperature: float = 0.0, weights: str = "", network: Network | None = None
    ) -> None:
        super().__init__()
        if not temperature >= 0.0:  # NaN too
            raise ValueError(f"temperature must be at least 0, not {temperature}")
        self.temperature = temperature
        #: The network played: ``network`` if given (training's own), else the weights saved at
        #: ``weights`` (``python -m loveletter_ppo.train --out PATH``), else the package's.
        self.network = network if network is not None else Network.load(weights or WEIGHTS)
        self.generator = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        """Start a round: reseed the generator of the draws at a temperature."""
        super().reset(seed)
        self.generator = np.random.default_rng(seed)

    def warm_up(self) -> None:
        """Compile (or load) the encoding's kernels on a real position, before the clock runs."""
        self.act(Game(2, seed=0).observation(0))

    def act(self, observation: Observation) -> Action:
        """The network's choice among ``observation.legal_actions``."""
        seat, players = observation.seat, observation.players
        obs = encode_observation(observation)
        mask = legal_mask(observation.legal_actions, seat, players)
        index = choose(self.network, obs, mask, self.temperature, self.generator)
        return index_action(index, seat, players)
