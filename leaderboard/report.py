"""Leaderboard output: a terminal table, a self-contained HTML report and the report's JSON.

:func:`format_table` renders :class:`~leaderboard.standings.Standings` as aligned text for a
terminal; :func:`render_html` renders one HTML file with no external resources (styles inline,
the Elo plot as inline SVG) for a person to read and share; :func:`report_json` gives all of it
to machines. :func:`deck_summary` and :func:`deck_note` say whether the decks were public or
secret, and publish a secret seed once the tournament is finished, never before. matplotlib is
imported only when a plot is drawn, so importing this module stays cheap. See
``docs/reports.md``.
"""

from __future__ import annotations

import io
import json
import math
import re
import textwrap
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import jinja2
from markupsafe import Markup

from arena.decks import is_secret_spec, reproducible_spec
from arena.records import FAULT_KINDS
from leaderboard.standings import Standing, Standings
from leaderboard.store import StoredGame, TournamentDetail

__all__ = [
    "TABLE_WIDTH",
    "deck_note",
    "deck_summary",
    "elo_plot_svg",
    "format_table",
    "render_html",
    "report_json",
    "shorten_middle",
]

#: The deck set recommended for ranked play, named where a report marks public decks.
RANKED_DECKS = "balanced:36"

#: The width :func:`format_table` fits its table into, in columns.
TABLE_WIDTH = 100
_MIN_NAME = 12
_PLOT_NAME = 40


# --------------------------------------------------------------------------- formatting


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


def _elo(x: float | None) -> str:
    """An Elo rating rounded to a whole number, or "-"."""
    return "-" if x is None else f"{x:.0f}"


def _elo_interval(s: Standing) -> str:
    """``[lo, hi]`` of a rating, ``?`` for an unbounded end, empty when unrated."""
    if s.elo is None:
        return ""
    lo = "?" if s.elo_lo is None else _elo(s.elo_lo)
    hi = "?" if s.elo_hi is None else _elo(s.elo_hi)
    return f"[{lo}, {hi}]"


def _pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage without the sign, or "-"."""
    return "-" if x is None else f"{100.0 * x:.{digits}f}"


def _score_interval(lo: float | None, hi: float | None) -> str:
    """``[lo, hi]`` of a proportion in percent, empty when unknown."""
    if lo is None or hi is None:
        return ""
    return f"[{_pct(lo)}, {_pct(hi)}]"


def _faults(s: Standing) -> str:
    """The fault count, with "DQ" for a disqualified bot."""
    return f"{s.faults} DQ" if s.disqualified else str(s.faults)


def _seconds(x: float | None) -> str:
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


def _date(when: datetime | None) -> str:
    """A datetime as ``YYYY-MM-DD HH:MM:SS UTC``, or "-"."""
    return "-" if when is None else _utc(when).strftime("%Y-%m-%d %H:%M:%S UTC")


def _fit_notes(standings: Standings) -> list[str]:
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


# --------------------------------------------------------------------------- decks


def deck_summary(detail: TournamentDetail) -> dict[str, Any]:
    """What the report says about the decks, JSON-ready: ``spec`` (the deck set as given),
    ``count``, ``public`` (whether a bot could know the decks in advance: every deck set but
    a secret ``balanced:N`` or ``random:N``), ``seed`` (a secret seed as a decimal string, once
    the tournament is finished; else ``None``), ``reproduce`` (the public spec that gives the
    same decks, with that seed) and ``orders`` (the decks, card values top first; ``None``
    while a secret set's tournament is not finished)."""
    spec = str(detail.configuration.get("decks", "")) or None
    seed = detail.published_seed
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


def sandbox_runs(detail: TournamentDetail) -> str:
    """How the bots ran, run by run where that changed: the sandbox, each bot's limits and
    what enforced them (or that no run recorded it, for tournaments of older versions)."""
    from arena.sandbox import describe_enforcement

    lines = list(dict.fromkeys(describe_enforcement(s) for s in detail.sandboxes))
    return "; then ".join(lines) if lines else "not recorded (a tournament of an older version)"


def sandbox_note(detail: TournamentDetail) -> str:
    """:func:`sandbox_runs` as a sentence for the text report."""
    return f"Bots ran in: {sandbox_runs(detail)}."


def report_json(detail: TournamentDetail, standings: Standings) -> str:
    """The report as strict JSON: ``tournament`` (``id``, ``name``, ``status``, ``variant``,
    ``players``, ``seed``, ``arena_version``, ``configuration``), ``decks``
    (:func:`deck_summary`), and every key of :meth:`Standings.to_dict` at the top level."""
    data: dict[str, Any] = {
        "tournament": {
            "id": detail.id,
            "name": detail.name,
            "status": detail.status,
            "variant": detail.variant,
            "players": detail.players,
            "seed": detail.seed,
            "arena_version": detail.arena_version,
            "configuration": detail.configuration,
            "sandboxes": detail.sandboxes,
        },
        "decks": deck_summary(detail),
        **standings.to_dict(),
    }
    return json.dumps(data, allow_nan=False, default=str)


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
            _elo(s.elo),
            _elo_interval(s),
            str(s.games),
            f"{s.wins}/{s.draws}/{s.losses}",
            _pct(s.score),
            _score_interval(s.score_lo, s.score_hi),
            _faults(s),
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
    notes = " ".join(_fit_notes(standings)) if standings.games else ""
    if notes:
        lines.append("")
        lines.extend(textwrap.wrap(notes, width=width, break_on_hyphens=False))
    return "\n".join(lines)


# --------------------------------------------------------------------------- plot


def _plot_label(name: str) -> str:
    """A bot name as a plot label, shortened (maths parsing is off, so ``$`` is literal)."""
    return shorten_middle(name, _PLOT_NAME)


def elo_plot_svg(standings: Standings) -> str:
    """The Elo ratings with their 95% intervals as an SVG element (empty when nothing is rated).

    Drawn with matplotlib's object API (no pyplot, so no global backend is chosen) inside
    ``matplotlib.rc_context``: text stays text (``svg.fonttype = "none"``), ``$`` in names is
    not maths (``text.parse_math``), ids are stable (``svg.hashsalt``) and no date is written,
    so the same standings give the same SVG. Bots are listed best first from the top; an
    unbounded interval is drawn as a hollow point.
    """
    rated = [s for s in standings.standings if s.elo is not None]
    if not rated:
        return ""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(
        {
            "svg.fonttype": "none",
            "text.parse_math": False,
            "svg.hashsalt": "loveletter-arena",
            "text.usetex": False,
            "font.size": 9.0,
            "font.family": "sans-serif",
        }
    ):
        fig = Figure(figsize=(7.5, 0.9 + 0.3 * len(rated)), layout="constrained")
        ax = fig.add_subplot()
        ys = list(range(len(rated)))
        centre = standings.ratings.base
        ax.axvline(centre, color="#999999", linewidth=0.8, linestyle="--", zorder=0)
        for y, s in zip(ys, rated, strict=True):
            assert s.elo is not None
            if s.elo_lo is not None and s.elo_hi is not None:
                ax.errorbar(
                    [s.elo],
                    [y],
                    xerr=[[s.elo - s.elo_lo], [s.elo_hi - s.elo]],
                    fmt="o",
                    color="#2166ac",
                    ecolor="#4393c3",
                    elinewidth=2.0,
                    capsize=3.0,
                    markersize=5.0,
                )
            else:
                ax.plot([s.elo], [y], "o", markerfacecolor="white", color="#2166ac")
        ax.set_yticks(ys, labels=[_plot_label(s.bot) for s in rated])
        ax.set_ylim(len(rated) - 0.5, -0.5)
        ax.set_xlabel("Elo (points: estimate; bars: 95% interval)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    return svg.strip()


# --------------------------------------------------------------------------- HTML


def _mix(colour: tuple[int, int, int], weight: float) -> str:
    """``colour`` mixed with white (``weight`` 0 is white, 1 the colour) as CSS ``rgb()``."""
    w = min(max(weight, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * w) for c in colour)
    return f"rgb({r}, {g}, {b})"


def _heat(x: float | None) -> str:
    """A light diverging background for a proportion: blue above 1/2, red below, white at 1/2
    and for unknown values."""
    if x is None or not math.isfinite(x):
        return "rgb(255, 255, 255)"
    t = 2.0 * (x - 0.5)
    return _mix((33, 102, 172) if t > 0 else (178, 24, 43), 0.6 * abs(t))


def _config_value(configuration: dict[str, Any], *keys: str) -> str:
    """The first of ``keys`` in the configuration as text: "none" for a null value (no limit),
    "-" when none of the keys is there."""
    for key in keys:
        if key in configuration:
            value = configuration[key]
            if value is None:
                return "none"
            return value if isinstance(value, str) else json.dumps(value, default=str)
    return "-"


def _span(games: Sequence[StoredGame]) -> tuple[datetime | None, datetime | None]:
    """When the first and the last of ``games`` were stored (UTC)."""
    if not games:
        return None, None
    times = [_utc(g.created) for g in games]
    return min(times), max(times)


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
  max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.sub { color: #555; margin-top: 0; }
.status { display: inline-block; padding: .05rem .5rem; border-radius: .7rem; font-size: .85rem;
  background: #eee; vertical-align: middle; }
.status.finished { background: #d9f0d3; } .status.running { background: #fff3c4; }
.status.interrupted { background: #f8d0cc; }
.warn { background: #fff3c4; padding: .4rem .7rem; border-radius: .3rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; margin: .5rem 0; }
th, td { padding: .25rem .55rem; border-bottom: 1px solid #e5e5e5; vertical-align: top; }
th { text-align: left; background: #f6f6f6; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.bot { overflow-wrap: anywhere; max-width: 22rem; }
td.ci { color: #555; font-size: .8rem; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.matrix td { text-align: center; font-variant-numeric: tabular-nums; min-width: 4.5rem; }
table.matrix td small { display: block; color: #333; font-size: .72rem; }
table.matrix td.self { background: #f0f0f0; }
.muted { color: #777; }
figure { margin: .5rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: .85rem; }
pre { background: #f6f6f6; padding: .6rem; overflow-x: auto; font-size: .8rem; }
code { font-size: .85em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
ul.examples { margin: .2rem 0 0 1rem; padding: 0; font-size: .8rem; }
ul.examples code { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>{{ detail.name }} <span class="muted">· tournament {{ detail.id }}</span>
  <span class="status {{ detail.status }}">{{ detail.status }}</span></h1>
<p class="sub">{{ detail.variant }}, {{ detail.players }} players per table ·
  {{ total_games }} games · {{ standings.standings | length }} bots · updated {{ updated }}</p>
{% if detail.status != "finished" %}
<p class="warn">This tournament is {{ detail.status }}: the figures cover the
  {{ total_games }} games stored so far.</p>
{% endif %}
<p class="{{ "warn" if decks.public else "note" }}">{{ deck_note }}</p>

<h2>Standings</h2>
<div class="scroll">
<table>
<thead><tr><th class="n">#</th><th>bot</th><th class="n">Elo</th><th>95% interval</th>
<th class="n">games</th><th class="n">wins</th><th class="n">draws</th><th class="n">losses</th>
<th class="n">score</th><th>95% interval</th><th class="n">faults</th>
<th class="n">time / move</th></tr></thead>
<tbody>
{% for row in rows %}
<tr><td class="n">{{ row.rank }}</td><td class="bot">{{ row.bot }}</td>
<td class="n">{{ row.elo }}</td><td class="ci">{{ row.elo_ci }}</td>
<td class="n">{{ row.games }}</td><td class="n">{{ row.wins }}</td>
<td class="n">{{ row.draws }}</td><td class="n">{{ row.losses }}</td>
<td class="n">{{ row.score }}</td><td class="ci">{{ row.score_ci }}</td>
<td class="n">{{ row.faults }}</td><td class="n">{{ row.move_time }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>
<p class="note">{% for note in notes %}{{ note }} {% endfor %}
Score: mean share of the round (a win shared by k counts 1/k, so a two-player draw is half),
in percent, with a 95% Wilson interval that treats games as independent. Wins are sole wins,
draws shared wins. Faults exclude forfeits after a disqualification (DQ).</p>

{% if plot %}
<h2>Ratings</h2>
<figure>
{{ plot }}
<figcaption>Elo ratings with 95% intervals, best first. The dashed line is
{{ "%g" | format(standings.ratings.base) }}
({{ "the anchor" if standings.ratings.anchor else "the mean rating" }}).
A hollow point has no interval.</figcaption>
</figure>
{% endif %}

{% if matrix_bots | length > 1 %}
<h2>Head to head</h2>
<p class="note">Row bot's score against the column bot, in percent, with its 95% Wilson
interval and the number of games counted. Counted are games where both sat and at least one of
the two won: 1 if the row bot won and the column bot did not, 0 the other way round, ½ if both
shared the win. At two-player tables that is simply the row bot's share.
Blue: the row bot did better; red: worse.</p>
<div class="scroll">
<table class="matrix">
<thead><tr><th></th>
{% for b in matrix_bots %}
<th class="n" title="{{ b.name }}">{{ b.label }}</th>
{% endfor %}
</tr></thead>
<tbody>
{% for a in matrix_bots %}
<tr><th title="{{ a.name }}">{{ a.label }}. {{ a.short }}</th>
{% for cell in pairs[a.name] %}
{% if cell is none %}<td class="self"></td>
{% elif cell.score is none %}<td class="muted" title="{{ cell.title }}">&ndash;</td>
{% else %}<td style="background: {{ cell.colour }}" title="{{ cell.title }}">{{ cell.score }}
<small>[{{ cell.lo }}, {{ cell.hi }}]</small>
<small>n={{ cell.counted }}</small></td>
{% endif %}
{% endfor %}
</tr>
{% endfor %}
</tbody>
</table>
</div>

<h2>Likelihood of superiority</h2>
<p class="note">Probability, in percent, that the row bot is stronger than the column bot:
Φ(Δθ / sd(Δθ)) with the rating difference and its variance from the same cluster-robust fit
as the intervals. &ldquo;&ndash;&rdquo; when it cannot be estimated (fewer than two units,
an unrated bot, or a degenerate variance).</p>
<div class="scroll">
<table class="matrix">
<thead><tr><th></th>
{% for b in matrix_bots %}
<th class="n" title="{{ b.name }}">{{ b.label }}</th>
{% endfor %}
</tr></thead>
<tbody>
{% for a in matrix_bots %}
<tr><th title="{{ a.name }}">{{ a.label }}. {{ a.short }}</th>
{% for cell in los[a.name] %}
{% if cell is none %}<td class="self"></td>
{% elif cell.value is none %}<td class="muted">&ndash;</td>
{% else %}<td style="background: {{ cell.colour }}">{{ cell.value }}</td>
{% endif %}
{% endfor %}
</tr>
{% endfor %}
</tbody>
</table>
</div>
{% endif %}

<h2>Faults</h2>
{% if faults %}
<div class="scroll">
<table>
<thead><tr><th>bot</th><th class="n">faults</th>
{% for kind in fault_kinds %}
<th class="n">{{ kind }}</th>
{% endfor %}
<th>examples</th></tr></thead>
<tbody>
{% for f in faults %}
<tr><td class="bot">{{ f.bot }}
{% if f.disqualified %} <strong>(disqualified)</strong>{% endif %}</td>
<td class="n">{{ f.total }}</td>
{% for kind in fault_kinds %}<td class="n">{{ f.by_kind.get(kind, 0) }}</td>{% endfor %}
<td><ul class="examples">{% for e in f.examples %}
<li>{{ e.kind }} in <code>{{ e.game }}</code> after {{ e.move }} actions:
<code>{{ e.message }}</code></li>
{% endfor %}</ul></td></tr>
{% endfor %}
</tbody>
</table>
</div>
{% else %}
<p>No bot committed a fault.</p>
{% endif %}

<h2>Thinking time</h2>
<div class="scroll">
<table>
<thead><tr><th>bot</th><th class="n">total</th><th class="n">moves</th>
<th class="n">mean per move</th></tr></thead>
<tbody>
{% for t in timing %}
<tr><td class="bot">{{ t.bot }}</td><td class="n">{{ t.total }}</td>
<td class="n">{{ t.moves }}</td><td class="n">{{ t.mean }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>

<h2>Provenance</h2>
<dl class="facts">
{% for key, value in facts %}<dt>{{ key }}</dt><dd>{{ value }}</dd>
{% endfor %}
</dl>
<h3>Entrants</h3>
<div class="scroll">
<table>
<thead><tr><th>entrant</th><th>bot</th><th>plugin</th><th>distribution</th><th>version</th><th>parameters</th></tr></thead>
<tbody>
{% for e in entrants %}
<tr><td class="bot">{{ e.name }}</td><td>{{ e.bot }}</td><td>{{ e.plugin }}</td>
<td>{{ e.distribution }}</td><td>{{ e.version }}</td><td><code>{{ e.parameters }}</code></td></tr>
{% endfor %}
</tbody>
</table>
</div>
{% if decks.orders is not none %}
<details><summary>Decks ({{ decks.count }}, card values from the top)</summary>
<pre>{% for d in decks.orders %}{{ loop.index }}. {{ d | join(" ") }}
{% endfor %}</pre>
</details>
{% endif %}
<details><summary>Configuration</summary>
<pre>{{ configuration }}</pre>
</details>
</body>
</html>
"""


def _environment() -> jinja2.Environment:
    """A Jinja environment with autoescaping always on (names and messages are untrusted)."""
    return jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )


def render_html(detail: TournamentDetail, games: Sequence[StoredGame], standings: Standings) -> str:
    """One self-contained HTML page reporting a tournament (no external CSS, JS, fonts or
    images; the Elo plot is inline SVG).

    It shows: the tournament's name, id and status; the standings table; a plot of Elo with
    95% intervals; the head-to-head score matrix as a heatmap whose cells carry the score, its
    Wilson interval and the games counted; the likelihood-of-superiority matrix; faults per bot
    by kind with example messages; thinking time; and provenance (deck set and number of decks,
    repeats, move time, fault limit, seed, variant, players per table, arena version, dates,
    the span of the stored games, total games and thinking time, every entrant's plugin,
    distribution, version and parameters, and the whole configuration). Under the title,
    :func:`deck_note` marks public decks, or says when a secret seed is published; the seed
    and the deck orders appear only when :func:`deck_summary` gives them. ``games`` are the
    tournament's stored games (for the dates and counts); ``standings`` is normally
    ``compute_standings(games, detail.entrants)``. Every text from bots or the database is
    HTML-escaped. Naive datetimes are taken as UTC.
    """
    # The matrices show rated bots only: a bot without a rated game has an empty row.
    bots = [s.bot for s in standings.standings if s.rank is not None]
    label = {s.bot: str(s.rank) for s in standings.standings if s.rank is not None}
    timing = standings.timing

    rows = []
    for s in standings.standings:
        t = timing.get(s.bot)
        rows.append(
            {
                "rank": "" if s.rank is None else s.rank,
                "bot": s.bot,
                "elo": _elo(s.elo),
                "elo_ci": _elo_interval(s),
                "games": s.games,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "score": "-" if s.score is None else f"{_pct(s.score)}%",
                "score_ci": _score_interval(s.score_lo, s.score_hi),
                "faults": _faults(s),
                "move_time": _seconds(t.mean_move_time if t else None),
            }
        )

    matrix_bots = [
        {"name": b, "label": label[b], "short": shorten_middle(b, _PLOT_NAME)} for b in bots
    ]
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
                    "score": None if p.score is None else _pct(p.score, 0),
                    "lo": _pct(p.lo, 0),
                    "hi": _pct(p.hi, 0),
                    "counted": p.counted,
                    "colour": _heat(p.score),
                    "title": f"{a} vs {b}: {p.points:g} of {p.counted} counted "
                    f"({p.games} games together)",
                }
            )
            value = standings.los[a][b]
            los_row.append(
                {"value": None if value is None else _pct(value), "colour": _heat(value)}
            )
        pairs[a] = pair_row
        los[a] = los_row

    fault_list = list(standings.faults.values())
    kinds: list[str] = []
    for f in fault_list:
        kinds.extend(k for k in f.by_kind if k not in kinds)
    fault_kinds = [k for k in FAULT_KINDS if k in kinds] + sorted(
        k for k in kinds if k not in FAULT_KINDS
    )

    timing_rows = [
        {
            "bot": t.bot,
            "total": _seconds(t.time),
            "moves": t.moves,
            "mean": _seconds(t.mean_move_time),
        }
        for t in timing.values()
    ]

    config = detail.configuration or {}
    first, last = _span(games)
    span = (
        "-"
        if first is None or last is None
        else (f"{_date(first)} to {_date(last)} ({_seconds((last - first).total_seconds())})")
    )
    decks = deck_summary(detail)
    if decks["public"]:
        secrecy = "public: a bot could know them in advance"
    elif decks["seed"] is None:
        secrecy = "secret: the seed is published once the tournament is finished"
    else:
        secrecy = f"secret, seed {decks['seed']} (arena decks show {decks['reproduce']})"
    facts = [
        ("deck set", _config_value(config, "decks")),
        ("decks", str(len(detail.decks))),
        ("deck orders", secrecy),
        ("bots ran in", sandbox_runs(detail)),
        ("repeats", _config_value(config, "repeat", "repeats")),
        ("move time (s)", _config_value(config, "move_time")),
        ("fault limit", _config_value(config, "max_faults")),
        ("seed", str(detail.seed)),
        ("variant", detail.variant),
        ("players per table", str(detail.players)),
        ("arena version", detail.arena_version),
        ("created", _date(detail.created)),
        ("updated", _date(detail.updated)),
        ("games stored", f"{len(games)} ({standings.rated_games} rated)"),
        ("first to last game", span),
        ("rating fit", _fit_summary(standings)),
        ("total thinking time", _seconds(standings.total_time)),
    ]
    entrants = [
        {
            "name": e.name,
            "bot": e.bot,
            "plugin": e.plugin,
            "distribution": e.distribution,
            "version": e.version,
            "parameters": json.dumps(e.parameters, sort_keys=True, default=str),
        }
        for e in detail.entrants
    ]

    template = _environment().from_string(_TEMPLATE)
    return template.render(
        title=f"{detail.name} · tournament {detail.id}",
        detail=detail,
        standings=standings,
        total_games=len(games),
        updated=_date(detail.updated),
        rows=rows,
        notes=_fit_notes(standings),
        plot=Markup(elo_plot_svg(standings)),
        matrix_bots=matrix_bots,
        pairs=pairs,
        los=los,
        faults=fault_list,
        fault_kinds=fault_kinds,
        timing=timing_rows,
        facts=facts,
        decks=decks,
        deck_note=deck_note(detail),
        entrants=entrants,
        configuration=json.dumps(config, indent=2, sort_keys=True, default=str),
    )


def _fit_summary(standings: Standings) -> str:
    """One line on the rating fit: games, units, ridge, anchor."""
    fit = standings.ratings
    anchor = f"anchor {fit.anchor} = {fit.base:g}" if fit.anchor else f"mean {fit.base:g}"
    return (
        f"{fit.games} games, {fit.units} deck units, ridge {fit.ridge:g}, {anchor}, 95% intervals"
    )
