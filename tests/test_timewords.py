"""Times in words (arena.serve.timewords) and the rating chart's axes (arena.serve.charts)."""

from __future__ import annotations

import datetime as dt

import pytest

from arena.serve.charts import Point, rating_chart, ticks
from arena.serve.timewords import in_words, time_tag

NOW = dt.datetime(2026, 11, 28, 12, 0, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("before", "words"),
    [
        (dt.timedelta(seconds=0), "just now"),
        (dt.timedelta(seconds=59), "just now"),
        (dt.timedelta(seconds=60), "1 minute ago"),
        (dt.timedelta(minutes=3, seconds=20), "3 minutes ago"),
        (dt.timedelta(hours=1), "1 hour ago"),
        (dt.timedelta(hours=23, minutes=59), "23 hours ago"),
        (dt.timedelta(days=2), "2 days ago"),
        (dt.timedelta(days=8), "1 week ago"),
        (dt.timedelta(days=45), "1 month ago"),
        (dt.timedelta(days=800), "2 years ago"),
        (-dt.timedelta(hours=2), "in 2 hours"),
    ],
)
def test_a_time_is_told_in_its_largest_whole_unit(before: dt.timedelta, words: str) -> None:
    assert in_words(NOW - before, NOW) == words


def test_a_naive_time_is_utc_and_an_aware_one_is_compared_as_such() -> None:
    assert in_words(dt.datetime(2026, 11, 28, 11, 0), NOW) == "1 hour ago"
    paris = dt.timezone(dt.timedelta(hours=1))
    assert in_words(dt.datetime(2026, 11, 28, 12, 30, tzinfo=paris), NOW) == "30 minutes ago"


def test_the_tag_holds_the_exact_time_in_its_title() -> None:
    tag = time_tag("2026-11-28T11:57:00+00:00", NOW)
    assert tag == (
        '<time datetime="2026-11-28T11:57:00+00:00" title="2026-11-28 11:57:00 UTC">'
        "3 minutes ago</time>"
    )
    assert time_tag(None) == ""
    assert time_tag("<b>not a time</b>") == "&lt;b&gt;not a time&lt;/b&gt;"


def test_the_rating_chart_has_labelled_axes_with_ticks() -> None:
    assert ticks(1480, 1530) == [1480, 1500, 1520]
    assert ticks(1480, 1530, 6) == [1480, 1490, 1500, 1510, 1520, 1530]
    assert rating_chart([Point(NOW, 1500)]) == ""
    points = [
        Point(NOW - dt.timedelta(hours=h), 1500 + 10 * h, 1450 + 10 * h, 1550 + 10 * h)
        for h in (3, 2, 1, 0)
    ]
    svg = str(rating_chart(points))
    assert svg.startswith('<svg class="chart"') and svg.endswith("</svg>")
    assert svg.count('class="axis"') == 2
    assert ">Elo</text>" in svg and ">time (UTC)</text>" in svg
    assert ">1500</text>" in svg and ">09:00</text>" in svg and ">12:00</text>" in svg
    assert 'class="band"' in svg
