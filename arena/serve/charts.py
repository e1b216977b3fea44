"""The rating chart of a bot's page: an SVG drawn on the server, with axes (Elo up the side,
time along the bottom), ticks and labels, the 95% interval as a band behind the line."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

#: The chart's drawing size in SVG units (it scales to its box's width).
WIDTH, HEIGHT = 640, 240
#: Room for the axes' labels: left, right, top, bottom.
LEFT, RIGHT, TOP, BOTTOM = 64, 36, 12, 48


@dataclass(frozen=True)
class Point:
    """A rating at a moment: its Elo and, where known, its 95% interval."""

    when: dt.datetime
    elo: float
    lo: float | None = None
    hi: float | None = None


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round values from ``low`` to ``high`` (about ``count`` of them) for an axis."""
    if high <= low:
        return [low]
    raw = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    out = []
    value = first
    while value <= high + 1e-9:
        out.append(round(value, 6))
        value += step
    return out


def rating_chart(points: Sequence[Point]) -> Markup:
    """The chart of ``points`` (oldest first); empty with fewer than two."""
    if len(points) < 2:
        return Markup("")
    values = [p.elo for p in points] + [v for p in points for v in (p.lo, p.hi) if v is not None]
    low, high = min(values), max(values)
    if high - low < 20:
        low, high = low - 10, high + 10
    start, end = points[0].when, points[-1].when
    span = max((end - start).total_seconds(), 1.0)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(moment: dt.datetime) -> float:
        return LEFT + inner_w * (moment - start).total_seconds() / span

    def y(value: float) -> float:
        return TOP + inner_h * (high - value) / (high - low)

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Elo from {points[0].elo:.0f} to {points[-1].elo:.0f}">'
    ]
    band = [p for p in points if p.lo is not None and p.hi is not None]
    if len(band) >= 2:
        upper = [f"{x(p.when):.1f},{y(p.hi):.1f}" for p in band if p.hi is not None]
        lower = [f"{x(p.when):.1f},{y(p.lo):.1f}" for p in reversed(band) if p.lo is not None]
        parts.append(f'<polygon class="band" points="{" ".join(upper + lower)}"/>')
    for value in ticks(low, high):
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text class="tick" x="{LEFT - 6}" y="{y(value) + 4:.1f}" '
            f'text-anchor="end">{value:.0f}</text>'
        )
    said: set[str] = set()
    for moment in _time_ticks(start, end):
        label = _time_label(moment, span)
        if label in said:  # moments closer than the labels tell
            continue
        said.add(label)
        parts.append(
            f'<text class="tick" x="{x(moment):.1f}" y="{HEIGHT - BOTTOM + 20}" '
            f'text-anchor="middle">{label}</text>'
        )
    line = " ".join(f"{x(p.when):.1f},{y(p.elo):.1f}" for p in points)
    parts += [
        f'<polyline class="line" points="{line}"/>',
        f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>',
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" '
        f'y2="{HEIGHT - BOTTOM}"/>',
        f'<text class="axis-label" x="16" y="{TOP + inner_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + inner_h / 2:.1f})">Elo</text>',
        f'<text class="axis-label" x="{LEFT + inner_w / 2:.1f}" y="{HEIGHT - 4}" '
        'text-anchor="middle">time (UTC)</text>',
        "</svg>",
    ]
    return Markup("".join(parts))


def _time_ticks(start: dt.datetime, end: dt.datetime, count: int = 4) -> list[dt.datetime]:
    if end <= start:
        return [start]
    step = (end - start) / (count - 1)
    return [start + step * i for i in range(count)]


def _time_label(moment: dt.datetime, span: float) -> str:
    if span < 600:
        return moment.strftime("%H:%M:%S")
    if span < 2 * 86400:
        return moment.strftime("%H:%M")
    return moment.strftime("%d %b %H:%M") if span < 14 * 86400 else moment.strftime("%d %b")
