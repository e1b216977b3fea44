"""Times in words for the pages: "3 minutes ago", the exact time in a ``title`` attribute."""

from __future__ import annotations

import datetime as dt

from markupsafe import Markup, escape

#: The units a time is told in, largest first: name and seconds.
UNITS: tuple[tuple[str, int], ...] = (
    ("year", 365 * 86400),
    ("month", 30 * 86400),
    ("week", 7 * 86400),
    ("day", 86400),
    ("hour", 3600),
    ("minute", 60),
)


def in_words(moment: dt.datetime, now: dt.datetime) -> str:
    """How long before ``now`` ``moment`` was, in its largest whole unit ("3 minutes ago",
    "1 day ago"; "just now" under a minute; "in 2 hours" for a moment after ``now``). Naive
    datetimes are taken as UTC."""
    seconds = int((_utc(now) - _utc(moment)).total_seconds())
    later = seconds < 0
    seconds = abs(seconds)
    for name, size in UNITS:
        if seconds >= size:
            n = seconds // size
            amount = f"{n} {name}{'' if n == 1 else 's'}"
            return f"in {amount}" if later else f"{amount} ago"
    return "just now"


def time_tag(when: str | dt.datetime | None, now: dt.datetime | None = None) -> Markup:
    """A ``<time>`` element telling ``when`` (a datetime or its ISO text) in words, the exact
    time (UTC) in its ``title``; empty for ``None`` or text that is not a time."""
    if when is None:
        return Markup("")
    try:
        moment = when if isinstance(when, dt.datetime) else dt.datetime.fromisoformat(when)
    except ValueError:
        return Markup(escape(when))
    moment = _utc(moment)
    exact = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    words = in_words(moment, now or dt.datetime.now(dt.UTC))
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        moment.isoformat(timespec="seconds"), exact, words
    )


def _utc(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)
