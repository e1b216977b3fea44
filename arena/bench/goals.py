"""The goals ``arena bench`` holds its figures to, and the check of a measured figure against one.

A goal is a comparison with a number (``engine_rounds_per_s >= 1,000,000``) or with a share of
another figure of the same run (``field_30_games_per_s >= half of field_5_games_per_s``); the
check is a pure function of the goal and the figures measured.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Comparison = Literal[">=", ">", "<=", "<"]

#: What a figure's check found: the goal held, did not, could not be checked (it is relative to a
#: figure this run did not measure), or there is none.
Status = Literal["met", "missed", "unchecked", "no goal"]

_COMPARE: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


@dataclass(frozen=True)
class Goal:
    """A figure's goal: the figure ``op`` a bound, the bound being ``value`` itself or, with
    ``of``, ``value`` times the figure ``of`` names in the same run (``Goal(">=", 0.5,
    of="field_5_games_per_s")``). ``note`` adds words to the human text."""

    op: Comparison
    value: float
    of: str | None = None
    note: str = ""

    def __str__(self) -> str:
        """The human text: ``>= 1,000,000``, ``<= 1.0``, ``>= half of field_5_games_per_s``."""
        if self.of is None:
            text = f"{self.op} {self.value:,}"
        elif self.value == 0.5:
            text = f"{self.op} half of {self.of}"
        else:
            text = f"{self.op} {self.value:g} x {self.of}"
        return f"{text} ({self.note})" if self.note else text

    def bound(self, figures: Mapping[str, float]) -> float | None:
        """The number the figure is compared with; ``None`` when the goal is relative to a
        figure not in ``figures``."""
        if self.of is None:
            return self.value
        if self.of not in figures:
            return None
        return self.value * figures[self.of]

    def to_json(self) -> dict[str, Any]:
        """The goal in ``arena bench --json``: ``op``, ``value``, ``of`` and the human ``text``."""
        return {"op": self.op, "value": self.value, "of": self.of, "text": str(self)}


@dataclass(frozen=True)
class Verdict:
    """A measured figure against its goal: the ``status`` and the ``bound`` it was compared
    with (``None`` when there was no goal or it could not be checked)."""

    status: Status
    bound: float | None


def judge(goal: Goal | None, figure: float, figures: Mapping[str, float]) -> Verdict:
    """Check ``figure`` against ``goal``, with the run's ``figures`` for a relative goal."""
    if goal is None:
        return Verdict("no goal", None)
    bound = goal.bound(figures)
    if bound is None:
        return Verdict("unchecked", None)
    return Verdict("met" if _COMPARE[goal.op](figure, bound) else "missed", bound)
