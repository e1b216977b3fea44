"""A gauntlet's result per opponent: the gauntlet bot's score against each other bot with its
95% Wilson interval, read from :attr:`~leaderboard.standings.Standings.pairs` (the figures of
``arena report``'s head to head, not computed again).

The standings table ranks the field on one Elo scale; this says what the gauntlet bot did
against each opponent, the figure an ``arena match`` between the two estimates.
"""

from __future__ import annotations

from leaderboard.report_format import interval_text, pct
from leaderboard.standings import PairScore, Standings


def opponents(standings: Standings, bot: str) -> list[PairScore]:
    """``bot``'s record against each other bot of ``standings``, best score first (those
    without a counted game last, by name); empty when ``bot`` is not in them."""
    row = standings.pairs.get(bot, {})
    return sorted(
        row.values(),
        key=lambda p: (p.score is None, -(p.score or 0.0), p.opponent),
    )


def gauntlet_json(standings: Standings, bot: str) -> dict[str, object]:
    """The per-opponent figures as JSON: ``{"bot": ..., "opponents": [{"opponent": ...,
    "games", "counted", "points", "score", "lo", "hi"}, ...]}``."""
    return {
        "bot": bot,
        "opponents": [{"opponent": p.opponent, **p.to_dict()} for p in opponents(standings, bot)],
    }


def format_gauntlet(standings: Standings, bot: str) -> str:
    """The per-opponent figures as aligned text: a title line, then per opponent its name,
    the games, ``bot``'s score (percent) and its 95% interval."""
    rows = [
        [p.opponent, str(p.games), pct(p.score), interval_text(p.lo, p.hi)]
        for p in opponents(standings, bot)
    ]
    header = ["opponent", "games", "score%", "95% CI"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"{bot} against each opponent (its score, 95% interval):"]
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [row[i].rjust(widths[i]) for i in (1, 2)]
        cells.append(row[3].ljust(widths[3]))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
