"""The games an HTML report lists and links, and their replay pages written next to it.

A report at ``DIR/report.html`` writes the replay page of game ``ID``
(:func:`leaderboard.replay_page.replay_page_html`) to ``DIR/report-games/game-ID.html`` and
links it by that relative path, so the report and its pages move together. Which games get a
page is ``--pages``: ``all``, ``faults`` (every game with a fault), ``sample`` (the default:
games with faults, at most :data:`MAX_FAULT_PAGES`, and a spread of each pair's games that
keeps the total near :data:`SAMPLE_PAGES`) or ``none``. See ``docs/reports.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from leaderboard.store import StoredGame, TournamentDetail

__all__ = [
    "MAX_FAULT_PAGES",
    "PAGE_MODES",
    "SAMPLE_PAGES",
    "PagePlan",
    "pages_dir",
    "pair_key",
    "plan_pages",
    "write_pages",
]

#: The choices of ``arena report --pages``.
PAGE_MODES = ("sample", "faults", "all", "none")
#: ``sample`` lists about this many games of pairs (at least 2 and at most 20 a pair).
SAMPLE_PAGES = 400
#: ``sample`` lists at most this many games with faults (the first ones stored).
MAX_FAULT_PAGES = 200
_PAIR_MIN, _PAIR_MAX = 2, 20


@dataclass(frozen=True)
class PagePlan:
    """What a report lists: ``faulted`` (games with a fault, in stored order) and ``pairs``
    (per unordered pair of bots, as a sorted tuple, the pair's games listed, in stored
    order); ``mode`` is the ``--pages`` choice and ``games`` every game listed, each once,
    in stored order (those get a page unless the mode is ``none``). ``faults_total`` and
    ``pair_totals`` count what there is, listed or not."""

    mode: str
    faulted: tuple[StoredGame, ...]
    pairs: dict[tuple[str, str], tuple[StoredGame, ...]]
    faults_total: int
    pair_totals: dict[tuple[str, str], int]

    @property
    def games(self) -> tuple[StoredGame, ...]:
        """Every listed game once, in stored order."""
        chosen = {g.id: g for g in self.faulted}
        for listed in self.pairs.values():
            chosen.update((g.id, g) for g in listed)
        return tuple(sorted(chosen.values(), key=lambda g: g.id))


def _spread(games: Sequence[StoredGame], k: int) -> tuple[StoredGame, ...]:
    """``k`` of ``games`` spread evenly from the first to the last (all when ``k`` covers
    them)."""
    n = len(games)
    if k >= n:
        return tuple(games)
    if k <= 1:
        return (games[0],)
    return tuple(games[round(i * (n - 1) / (k - 1))] for i in range(k))


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The unordered pair of ``a`` and ``b`` as :class:`PagePlan` keys it."""
    return (a, b) if a <= b else (b, a)


def plan_pages(games: Sequence[StoredGame], mode: str = "sample") -> PagePlan:
    """The games a report lists for ``mode`` (one of :data:`PAGE_MODES`); ``games`` in stored
    order. Every mode lists games with faults; ``all`` lists every game of every pair,
    ``faults`` none beyond those, ``sample`` and ``none`` a spread of each pair's games (``none``
    writes no page: the list gives the ids for ``arena replay ID --html``)."""
    if mode not in PAGE_MODES:
        raise ValueError(f"unknown pages mode {mode!r} (choose from {', '.join(PAGE_MODES)})")
    faulted = [g for g in games if g.record.faults]
    by_pair: dict[tuple[str, str], list[StoredGame]] = {}
    for game in games:
        seats = game.record.seats
        for i, a in enumerate(seats):
            for b in seats[i + 1 :]:
                if a != b:
                    by_pair.setdefault(pair_key(a, b), []).append(game)
    if mode == "all":
        per_pair = max((len(g) for g in by_pair.values()), default=0)
    elif mode == "faults":
        per_pair = 0
    else:
        per_pair = min(_PAIR_MAX, max(_PAIR_MIN, SAMPLE_PAGES // max(1, len(by_pair))))
    cap = len(faulted) if mode in ("all", "faults") else MAX_FAULT_PAGES
    return PagePlan(
        mode=mode,
        faulted=tuple(faulted[:cap]),
        pairs={p: _spread(g, per_pair) for p, g in sorted(by_pair.items()) if per_pair},
        faults_total=len(faulted),
        pair_totals={p: len(g) for p, g in sorted(by_pair.items())},
    )


def pages_dir(report: Path) -> Path:
    """The folder of a report's replay pages: ``report-games`` next to ``report.html``."""
    return report.with_name(f"{report.stem}-games")


def write_pages(
    report: Path, detail: TournamentDetail, games: Sequence[StoredGame]
) -> tuple[dict[int, str], list[str]]:
    """Write the replay page of each of ``games`` into :func:`pages_dir` of ``report``.

    Returns the link of each page written, by game id, relative to the report's folder, and a
    line for each game whose page could not be made (a record that does not play again). A
    tournament on secret decks that is not finished gets public views only (``hidden``).
    Raises ``OSError`` when the folder or a page cannot be written."""
    from leaderboard.replay_page import ReplayError, replay_page_html

    folder = pages_dir(report)
    if games:
        folder.mkdir(exist_ok=True)
    hidden = not detail.decks_revealed
    links: dict[int, str] = {}
    failed: list[str] = []
    for game in games:
        try:
            page = replay_page_html(
                game.record, game_id=game.id, tournament_id=detail.id, hidden=hidden
            )
        except ReplayError as exc:
            failed.append(f"game {game.id}: {exc}")
            continue
        name = f"game-{game.id}.html"
        (folder / name).write_text(page, encoding="utf-8")
        links[game.id] = f"{folder.name}/{name}"
    return links, failed
