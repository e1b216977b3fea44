"""The HTML report: one self-contained page (no external CSS, scripts, fonts or images; the
plots are inline SVG) for a person to read and share.

:func:`render_html` fills ``templates/report.html`` (Jinja2, autoescaping on: bot names, fault
messages, plugin data and the configuration come from third parties). Each ``_..._rows``
helper turns one section's figures into the strings the template prints. See
``docs/reports.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
from markupsafe import Markup

from arena.referee.records import FAULT_KINDS
from leaderboard.card_plays import CARDS, PlayStats, card_name
from leaderboard.report import (
    ReportAnalysis,
    analyse,
    deck_note,
    deck_summary,
    sandbox_runs,
    secret_text,
    teams_text,
)
from leaderboard.report_format import (
    config_value,
    date_text,
    elo_interval_text,
    elo_text,
    faults_text,
    fit_notes,
    fit_summary,
    games_span,
    interval_text,
    pct,
    seconds_text,
    shorten_middle,
)
from leaderboard.report_pages import PagePlan, pair_key, plan_pages
from leaderboard.report_plots import (
    HISTORY_PANELS,
    elo_plot_svg,
    first_seat_svg,
    rating_history_svg,
)
from leaderboard.seat_results import SeatResults, SeatScore
from leaderboard.standings import Standings
from leaderboard.store import StoredGame, TournamentDetail

__all__ = ["render_html"]

_NAME = 40


def _mix(colour: tuple[int, int, int], weight: float) -> str:
    """``colour`` mixed with white (``weight`` 0 is white, 1 the colour) as CSS ``rgb()``."""
    w = min(max(weight, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * w) for c in colour)
    return f"rgb({r}, {g}, {b})"


def _heat(x: float | None, centre: float = 0.5) -> str:
    """A light diverging background for a proportion: blue above ``centre``, red below, white
    at ``centre`` and for unknown values."""
    if x is None or not math.isfinite(x):
        return "rgb(255, 255, 255)"
    t = (x - centre) / (1.0 - centre if x > centre else centre)
    return _mix((33, 102, 172) if t > 0 else (178, 24, 43), 0.6 * abs(t))


def _environment() -> jinja2.Environment:
    """A Jinja environment over ``leaderboard/templates`` with autoescaping always on."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("leaderboard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _standing_rows(standings: Standings) -> list[dict[str, Any]]:
    """The standings table."""
    rows = []
    for s in standings.standings:
        t = standings.timing.get(s.bot)
        rows.append(
            {
                "rank": "" if s.rank is None else s.rank,
                "bot": s.bot,
                "elo": elo_text(s.elo),
                "elo_ci": elo_interval_text(s),
                "games": s.games,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "score": "-" if s.score is None else f"{pct(s.score)}%",
                "score_ci": interval_text(s.score_lo, s.score_hi),
                "faults": faults_text(s),
                "move_time": seconds_text(t.mean_move_time if t else None),
            }
        )
    return rows


def _pair_anchor(rank: dict[str, int], a: str, b: str) -> str:
    """The id of the games list of the pair ``a``, ``b`` (by rank, so ids are plain)."""
    i, j = sorted((rank[a], rank[b]))
    return f"games-{i}-{j}"


def _matrices(
    standings: Standings, bots: Sequence[str], rank: dict[str, int], listed: set[tuple[str, str]]
) -> tuple[dict[str, list[dict[str, Any] | None]], dict[str, list[dict[str, Any] | None]]]:
    """The head-to-head and likelihood-of-superiority cells, row by row (``None`` on the
    diagonal); a head-to-head cell links to its pair's games when they are listed."""
    pairs: dict[str, list[dict[str, Any] | None]] = {}
    los: dict[str, list[dict[str, Any] | None]] = {}
    for a in bots:
        pair_row: list[dict[str, Any] | None] = []
        los_row: list[dict[str, Any] | None] = []
        for b in bots:
            if a == b:
                pair_row.append(None)
                los_row.append(None)
                continue
            p = standings.pairs[a][b]
            pair_row.append(
                {
                    "score": None if p.score is None else pct(p.score, 0),
                    "lo": pct(p.lo, 0),
                    "hi": pct(p.hi, 0),
                    "counted": p.counted,
                    "colour": _heat(p.score),
                    "title": f"{a} vs {b}: {p.points:g} of {p.counted} counted "
                    f"({p.games} games together)",
                    "anchor": _pair_anchor(rank, a, b) if pair_key(a, b) in listed else None,
                }
            )
            value = standings.los[a][b]
            los_row.append({"value": None if value is None else pct(value), "colour": _heat(value)})
        pairs[a] = pair_row
        los[a] = los_row
    return pairs, los


def _seat_cell(score: SeatScore, chance: float) -> dict[str, Any]:
    """One score with its interval, coloured against ``chance``."""
    lo, hi = score.interval or (None, None)
    return {
        "score": "-" if score.score is None else pct(score.score),
        "ci": interval_text(lo, hi),
        "games": score.games,
        "colour": _heat(score.score, chance),
    }


def _seat_rows(seats: SeatResults, order: Sequence[str]) -> dict[str, Any]:
    """The seats section: the first seat overall, per deck, and every bot by seat."""
    chance = seats.chance
    lo, hi = seats.first.interval or (None, None)
    verdicts = {1: "favoured the first seat", -1: "favoured the others", 0: ""}
    return {
        "first": seats.first,
        "first_score": pct(seats.first.score),
        "first_ci": interval_text(lo, hi),
        "chance": pct(chance),
        "above": seats.favoured(1),
        "below": seats.favoured(-1),
        "positions": ["moves first", "second", "third", "fourth"][: seats.players],
        "decks": [
            {
                "number": d,
                **_seat_cell(s, chance),
                "verdict": verdicts[s.against(chance)],
            }
            for d, s in seats.decks.items()
        ],
        "bots": [
            {"bot": b, "cells": [_seat_cell(s, chance) for s in seats.bots[b]]}
            for b in order
            if b in seats.bots
        ],
    }


def _play_rows(
    plays: Mapping[str, PlayStats], order: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The card-play table, the knock-out table and its card columns (cards that knocked
    someone out, in value order)."""
    stats = [plays[b] for b in order if b in plays]
    play_rows = [
        {
            "bot": s.bot,
            "total": s.total_plays,
            "shares": [
                {"share": pct(s.share(int(c))), "count": s.plays.get(int(c), 0)} for c in CARDS
            ],
        }
        for s in stats
    ]
    used = sorted({c for s in stats for c in s.by_card})
    knock_cards = [{"value": c, "name": card_name(c)} for c in used]
    knock_rows = []
    for s in stats:
        cells = []
        for c in used:
            n, own = s.by_card.get(c, 0), s.own.get(c, 0)
            cells.append(f"{n} ({own})" if own else str(n))
        knock_rows.append(
            {
                "bot": s.bot,
                "games": s.games,
                "out": s.knocked_out,
                "out_pct": pct(s.knocked_out / s.games if s.games else None),
                "by_card": cells,
                "forfeits": s.forfeits,
                "knocks": ", ".join(f"{card_name(c)} {s.knocks[c]}" for c in sorted(s.knocks))
                or "-",
            }
        )
    return play_rows, knock_rows, knock_cards


def _game_line(game: StoredGame, links: Mapping[int, str]) -> dict[str, Any]:
    """One game of a list: its id, link, key, seats, result and faults."""
    record = game.record
    winners = [record.seats[w] for w in record.winners if 0 <= w < len(record.seats)]
    if not winners:
        result = "no result"
    elif len(winners) == 1:
        result = f"{winners[0]} won"
    else:
        result = "shared by " + ", ".join(winners)
    faults = "; ".join(
        f"{record.seats[f.seat] if 0 <= f.seat < len(record.seats) else f.seat}: {f.kind}"
        for f in record.faults
    )
    return {
        "id": game.id,
        "href": links.get(game.id),
        "key": game.key,
        "deck": "no stored deck" if game.deck is None else f"deck {game.deck}",
        "seats": " vs ".join(record.seats),
        "result": result,
        "faults": faults,
    }


def _listing(
    plan: PagePlan, links: Mapping[int, str], rank: dict[str, int], written: bool
) -> dict[str, Any]:
    """The games section: the plan's games with faults and its games of each pair."""
    listed = len(plan.games)
    if written:
        intro = (
            f"{len(links)} of the listed games have a replay page (--pages {plan.mode}); "
            "a link opens it."
        )
    else:
        intro = (
            f"{listed} games listed by id, without pages (no --html FILE, or --pages none): "
            "`arena replay ID --html FILE` writes one."
        )
    pairs = []
    ranked = sorted(
        (p for p in plan.pairs if p[0] in rank and p[1] in rank),
        key=lambda p: sorted((rank[p[0]], rank[p[1]])),
    )
    for key in ranked:
        games, total = plan.pairs[key], plan.pair_totals[key]
        a, b = sorted(key, key=rank.__getitem__)
        pairs.append(
            {
                "anchor": _pair_anchor(rank, a, b),
                "title": f"{a} and {b}: {len(games)} of their {total} games",
                "games": [_game_line(g, links) for g in games],
            }
        )
    return {
        "intro": intro,
        "faulted": [_game_line(g, links) for g in plan.faulted],
        "faults_left": plan.faults_total - len(plan.faulted),
        "pairs": pairs,
    }


def render_html(
    detail: TournamentDetail,
    games: Sequence[StoredGame],
    standings: Standings,
    analysis: ReportAnalysis | None = None,
    *,
    plan: PagePlan | None = None,
    links: Mapping[int, str] | None = None,
) -> str:
    """One self-contained HTML page reporting a tournament.

    It shows: the tournament's name, id and status (and :func:`deck_note`); the standings;
    the Elo plot; how the ratings settled as games came in; the head-to-head matrix (each
    cell linking to the pair's games) and the likelihood-of-superiority matrix; results by
    seat (the first seat per deck, each bot by seat); the cards each bot plays and how it is
    knocked out; faults per bot by kind with example messages, linked to their games; the
    games listed (``plan``, by default :func:`plan_pages` ``sample``) with links to their
    replay pages where ``links`` (game id to relative path) has one; thinking time; and
    provenance. ``games`` are the tournament's stored games in stored order; ``standings``
    is ``compute_standings(games, detail.entrants)`` and ``analysis`` :func:`analyse` of the
    same (made here when not given). Naive datetimes are taken as UTC.
    """
    analysis = analysis or analyse(games, standings, detail.players)
    links = links or {}
    plan = plan or plan_pages(games, "none")
    # The matrices show rated bots only: a bot without a rated game has an empty row.
    bots = [s.bot for s in standings.standings if s.rank is not None]
    rank = {s.bot: s.rank for s in standings.standings if s.rank is not None}
    label = {b: str(r) for b, r in rank.items()}
    order = list(standings.bots)
    matrix_bots = [{"name": b, "label": label[b], "short": shorten_middle(b, _NAME)} for b in bots]
    pairs, los = _matrices(standings, bots, rank, set(plan.pairs))

    by_key = {g.key: g for g in games}
    fault_list = []
    for f in standings.faults.values():
        examples = []
        for e in f.examples:
            game = by_key.get(e.game)
            ref = {"id": game.id, "href": links.get(game.id)} if game else {"id": "?", "href": None}
            examples.append({**e.to_dict(), "ref": ref})
        fault_list.append(
            {
                "bot": f.bot,
                "total": f.total,
                "disqualified": f.disqualified,
                "by_kind": f.by_kind,
                "examples": examples,
            }
        )
    kinds = {k for f in standings.faults.values() for k in f.by_kind}
    fault_kinds = [k for k in FAULT_KINDS if k in kinds] + sorted(kinds - set(FAULT_KINDS))

    play_rows, knock_rows, knock_cards = _play_rows(analysis.plays, order)
    history = analysis.history
    shown = [b for b in order if b in history.bots]
    config = detail.configuration or {}
    decks = deck_summary(detail)
    if decks["public"]:
        secrecy = "public: a bot could know them in advance"
    elif decks["seed"] is None:
        secrecy = "secret: the seed is published once the tournament is finished"
    else:
        secrecy = f"secret, seed {decks['seed']} (arena decks show {decks['reproduce']})"
    facts = [
        ("deck set", config_value(config, "decks")),
        ("decks", str(len(detail.decks))),
        ("deck orders", secrecy),
        ("bots ran in", sandbox_runs(detail)),
        ("teams", teams_text(detail)),
        ("repeats", config_value(config, "repeat", "repeats")),
        ("move time (s)", config_value(config, "move_time")),
        ("fault limit", config_value(config, "max_faults")),
        ("seed", str(detail.seed)),
        ("secret", secret_text(detail)),
        ("variant", detail.variant),
        ("players per table", str(detail.players)),
        ("arena version", detail.arena_version),
        ("created", date_text(detail.created)),
        ("updated", date_text(detail.updated)),
        ("games stored", f"{len(games)} ({standings.rated_games} rated)"),
        ("first to last game", games_span(games)),
        ("rating fit", fit_summary(standings)),
        ("total thinking time", seconds_text(standings.total_time)),
    ]
    team_of = ((detail.configuration or {}).get("teams") or {}).get("of", {})
    entrants = [
        {
            "team": team_of.get(e.name, ""),
            "name": e.name,
            "bot": e.bot,
            "plugin": e.plugin,
            "distribution": e.distribution,
            "version": e.version,
            "parameters": json.dumps(e.parameters, sort_keys=True, default=str),
        }
        for e in detail.entrants
    ]
    timing_rows = [
        {
            "bot": t.bot,
            "total": seconds_text(t.time),
            "moves": t.moves,
            "mean": seconds_text(t.mean_move_time),
        }
        for t in standings.timing.values()
    ]

    template = _environment().get_template("report.html")
    return template.render(
        title=f"{detail.name} · tournament {detail.id}",
        detail=detail,
        standings=standings,
        total_games=len(games),
        updated=date_text(detail.updated),
        rows=_standing_rows(standings),
        notes=fit_notes(standings),
        plot=Markup(elo_plot_svg(standings)),
        history_plot=Markup(rating_history_svg(history, order)),
        history_points=len(history.points),
        history_first=history.points[0].games if history.points else 0,
        history_last=history.points[-1].games if history.points else 0,
        history_cut=HISTORY_PANELS if len(shown) > HISTORY_PANELS else 0,
        matrix_bots=matrix_bots,
        pairs=pairs,
        los=los,
        seats=_seat_rows(analysis.seats, order),
        seats_plot=Markup(first_seat_svg(analysis.seats)),
        plays=play_rows,
        cards=[str(c) for c in CARDS],
        knockouts=knock_rows,
        knock_cards=knock_cards,
        faults=fault_list,
        fault_kinds=fault_kinds,
        listing=_listing(plan, links, rank, bool(links)),
        timing=timing_rows,
        facts=facts,
        decks=decks,
        deck_note=deck_note(detail),
        entrants=entrants,
        teams_given=bool(team_of),
        configuration=json.dumps(config, indent=2, sort_keys=True, default=str),
    )
