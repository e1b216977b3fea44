"""The page benchmark of ``arena serve`` (``serve_page_ms``, :mod:`arena.bench.serve_pages`) at a
tiny size: a ladder of 300 real games is built as the benchmark builds its 100,000, served by
the real application, and every page answers 200 with a time. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.bench.serve_pages import (
    PAGES,
    LadderShape,
    ServeBenchError,
    build_ladder,
    ladder_specs,
    measure_pages,
    page_paths,
    serve_page_ms,
    serving,
    time_pages,
)
from arena.serve.ladder import LadderSettings, ladder_tournaments
from leaderboard import competition as C
from leaderboard.store import Store

pytest.importorskip("starlette", reason="the page benchmark needs the 'serve' extra")
pytest.importorskip("uvicorn", reason="the page benchmark needs the 'serve' extra")

#: 2 placements of 2 x 2 x 25 games and 10 rounds of 2 x 5: 300 games in 12 tournaments.
TINY = LadderShape(
    players=("random", "greedy", "uniform"),
    placements=2,
    placement_decks=25,
    rated_rounds=10,
    rated_decks=5,
    refits=3,
)


def test_the_ladder_is_shaped_as_the_server_names_it() -> None:
    settings = LadderSettings()
    specs = list(ladder_specs(TINY, settings))
    assert len(specs) == TINY.tournaments == 12
    placements = [s for s in specs if s.gauntlet is not None]
    assert [s.name for s in placements] == [
        settings.placement(1, "random"),
        settings.placement(2, "greedy"),
    ]
    rated = [s for s in specs if s.gauntlet is None]
    assert [s.name for s in rated] == [settings.rated(n) for n in range(1, 11)]
    assert all(settings.is_ladder(str(s.name)) for s in specs)
    assert len({s.seed for s in specs}) == len(specs)  # no tournament resumes another


def test_every_page_answers_over_a_tiny_ladder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ladder.db'}"
    settings = LadderSettings(name=TINY.name)
    builder = Store(url)
    built = build_ladder(builder, TINY, workers=1)
    assert (built.games, built.tournaments, built.snapshots, built.refits) == (300, 12, 12, 3)
    assert sum(t.games for t in builder.tournaments()) == TINY.games == 300
    assert len(ladder_tournaments(builder, settings)) == 12
    assert all(t.status == "finished" for t in builder.tournaments())
    # every stored game seats its tournament's entrants
    for info in builder.tournaments():
        entrants = set(info.entrants)
        assert all(set(g.seats) <= entrants for g in builder.iter_game_rows(info.id))
    latest = C.latest_snapshot(builder, settings.name)
    assert latest is not None and latest.games == 300
    assert len(C.history(builder, settings.name)) == 12
    builder.close()

    store = Store(url)
    try:
        medians = measure_pages(store, settings, tmp_path / "spool", seconds=0.2)
        assert list(medians) == list(PAGES)
        assert all(ms > 0 for ms in medians.values())
        paths = page_paths(store, settings)
        with serving(store, tmp_path / "spool", settings) as base:
            times = time_pages(base, paths, seconds=0.0)  # raises unless every page says 200
        assert all(len(loads) >= 5 and min(loads) > 0 for loads in times.values())
    finally:
        store.close()


def test_without_the_serve_extra_it_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(ServeBenchError, match=r"needs the 'serve' extra") as caught:
        serve_page_ms(0.1)
    assert "\n" not in str(caught.value)
