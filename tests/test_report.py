"""The terminal leaderboard and the self-contained HTML report."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

import matplotlib
import pytest

from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import Fault, GameRecord
from bots.uniform import UniformBot
from leaderboard.report import TABLE_WIDTH, format_table
from leaderboard.report_format import shorten_middle
from leaderboard.report_html import render_html
from leaderboard.report_plots import elo_plot_svg
from leaderboard.standings import Standings, compute_standings
from leaderboard.store import EntrantInfo, StoredGame, TournamentDetail

NASTY = "<b>&"
START = datetime(2024, 5, 1, 12, 0, 0)  # naive: UTC


def play(seed: int, names: tuple[str, str]) -> GameRecord:
    """A real record of one round between two uniform bots with the given seat names."""
    handles = [InProcessHandle(UniformBot(), name=n) for n in names]
    return Referee(move_time=None).play_round(handles, seed=seed)


def with_winner(rec: GameRecord, winner: int) -> GameRecord:
    """``rec`` with its result replaced by a sole win of seat ``winner``."""
    rec.winners = [winner]
    return rec


def three_of_four() -> list[StoredGame]:
    """Real rounds, results set by hand: A beats B 3 of 4 over two decks (A A | A B)."""
    layout = [(0, ("A", "B"), 0), (0, ("B", "A"), 1), (1, ("A", "B"), 0), (1, ("B", "A"), 0)]
    return [
        StoredGame(i, f"deck={d}/game={i}", d, i % 2, START, with_winner(play(i, seats), w))
        for i, (d, seats, w) in enumerate(layout)
    ]


def detail(status: str = "finished", **config: object) -> TournamentDetail:
    """A tournament detail for the reports."""
    configuration = {"decks": "random:2:5", "repeat": 1, "move_time": 1.0, "max_faults": 3}
    configuration.update(config)
    return TournamentDetail(
        id=7,
        name="spring <cup>",
        status=status,
        variant="classic",
        players=2,
        seed=42,
        configuration=configuration,
        entrants=[
            EntrantInfo("A", "uniform", {}, "reference", "loveletter-arena", "0.1.0"),
            EntrantInfo(NASTY, "uniform", {"seed": 3}, "evil-plugin", "evil-dist", "6.6.6"),
            EntrantInfo("B", "uniform", {"seed": 1}, "reference", "loveletter-arena", "0.1.0"),
        ],
        decks=[[1] * 16, [2] * 16],
        created=START,
        updated=datetime(2024, 5, 1, 14, 30, 0, tzinfo=UTC),
        arena_version="0.1.0",
    )


# -- terminal table ----------------------------------------------------------------------------


def test_format_table_numbers() -> None:
    # A: 1500 + 190.85/2 = 1595; interval +- 1.96 * 173.72 * (4/3)/2 = +-226.99 -> [1368, 1822].
    # Score 3 of 4 = 75.0%, Wilson [30.1, 95.4]; B mirrors it.
    text = format_table(compute_standings(three_of_four()))
    lines = text.splitlines()
    assert lines[0].split() == [
        "#",
        "bot",
        "Elo",
        "95%",
        "CI",
        "games",
        "W/D/L",
        "score%",
        "95%",
        "CI",
        "faults",
    ]
    assert set(lines[1]) == {"-"}
    assert lines[2].split() == [
        "1",
        "A",
        "1595",
        "[1368,",
        "1822]",
        "4",
        "3/0/1",
        "75.0",
        "[30.1,",
        "95.4]",
        "0",
    ]
    assert lines[3].split() == [
        "2",
        "B",
        "1405",
        "[1178,",
        "1632]",
        "4",
        "1/0/3",
        "25.0",
        "[4.6,",
        "69.9]",
        "0",
    ]
    assert "2 units" in text
    # Columns are aligned: the Elo column ends at the same place on every row.
    ends = [lines[2].index("1595") + 4, lines[3].index("1405") + 4]
    assert ends[0] == ends[1] == lines[0].index("Elo") + 3


def test_format_table_long_names_fit() -> None:
    long_a = "strategic-with-a-very-long-name-indeed:depth=3,temperature=0.25,seed=1"
    long_b = "strategic-with-a-very-long-name-indeed:depth=3,temperature=0.25,seed=2"
    games = [
        StoredGame(
            i, f"k{i}", i // 2, 0, START, with_winner(play(i, (long_a, long_b)), int(i == 3))
        )
        for i in range(4)
    ]
    s = compute_standings(games, ["never-played"])
    text = format_table(s)
    assert all(len(line) <= TABLE_WIDTH for line in text.splitlines())
    # Shortened in the middle: both parameter suffixes survive, so the rows stay distinct.
    assert long_a not in text
    assert "…" in text and "seed=1" in text and "seed=2" in text
    assert "never-played" in text
    row = next(line for line in text.splitlines() if "never-played" in line)
    assert row.split()[1:] == ["-", "0", "0/0/0", "-", "0"]


def test_format_table_marks_disqualified_and_unbounded() -> None:
    games = three_of_four()
    games[0].record.faults.append(Fault(1, "disqualified", "disqualified after 3 faults", 0))
    games[1].record.faults.append(Fault(0, "timeout", "slow", 1))
    one_deck = [StoredGame(g.id, g.key, 0, 0, START, g.record) for g in games]
    text = format_table(compute_standings(one_deck))
    b_row = next(line for line in text.splitlines() if line.split()[:2] == ["2", "B"])
    assert b_row.split()[2:5] == ["1405", "[?,", "?]"]
    assert b_row.endswith("1 DQ")
    assert "unbounded" in text


def test_format_table_empty() -> None:
    assert "(no games)" in format_table(compute_standings([]))


def test_shorten_middle() -> None:
    assert shorten_middle("abcdefghij", 10) == "abcdefghij"
    assert shorten_middle("abcdefghij", 7) == "abc…hij"
    assert shorten_middle("abcdefghij", 6) == "abc…ij"
    assert shorten_middle("abcdefghij", 1) == "…"


# -- HTML ---------------------------------------------------------------------------------------


class Cells(HTMLParser):
    """Collect the text of the cells of every table row, table by table."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def nasty_games() -> list[StoredGame]:
    """Real rounds between A and the bot named ``<b>&``, A winning 3 of 4, with a fault."""
    games = []
    for i, (d, seats, w) in enumerate(
        [(0, ("A", NASTY), 0), (0, (NASTY, "A"), 1), (1, ("A", NASTY), 0), (1, (NASTY, "A"), 0)]
    ):
        rec = with_winner(play(i, seats), w)
        when = START + timedelta(minutes=10 * i)
        games.append(StoredGame(i, f"deck={d}/game={i}", d, i % 2, when, rec))
    games[1].record.faults.append(Fault(0, "timeout", "<script>alert('x')</script> & late", 2))
    return games


@pytest.fixture(scope="module")
def report() -> tuple[str, Standings]:
    games = nasty_games()
    s = compute_standings(games, [e.name for e in detail().entrants])
    return render_html(detail(), games, s), s


def test_html_is_self_contained(report: tuple[str, Standings]) -> None:
    html, _ = report
    assert html.startswith("<!DOCTYPE html>")
    assert re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I) is None
    assert re.search(r"<script|<link|<img|<iframe|@import", html, re.I) is None
    # The only url() references are the SVG's internal ones (clip paths): url(#id).
    assert re.search(r"url\((?!#)", html) is None
    assert re.search(r"""href=["'](?!#)""", html) is None
    assert "<svg" in html and "<?xml" not in html and "<!DOCTYPE svg" not in html
    assert "<metadata" not in html
    # Text stays text in the plot (svg.fonttype none): the bot names are <text> elements.
    assert "<text" in html


def test_html_escapes_third_party_text(report: tuple[str, Standings]) -> None:
    html, _ = report
    assert NASTY not in html and "<script>" not in html and "<cup>" not in html
    assert "&lt;b&gt;&amp;" in html
    assert "&lt;script&gt;alert(" in html
    assert "spring &lt;cup&gt;" in html
    assert "evil-plugin" in html and "6.6.6" in html


def test_html_standings_match(report: tuple[str, Standings]) -> None:
    html, s = report
    tables = Cells()
    tables.feed(html)
    standings = tables.tables[0]
    assert standings[0][:4] == ["#", "bot", "Elo", "95% interval"]
    # Same numbers as the hand-worked terminal table: A 1595 [1368, 1822], 75.0% [30.1, 95.4].
    a_row, nasty_row, b_row = standings[1], standings[2], standings[3]
    assert a_row[:8] == ["1", "A", "1595", "[1368, 1822]", "4", "3", "0", "1"]
    assert a_row[8:11] == ["75.0%", "[30.1, 95.4]", "0"]
    assert nasty_row[:4] == ["2", NASTY, "1405", "[1178, 1632]"]
    assert nasty_row[8:11] == ["25.0%", "[4.6, 69.9]", "1"]
    assert s["A"].elo is not None and f"{s['A'].elo:.0f}" == "1595"
    # B entered but never played: listed, unrated.
    assert b_row[:5] == ["", "B", "-", "", "0"]


def test_html_matrices_and_provenance(report: tuple[str, Standings]) -> None:
    html, _ = report
    tables = Cells()
    tables.feed(html)
    # Head to head: A scored 3 of 4 against <b>&: 75 [30, 95], n=4; the diagonal is empty.
    h2h = tables.tables[1]
    assert h2h[0] == ["", "1", "2"]
    assert h2h[1] == ["1. A", "", "75 [30, 95] n=4"]
    assert h2h[2] == [f"2. {NASTY}", "25 [5, 70] n=4", ""]
    # LOS: Phi(ln 3 / (4/3)) = 79.5%.
    los = tables.tables[2]
    assert los[1] == ["1. A", "", "79.5"] and los[2] == [f"2. {NASTY}", "20.5", ""]
    faults = next(t for t in tables.tables if t[0][:2] == ["bot", "faults"])
    assert faults[0] == ["bot", "faults", "timeout", "examples"]
    assert faults[1][:3] == [NASTY, "1", "1"]
    text = " ".join(html.split())
    for fact in [
        "<dt>deck set</dt><dd>random:2:5</dd>",
        "<dt>decks</dt><dd>2</dd>",
        "<dt>repeats</dt><dd>1</dd>",
        "<dt>seed</dt><dd>42</dd>",
        "<dt>players per table</dt><dd>2</dd>",
        "<dt>created</dt><dd>2024-05-01 12:00:00 UTC</dd>",
        "<dt>updated</dt><dd>2024-05-01 14:30:00 UTC</dd>",
        "2024-05-01 12:00:00 UTC to 2024-05-01 12:30:00 UTC (30 min 00 s)",
        "<dt>games stored</dt><dd>4 (4 rated)</dd>",
    ]:
        assert fact in text
    assert "This tournament is" not in text


def test_html_robust_to_missing_configuration() -> None:
    games = three_of_four()
    d = detail(status="running")
    d.configuration.clear()
    d.configuration["move_time"] = None
    html = render_html(d, games, compute_standings(games))
    text = " ".join(html.split())
    assert "<dt>deck set</dt><dd>-</dd>" in text
    assert "<dt>move time (s)</dt><dd>none</dd>" in text
    assert "This tournament is running" in html


def test_html_with_no_games() -> None:
    html = render_html(detail(), [], compute_standings([], ["A"]))
    assert "<svg" not in html and "No bot committed a fault." in html


def test_plot_leaves_matplotlib_state_alone() -> None:
    before = dict(matplotlib.rcParams)
    had_pyplot = "matplotlib.pyplot" in sys.modules
    svg = elo_plot_svg(compute_standings(three_of_four()))
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert dict(matplotlib.rcParams) == before
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot
    # Deterministic: the same standings give the same SVG.
    assert elo_plot_svg(compute_standings(three_of_four())) == svg


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys, leaderboard.report; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
