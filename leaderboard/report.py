"""The report of a tournament as text for a terminal and as JSON for machines.

:func:`format_table` renders :class:`~leaderboard.standings.Standings` as aligned text;
:func:`report_text` is the whole text report of ``arena report`` (standings, head to head,
likelihood of superiority, faults, provenance and entrants) and :func:`report_json` the same
as JSON, with the figures of :func:`analyse` (ratings as games came in, results by seat, card
plays). :func:`deck_summary` and :func:`deck_note` say whether the decks were public or
secret, and publish a secret seed once the tournament is finished, never before. The HTML
page is :mod:`leaderboard.report_html`. Importing this module loads no plotting library. See
``docs/reports.md``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.decks.specs import is_secret_spec, reproducible_spec
from leaderboard.card_plays import PlayStats, card_plays
from leaderboard.rating_history import RatingHistory, rating_history
from leaderboard.report_format import (
    config_value,
    date_text,
    elo_interval_text,
    elo_text,
    faults_text,
    fit_notes,
    games_span,
    interval_text,
    pct,
    shorten_middle,
)
from leaderboard.seat_results import SeatResults, seat_results
from leaderboard.standings import Standings
from leaderboard.store import StoredGame, TournamentDetail

__all__ = [
    "RANKED_DECKS",
    "TABLE_WIDTH",
    "ReportAnalysis",
    "analyse",
    "deck_note",
    "deck_summary",
    "format_table",
    "report_data",
    "report_json",
    "report_text",
    "sandbox_note",
    "sandbox_runs",
    "secret_text",
    "teams_summary",
    "teams_text",
]

#: The deck set recommended for ranked play, named where a report marks public decks.
RANKED_DECKS = "balanced:36"

#: The width :func:`format_table` and :func:`report_text` fit their text into, in columns.
TABLE_WIDTH = 100
_MIN_NAME = 12


@dataclass(frozen=True)
class ReportAnalysis:
    """The figures a report adds to the standings: the ratings on prefixes of the stored
    games (:func:`~leaderboard.rating_history.rating_history`), results by seat
    (:func:`~leaderboard.seat_results.seat_results`) and each bot's card plays and knockouts
    (:func:`~leaderboard.card_plays.card_plays`)."""

    history: RatingHistory
    seats: SeatResults
    plays: dict[str, PlayStats]


def analyse(games: Sequence[StoredGame], standings: Standings, players: int) -> ReportAnalysis:
    """The :class:`ReportAnalysis` of a tournament's stored ``games`` (in stored order) at
    tables of ``players``; ``standings`` are theirs (its fit is the history's last point, with
    the same anchor)."""
    fit = standings.ratings
    return ReportAnalysis(
        history=rating_history(
            games,
            anchor=fit.anchor,
            anchor_elo=fit.base,
            final=fit if standings.rated_games else None,
        ),
        seats=seat_results(games, players),
        plays=card_plays(games),
    )


# --------------------------------------------------------------------------- decks


def deck_summary(detail: TournamentDetail) -> dict[str, Any]:
    """What the report says about the decks, JSON-ready: ``spec`` (the deck set as given),
    ``count``, ``public`` (whether a bot could know the decks in advance: every deck set but
    a secret ``balanced:N`` or ``random:N``), ``seed`` (a secret set's seed, the tournament's
    secret, as a decimal string once the tournament is finished; else ``None``), ``reproduce``
    (the public spec that gives the same decks, with that seed) and ``orders`` (the decks,
    card values top first; ``None`` while a secret set's tournament is not finished)."""
    spec = str(detail.configuration.get("decks", "")) or None
    seed = detail.published_seed if detail.secret_decks else None
    reproduce = None
    if seed is not None and spec is not None and is_secret_spec(spec):
        reproduce = reproducible_spec(spec, seed)
    return {
        "spec": spec,
        "count": len(detail.decks),
        "public": not detail.secret_decks,
        "seed": None if seed is None else str(seed),
        "reproduce": reproduce,
        "orders": [list(d) for d in detail.decks] if detail.decks_revealed else None,
    }


def deck_note(detail: TournamentDetail) -> str:
    """One sentence on the decks: public ones are marked as such (not for ranked play); a
    secret set's seed is promised while the tournament runs and published once it is
    finished."""
    summary = deck_summary(detail)
    spec = summary["spec"] or "unnamed"
    if summary["public"]:
        return (
            f"Public decks ({spec}): a bot could know every deck in advance, so these results "
            f"suit research, not ranked play (use {RANKED_DECKS}; docs/decks.md)."
        )
    if summary["seed"] is None:
        return (
            f"Secret decks ({spec}), drawn from a seed that no bot can see; it is published "
            "here once the tournament is finished."
        )
    return (
        f"Secret decks ({spec}), drawn from seed {summary['seed']}, published now that the "
        f"tournament is finished: `arena decks show {summary['reproduce']}` lists them."
    )


def secret_text(detail: TournamentDetail) -> str:
    """The tournament's secret seed as the report shows it: published once the tournament is
    finished, promised before (or said to be missing, for a tournament stored before
    tournaments had secrets, whose games' seeds derive from its public seed)."""
    if detail.published_seed is not None:
        return (
            f"{detail.published_seed} (every game's seed derives from it and the game's key; "
            "--secret replays the tournament)"
        )
    if detail.status == "finished":
        return "none (stored before tournaments had secrets: seeds derive from the seed)"
    return "kept from every bot; published here once the tournament is finished"


def sandbox_runs(detail: TournamentDetail) -> str:
    """How the bots ran, run by run where that changed: the sandbox, each bot's limits and
    what enforced them (or that no run recorded it, for tournaments of older versions)."""
    from arena.hosting.sandbox import describe_enforcement

    lines = list(dict.fromkeys(describe_enforcement(s) for s in detail.sandboxes))
    return "; then ".join(lines) if lines else "not recorded (a tournament of an older version)"


def sandbox_note(detail: TournamentDetail) -> str:
    """:func:`sandbox_runs` as a sentence for the text report."""
    return f"Bots ran in: {sandbox_runs(detail)}."


def teams_summary(detail: TournamentDetail) -> dict[str, Any] | None:
    """The tournament's teams (``arena tournament --teams``): ``from`` (their source) and
    ``teams`` (each team with two entrants or more, its entrants), or ``None`` when none were
    given."""
    given = (detail.configuration or {}).get("teams")
    if not given:
        return None
    members: dict[str, list[str]] = {}
    for name, team in given.get("of", {}).items():
        members.setdefault(team, []).append(name)
    shared = {team: sorted(names) for team, names in sorted(members.items()) if len(names) > 1}
    return {"from": given.get("from"), "teams": shared}


def teams_text(detail: TournamentDetail) -> str:
    """What the report says of teams: by which source no table seated two bots of one team,
    or that none were given, so that bots of one owner may have played each other."""
    summary = teams_summary(detail)
    if summary is None:
        return (
            "no teams given: bots of one owner may have played each other, and one may have "
            "fed another (arena tournament --teams)"
        )
    shared = summary["teams"]
    return f"from {summary['from']}: no table seated two bots of one team" + (
        f" ({len(shared)} teams of two bots or more)" if shared else " (every bot alone)"
    )


# --------------------------------------------------------------------------- terminal


def format_table(standings: Standings, width: int = TABLE_WIDTH) -> str:
    """The leaderboard as aligned text for a terminal, fitted into ``width`` columns.

    Columns: rank, bot, Elo with its 95% interval, games, wins/draws/losses, score (percent)
    with its 95% Wilson interval, faults ("DQ" marks a disqualified bot). Bot names longer than
    the space left are shortened in the middle (:func:`shorten_middle`); unbounded interval
    ends show as ``?``, unrated bots as ``-``. Notes on the fit follow the table.
    """
    header = ["#", "bot", "Elo", "95% CI", "games", "W/D/L", "score%", "95% CI", "faults"]
    right = [True, False, True, False, True, True, True, False, True]
    rows = [
        [
            "" if s.rank is None else str(s.rank),
            s.bot,
            elo_text(s.elo),
            elo_interval_text(s),
            str(s.games),
            f"{s.wins}/{s.draws}/{s.losses}",
            pct(s.score),
            interval_text(s.score_lo, s.score_hi),
            faults_text(s),
        ]
        for s in standings.standings
    ]
    gap = "  "
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    others = sum(w for i, w in enumerate(widths) if i != 1) + len(gap) * (len(header) - 1)
    widths[1] = min(widths[1], max(_MIN_NAME, width - others))
    lines = []
    for row in [header, *rows]:
        cells = []
        for i, cell in enumerate(row):
            text = shorten_middle(cell, widths[i]) if i == 1 else cell
            cells.append(text.rjust(widths[i]) if right[i] else text.ljust(widths[i]))
        lines.append(gap.join(cells).rstrip())
    lines.insert(1, "-" * min(width, max(len(line) for line in lines)))
    if not rows:
        lines.append("(no games)")
    notes = " ".join(fit_notes(standings)) if standings.games else ""
    if notes:
        lines.append("")
        lines.extend(textwrap.wrap(notes, width=width, break_on_hyphens=False))
    return "\n".join(lines)


def _matrix(title: str, bots: Sequence[str], cell: Any) -> list[str]:
    """A square table of ``bots`` (rows named, columns numbered by row) under ``title``;
    ``cell(a, b)`` is the proportion in row ``a``, column ``b`` (``None`` shows "-")."""
    width = min(max(len(b) for b in bots), 30)
    lines = ["", title, " " * (width + 3) + " ".join(f"{k + 1:>5}" for k in range(len(bots)))]
    for k, bot in enumerate(bots):
        cells = []
        for other in bots:
            value = None if other == bot else cell(bot, other)
            cells.append("    -" if value is None else f"{100 * value:5.1f}")
        lines.append(f"{k + 1:>2} {shorten_middle(bot, width):<{width}}" + " ".join(cells))
    return lines


def _fault_lines(standings: Standings) -> list[str]:
    """Every bot's faults by kind with its example messages, or a line saying there were
    none."""
    noted = [f for f in standings.faults.values() if f.by_kind]
    if not noted:
        return ["", "faults: none"]
    lines = ["", "faults (kind count; examples: game key, actions before the fault, message):"]
    for summary in noted:
        kinds = ", ".join(f"{kind} {n}" for kind, n in summary.by_kind.items())
        dq = " (disqualified)" if summary.disqualified else ""
        lines.append(f"  {summary.bot}{dq}: {summary.total} faults; {kinds}")
        for e in summary.examples:
            lines.append(f"    {e.kind} in {e.game} after {e.move} actions: {e.message}")
    return lines


def _provenance_lines(detail: TournamentDetail, games: Sequence[StoredGame]) -> list[str]:
    """The configuration, versions, dates and entrants."""
    config = detail.configuration or {}
    facts = [
        ("deck set", f"{config_value(config, 'decks')} ({len(detail.decks)} decks)"),
        ("repeats", config_value(config, "repeat", "repeats")),
        ("move time (s)", config_value(config, "move_time")),
        ("fault limit", config_value(config, "max_faults")),
        ("seed", str(detail.seed)),
        ("secret", secret_text(detail)),
        ("variant", f"{detail.variant}, {detail.players} per table"),
        ("arena version", detail.arena_version),
        ("created", date_text(detail.created)),
        ("updated", date_text(detail.updated)),
        ("games stored", f"{len(games)}, {games_span(games)}"),
    ]
    shown = {"decks", "repeat", "repeats", "move_time", "max_faults", "bots", "players"}
    facts += [(key, config_value(config, key)) for key in sorted(config) if key not in shown]
    lines = ["", "provenance:"]
    lines += [f"  {key}: {value}" for key, value in facts]
    lines.append("entrants (name: bot, plugin, distribution version, parameters[, team]):")
    team_of = (config.get("teams") or {}).get("of", {})
    for e in detail.entrants:
        params = json.dumps(e.parameters, sort_keys=True, default=str)
        team = f", team {team_of[e.name]}" if e.name in team_of else ""
        lines.append(
            f"  {e.name}: {e.bot}, plugin {e.plugin or '-'}, "
            f"{e.distribution or '-'} {e.version or '-'}, {params}{team}"
        )
    return lines


def _fill(text: str) -> str:
    """``text`` wrapped to :data:`TABLE_WIDTH` columns."""
    return textwrap.fill(text, width=TABLE_WIDTH, break_on_hyphens=False)


def report_text(detail: TournamentDetail, games: Sequence[StoredGame], standings: Standings) -> str:
    """The text report of ``arena report``: a line on the tournament, the deck and sandbox
    notes, :func:`format_table`, the head-to-head and likelihood-of-superiority matrices of
    the rated bots (percent), faults, and provenance (configuration, arena version, dates,
    the span of the stored games, every entrant's bot, plugin, distribution, version and
    parameters)."""
    lines = [
        f"tournament {detail.id}: {detail.name} [{detail.status}]; "
        f"decks {detail.configuration.get('decks', '?')} ({len(detail.decks)}), "
        f"variant {detail.variant}, {detail.players} per table, seed {detail.seed}, "
        f"{len(games)} games",
        _fill(deck_note(detail)),
        _fill(sandbox_note(detail)),
        _fill(f"Teams: {teams_text(detail)}."),
        format_table(standings),
    ]
    bots = [line.bot for line in standings.standings if line.elo is not None]
    if len(bots) > 1:

        def pair(a: str, b: str) -> float | None:
            found = standings.pairs.get(a, {}).get(b)
            return None if found is None else found.score

        lines += _matrix("head to head (row's score against column, %):", bots, pair)
        lines += _matrix(
            "likelihood of superiority (chance that row is stronger than column, %):",
            bots,
            lambda a, b: standings.los.get(a, {}).get(b),
        )
    lines += _fault_lines(standings)
    lines += _provenance_lines(detail, games)
    return "\n".join(lines)


def report_data(
    detail: TournamentDetail,
    games: Sequence[StoredGame],
    standings: Standings,
    analysis: ReportAnalysis | None = None,
) -> dict[str, Any]:
    """The report as a JSON-ready dict: ``tournament`` (its id) and ``settings``
    (:func:`~leaderboard.settings.with_settings`, as every ``--json`` about a tournament has
    them), ``status``, ``updated``, ``configuration`` (the whole stored configuration),
    ``decks`` (:func:`deck_summary`), ``secret`` (the tournament's secret seed as a decimal
    string once it is finished, else ``None``), ``teams`` (:func:`teams_summary`),
    ``entrants`` (each with ``name``, ``bot``, ``plugin``, ``distribution``, ``version``,
    ``parameters``), ``stored`` (when the
    ``first`` and the ``last`` game were stored), every key of :meth:`Standings.to_dict`, and the
    :class:`ReportAnalysis` figures ``history``, ``seats`` and ``plays`` (made here when
    ``analysis`` is not given)."""
    from leaderboard.settings import with_settings

    analysis = analysis or analyse(games, standings, detail.players)
    times = sorted(g.created for g in games)
    data = {
        "status": detail.status,
        "updated": detail.updated.isoformat(),
        "configuration": detail.configuration,
        "decks": deck_summary(detail),
        "secret": None if detail.published_seed is None else str(detail.published_seed),
        "teams": teams_summary(detail),
        "entrants": [
            {
                "name": e.name,
                "bot": e.bot,
                "plugin": e.plugin,
                "distribution": e.distribution,
                "version": e.version,
                "parameters": e.parameters,
            }
            for e in detail.entrants
        ],
        "stored": {
            "first": times[0].isoformat() if times else None,
            "last": times[-1].isoformat() if times else None,
        },
        **standings.to_dict(),
        "history": analysis.history.to_dict(),
        "seats": analysis.seats.to_dict(),
        "plays": {b: s.to_dict() for b, s in _in_order(analysis.plays, standings.bots)},
    }
    return with_settings(detail, data)


def _in_order(stats: Mapping[str, PlayStats], order: Sequence[str]) -> list[tuple[str, PlayStats]]:
    """``stats`` as pairs in ``order`` (bots not in it after, by name)."""
    rest = sorted(set(stats) - set(order))
    return [(b, stats[b]) for b in [*order, *rest] if b in stats]


def report_json(
    detail: TournamentDetail,
    games: Sequence[StoredGame],
    standings: Standings,
    analysis: ReportAnalysis | None = None,
) -> str:
    """:func:`report_data` as strict JSON (no NaN or Infinity)."""
    return json.dumps(report_data(detail, games, standings, analysis), allow_nan=False, default=str)
