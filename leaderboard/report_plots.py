"""The report's plots as inline SVG: Elo with intervals, ratings as games came in, and the
first seat's score per deck.

Drawn with matplotlib's object API (no pyplot, so no global backend is chosen) inside
``matplotlib.rc_context``: text stays text (``svg.fonttype = "none"``), ``$`` in names is not
maths (``text.parse_math``), ids are stable (``svg.hashsalt``) and no date is written, so the
same data give the same SVG. matplotlib is imported only when a plot is drawn.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from leaderboard.rating_history import RatingHistory
from leaderboard.report_format import shorten_middle
from leaderboard.seat_results import SeatResults
from leaderboard.standings import Standings

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["HISTORY_PANELS", "elo_plot_svg", "first_seat_svg", "rating_history_svg"]

#: The most bots :func:`rating_history_svg` draws a panel for (the best ones).
HISTORY_PANELS = 30
_PLOT_NAME = 40
_BLUE, _LIGHT_BLUE, _RED, _GREY = "#2166ac", "#4393c3", "#b2182b", "#999999"


def _svg(
    size: tuple[float, float],
    draw: Callable[[Figure], None],
    layout: Literal["constrained"] | None = "constrained",
) -> str:
    """The SVG element of a figure of ``size`` inches that ``draw`` fills (``layout`` None:
    ``draw`` places the axes itself)."""
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
        fig = Figure(figsize=size, layout=layout)
        draw(fig)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    return svg.strip()


def _plain(ax: Axes) -> None:
    """Light grid below the data, no top or right frame."""
    ax.grid(color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def elo_plot_svg(standings: Standings) -> str:
    """The Elo ratings with their 95% intervals as an SVG element (empty when nothing is rated).

    Bots are listed best first from the top; an unbounded interval is drawn as a hollow point.
    """
    rated = [s for s in standings.standings if s.elo is not None]
    if not rated:
        return ""

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        ys = list(range(len(rated)))
        ax.axvline(standings.ratings.base, color=_GREY, linewidth=0.8, linestyle="--", zorder=0)
        for y, s in zip(ys, rated, strict=True):
            assert s.elo is not None
            if s.elo_lo is not None and s.elo_hi is not None:
                ax.errorbar(
                    [s.elo],
                    [y],
                    xerr=[[s.elo - s.elo_lo], [s.elo_hi - s.elo]],
                    fmt="o",
                    color=_BLUE,
                    ecolor=_LIGHT_BLUE,
                    elinewidth=2.0,
                    capsize=3.0,
                    markersize=5.0,
                )
            else:
                ax.plot([s.elo], [y], "o", markerfacecolor="white", color=_BLUE)
        ax.set_yticks(ys, labels=[shorten_middle(s.bot, _PLOT_NAME) for s in rated])
        ax.set_ylim(len(rated) - 0.5, -0.5)
        ax.set_xlabel("Elo (points: estimate; bars: 95% interval)")
        _plain(ax)
        ax.grid(axis="y", visible=False)

    return _svg((7.5, 0.9 + 0.3 * len(rated)), draw)


def rating_history_svg(history: RatingHistory, order: Sequence[str]) -> str:
    """Each bot's rating against the games stored so far, one small panel per bot in ``order``
    (at most :data:`HISTORY_PANELS`), with its 95% interval as a band where it is bounded and
    the final rating as a dashed line; games on a log scale. Empty with fewer than two points.
    """
    points = history.points
    bots = [b for b in order if any(b in p.elo for p in points)][:HISTORY_PANELS]
    if len(points) < 2 or not bots:
        return ""
    cols = min(3, len(bots))
    rows = math.ceil(len(bots) / cols)
    final = points[-1]
    height = 0.6 + 1.9 * rows

    from matplotlib.ticker import FuncFormatter, NullFormatter

    def draw(fig: Figure) -> None:
        axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
        # Fixed margins in inches: the constrained layout costs twice the drawing here.
        fig.subplots_adjust(
            left=0.75 / 7.5,
            right=1 - 0.15 / 7.5,
            top=1 - 0.3 / height,
            bottom=0.5 / height,
            wspace=0.08,
            hspace=0.45,
        )
        for k, ax in enumerate(axes.flat):
            if k >= len(bots):
                ax.set_visible(False)
                continue
            bot = bots[k]
            seen = [p for p in points if bot in p.elo]
            xs = [p.games for p in seen]
            nan = float("nan")
            lo = [nan if p.lo[bot] is None else p.lo[bot] for p in seen]
            hi = [nan if p.hi[bot] is None else p.hi[bot] for p in seen]
            ax.fill_between(xs, lo, hi, color=_LIGHT_BLUE, alpha=0.3, linewidth=0)
            ax.plot(xs, [p.elo[bot] for p in seen], color=_BLUE, linewidth=1.4)
            if bot in final.elo:
                ax.axhline(final.elo[bot], color=_GREY, linewidth=0.8, linestyle="--")
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_title(shorten_middle(bot, _PLOT_NAME), fontsize=9.0)
            _plain(ax)
        for col in range(cols):  # the lowest panel of each column carries the games axis
            ax = axes[(len(bots) - 1 - col) // cols, col]
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("games stored")
        for ax in axes[:, 0]:
            ax.set_ylabel("Elo")

    return _svg((7.5, height), draw, layout=None)


def first_seat_svg(seats: SeatResults) -> str:
    """The first seat's score on each deck position (numbered from 0, as the store does) with
    its 95% interval, blue where the interval lies above chance, red below it, grey otherwise;
    the dashed line is chance (``1 / players``) and the dotted one the first seat's score over
    every deck. Empty when no deck was played."""
    decks = list(seats.decks.items())
    if not decks:
        return ""
    chance = seats.chance
    from matplotlib.ticker import MaxNLocator

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        ax.axhline(chance, color=_GREY, linewidth=0.8, linestyle="--", zorder=0)
        if seats.first.score is not None:
            ax.axhline(seats.first.score, color=_BLUE, linewidth=0.8, linestyle=":", zorder=0)
        for colour, sign in ((_BLUE, 1), (_RED, -1), (_GREY, 0)):
            chosen = [(d, s) for d, s in decks if s.against(chance) == sign]
            if not chosen:
                continue
            xs = [d for d, _ in chosen]
            ys = [s.score or 0.0 for _, s in chosen]
            intervals = [s.interval or (y, y) for (_, s), y in zip(chosen, ys, strict=True)]
            below = [y - lo for y, (lo, _) in zip(ys, intervals, strict=True)]
            above = [hi - y for y, (_, hi) in zip(ys, intervals, strict=True)]
            ax.errorbar(
                xs,
                ys,
                yerr=[below, above],
                fmt="o",
                color=colour,
                elinewidth=1.0,
                markersize=3.5 if len(decks) <= 100 else 2.0,
            )
        ax.set_ylim(-0.02, 1.02)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("deck")
        ax.set_ylabel("first seat's score")
        _plain(ax)

    return _svg((7.5, 2.8), draw)
