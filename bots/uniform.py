"""``uniform``: picks uniformly among the legal actions (a baseline and a test driver)."""

from __future__ import annotations

from arena.bot import Bot
from arena.game import Action, Observation
from bots.policy import PlainBot

BOT = PlainBot("uniform", "picks uniformly among the legal actions", cls="UniformBot", order=0)


class UniformBot(Bot):
    """Chooses every legal action with equal chance, the Princess included."""

    name = "uniform"

    def act(self, observation: Observation) -> Action:
        """A uniformly random legal action."""
        return self.rng.choice(observation.legal_actions)
