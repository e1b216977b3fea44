"""Numbers, dates and names as the reports print them (text and HTML alike).

Small pure functions shared by :mod:`leaderboard.report` (terminal and JSON) and
:mod:`leaderboard.report_html` (the page), so both say the same thing the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from leaderboard.standings import Standing, Standings
from leaderboard.store import StoredGame

__all__ = [
    "config_value",
    "date_text",
    "elo_interval_text",
    "elo_text",
    "faults_text",
    "fit_notes",
    "fit_summary",
    "games_span",
    "interval_text",
    "pct",
    "seconds_text",
    "shorten_middle",
]


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by replacing its middle with "…".

    The middle goes rather than the end because bot names differ at both ends: the bot at the
    start, its parameters at the end (``strategic:depth=2,seed=1``).
    """
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    keep = width - 1
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def elo_text(x: float | None) -> str:
    """An Elo rating rounded to a whole number, or "-"."""
    return "-" if x is None else f"{x:.0f}"


def elo_interval_text(s: Standing) -> str:
    """``[lo, hi]`` of a rating, ``?`` for an unbounded end, empty when unrated."""
    if s.elo is None:
        return ""
    lo = "?" if s.elo_lo is None else elo_text(s.elo_lo)
    hi = "?" if s.elo_hi is None else elo_text(s.elo_hi)
    return f"[{lo}, {hi}]"


def pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage without the sign, or "-"."""
    return "-" if x is None else f"{100.0 * x:.{digits}f}"


def interval_text(lo: float | None, hi: float | None, digits: int = 1) -> str:
    """``[lo, hi]`` of a proportion in percent, empty when unknown."""
    if lo is None or hi is None:
        return ""
    return f"[{pct(lo, digits)}, {pct(hi, digits)}]"


def faults_text(s: Standing) -> str:
    """The fault count, with "DQ" for a disqualified bot."""
    return f"{s.faults} DQ" if s.disqualified else str(s.faults)


def seconds_text(x: float | None) -> str:
    """A duration for people: ms below a second, s below two minutes, then min/h."""
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0.0:
        return "0 s"
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    if x < 1.0:
        return f"{x * 1e3:.1f} ms"
    if x < 120.0:
        return f"{x:.1f} s"
    minutes, sec = divmod(round(x), 60)
    if minutes < 120:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _utc(when: datetime) -> datetime:
    """``when`` as an aware UTC datetime (a naive one is taken to be UTC already)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def date_text(when: datetime | None) -> str:
    """A datetime as ``YYYY-MM-DD HH:MM:SS UTC``, or "-" (a naive one is taken as UTC)."""
    return "-" if when is None else _utc(when).strftime("%Y-%m-%d %H:%M:%S UTC")


def games_span(games: Sequence[StoredGame]) -> str:
    """When the first and the last of ``games`` were stored and the time between, or "-"."""
    if not games:
        return "-"
    times = [_utc(g.created) for g in games]
    first, last = min(times), max(times)
    return (
        f"{date_text(first)} to {date_text(last)} ({seconds_text((last - first).total_seconds())})"
    )


def config_value(configuration: dict[str, Any], *keys: str) -> str:
    """The first of ``keys`` in the configuration as text: "none" for a null value (no limit),
    "-" when none of the keys is there."""
    for key in keys:
        if key in configuration:
            value = configuration[key]
            if value is None:
                return "none"
            return value if isinstance(value, str) else json.dumps(value, default=str)
    return "-"


def fit_notes(standings: Standings) -> list[str]:
    """Sentences describing the rating fit and the columns, shared by the table and report."""
    fit = standings.ratings
    notes = [
        f"Elo: one Bradley-Terry/Luce maximum-likelihood fit over {fit.games} rated games; "
        f"95% intervals are cluster-robust with the deck as the unit ({fit.units} units)."
    ]
    if fit.anchor is not None:
        notes.append(f"The scale is anchored: {fit.anchor} is {fit.base:g}.")
    else:
        notes.append(f"The scale is centred: the mean rating is {fit.base:g}.")
    if fit.units < 2 and fit.games:
        notes.append("Fewer than two units: rating intervals are unbounded (shown as ?).")
    if fit.ridge > 0:
        notes.append(
            f"A perfect record made the plain fit infinite, so a ridge of {fit.ridge:g} was "
            "used; intervals of the bots concerned are too narrow."
        )
    skipped = standings.games - standings.rated_games
    if skipped:
        notes.append(f"{skipped} game(s) without a valid result are not rated.")
    return notes


def fit_summary(standings: Standings) -> str:
    """One line on the rating fit: games, units, ridge, anchor."""
    fit = standings.ratings
    anchor = f"anchor {fit.anchor} = {fit.base:g}" if fit.anchor else f"mean {fit.base:g}"
    return (
        f"{fit.games} games, {fit.units} deck units, ridge {fit.ridge:g}, {anchor}, 95% intervals"
    )
