"""What the Gymnasium environment plays against: a round's other seats, played by bots until the
learning seat is to move.

Two kinds exist: :class:`~arena.rl.compiled_table.CompiledTable` (reference bots' numba policies,
inside the engine) and :class:`~arena.rl.hosted_table.HostedTable` (installed bots in their
hosts, through the referee).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from arena.game.variants import Variant

#: The learning seat's observation vector and action mask.
Observed = tuple[np.ndarray, np.ndarray]


class SeatTable(ABC):
    """A table of ``players`` seats under ``variant`` where one seat learns and bots play the
    others: ``opponents`` lists the bots in seat order, the learning seat left out."""

    players: int
    variant: Variant
    opponents: tuple[str, ...]

    @abstractmethod
    def deal(self, seat: int, seed: int, deck: Sequence[int] | None = None) -> Observed | None:
        """Start a round (``deck`` top card first, or shuffled from ``seed``; seat 0 first) with
        the learner in ``seat``; the bots play until the learner is to move. Returns its
        observation and mask, or ``None`` if the round ended before its first move."""

    @abstractmethod
    def step(self, index: int) -> Observed | None:
        """Play the learner's legal action ``index``, then the bots until it is to move again;
        its observation and mask, or ``None`` once the round is over."""

    @abstractmethod
    def forfeit(self) -> None:
        """The learner gives the round up (it answered an illegal action, or the environment
        is reset or closed mid-round); the round is over once this returns."""

    @abstractmethod
    def final_observation(self) -> np.ndarray:
        """The learner's observation vector once the round is over."""

    @property
    @abstractmethod
    def winners(self) -> tuple[int, ...]:
        """The winning seats of the round just over."""

    @abstractmethod
    def table_text(self) -> str:
        """The table as text, for ``render()``: every hand, and the moves since the learner's
        last decision."""

    def close(self) -> None:  # noqa: B027 - a table of kernels holds nothing to release
        """Release what the table holds (processes, threads)."""
