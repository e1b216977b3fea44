"""The base class for bots written in Python."""

from __future__ import annotations

import random

from arena.game import Action, Observation


class Bot:
    """A Love Letter bot: subclass it and implement :meth:`act`.

    The referee calls :meth:`reset` with a fresh seed at the start of every round, so a bot that
    draws its randomness from ``self.rng`` plays the same way for the same seed.
    """

    #: Name used when no other is given.
    name = "bot"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def reset(self, seed: int) -> None:
        """Start a new round: reseed ``self.rng``."""
        self.rng = random.Random(seed)

    def act(self, observation: Observation) -> Action:
        """Return one of ``observation.legal_actions``."""
        raise NotImplementedError
