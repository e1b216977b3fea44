"""The opening table: the first decision of a ``huibers`` round for every hand (the layout of
Huibers 2016, Table 4)."""

from __future__ import annotations

from typing import Any

from solver.index import opening_counts, opening_hands, state_index
from solver.table import DPTable

#: The Guard and the Prince, whose rows carry a guess and a target.
_GUARD = 1
_PRINCE = 5


def opening_rows(table: DPTable) -> list[dict[str, Any]]:
    """One row per hand ``b1 <= b2`` the deck can deal, at the first decision (n = 14).

    Each row is ``{"n", "b1", "b2", "chance", "play", "guess", "target"}``: the chance rounded to
    6 decimals, the card to play, the Guard's guess (``None`` unless the Guard is played) and the
    Prince's target (1 the opponent, 2 itself; ``None`` unless the Prince is played).
    """
    rows = []
    for b1, b2 in opening_hands():
        a = opening_counts(b1, b2)
        index = state_index(b1, b2, 0, a, 0, 0, 0)
        card, guess, target = table.choice(index)
        rows.append(
            {
                "n": int(a.sum()),
                "b1": b1,
                "b2": b2,
                "chance": round(float(table.chance[index]), 6),
                "play": card,
                "guess": guess if card == _GUARD else None,
                "target": target if card == _PRINCE else None,
            }
        )
    return rows
