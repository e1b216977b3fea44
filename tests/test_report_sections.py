"""The report's richer parts on a small stored tournament of concrete deals: how the ratings
settled, results by seat, card plays and knockouts, faults linked to their games, replay pages
next to the HTML report, and `arena report`'s text and JSON saying everything its help
promises."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.hosting.sandbox import choose_sandbox
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import Fault, GameRecord
from bots.uniform import UniformBot
from leaderboard.card_plays import card_plays
from leaderboard.rating_history import prefix_sizes, rating_history
from leaderboard.replay_page import replay_page_html
from leaderboard.report_pages import MAX_FAULT_PAGES, pages_dir, plan_pages
from leaderboard.seat_results import SeatScore, seat_results
from leaderboard.standings import compute_standings
from leaderboard.store import EntrantInfo, Store, StoredGame

# Classic 2-player decks, top first: set aside, three face up, seat 0, seat 1, then the pile.
# GUARD_DECK: seat 0 holds a Guard and draws a Handmaid, seat 1 holds the Princess.
GUARD_DECK = [2, 1, 1, 3, 1, 8, 4, 1, 1, 2, 3, 4, 5, 5, 6, 7]
# BARON_DECK: seat 0 holds a Baron and draws a Guard, seat 1 holds the Princess.
BARON_DECK = [2, 1, 1, 1, 3, 8, 1, 1, 2, 3, 4, 4, 5, 5, 6, 7]


class Crasher:
    """A bot that raises on its first move (a recorded ``crash`` fault)."""

    def act(self, observation: object) -> object:
        raise RuntimeError("boom")


def deal(seats: tuple[str, str], deck: list[int], opening: list[str]) -> GameRecord:
    """A real round on ``deck`` whose first move is ``opening`` (or the bots' own)."""
    handles = [
        InProcessHandle(Crasher() if name == "C" else UniformBot(), name=name) for name in seats
    ]
    return Referee(move_time=None).play_round(handles, deck=deck, seed=7, opening=opening)


#: (deck position, seats, opening) of the stored games, in the order they are stored:
#: 1. A's Guard names B's Princess: B is out.   2. The same with the seats swapped: A is out.
#: 3. A's Baron (with a Guard) meets B's Princess: A is out by its own play.  4. Swapped.
#: 5. C crashes on its first move and forfeits: A wins.
GAMES = [
    (0, ("A", "B"), ["Guard->1:Princess"]),
    (0, ("B", "A"), ["Guard->1:Princess"]),
    (1, ("A", "B"), ["Baron->1"]),
    (1, ("B", "A"), ["Baron->1"]),
    (0, ("C", "A"), []),
]


def make_store(path: Path, secret: int | None = None, finished: bool = True) -> Store:
    """A store holding the tournament of :data:`GAMES` (entrants A, B, C)."""
    store = Store(f"sqlite:///{path}")
    store.create_schema()
    entrants = [
        EntrantInfo(n, "uniform", {"k": i}, "reference", "loveletter-arena", "0.1.0")
        for i, n in enumerate("AB")
    ] + [EntrantInfo("C", "crasher", {}, "crashers", "crash-dist", "6.6.6")]
    config = {
        "decks": "balanced:2" if secret is not None else "file:two.txt",
        "bots": ["A", "B", "C"],
        "players": 2,
        "repeat": 1,
        "move_time": 1.0,
        "max_faults": 10,
    }
    decks = [GUARD_DECK, BARON_DECK]
    tid = store.start_tournament("two decks", config, 5, "classic", 2, entrants, decks, secret)
    store.record_sandbox(tid, choose_sandbox("none").enforcement())
    block = [
        (f"repeat=0/deck={d}/seats={json.dumps(list(seats))}", d, 0, deal(seats, decks[d], op))
        for d, seats, op in GAMES
    ]
    store.record_block(tid, block)
    store.set_status(tid, "finished" if finished else "interrupted")
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return make_store(tmp_path_factory.mktemp("report") / "arena.db")


@pytest.fixture(scope="module")
def games(store: Store) -> list[StoredGame]:
    return store.stored_games(1)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


# -- the figures ---------------------------------------------------------------------------------


def test_the_deals_play_as_described(games: list[StoredGame]) -> None:
    assert [g.record.winners for g in games] == [[0], [0], [1], [1], [1]]
    assert games[4].record.faults[0].kind == "crash"


def test_card_plays_and_knockouts(games: list[StoredGame]) -> None:
    plays = card_plays(games)
    a, b, c = plays["A"], plays["B"], plays["C"]
    # A played the Guard of game 1 and the Baron of game 3; B those of games 2 and 4.
    assert a.plays == {1: 1, 3: 1} and b.plays == {1: 1, 3: 1} and c.plays == {}
    assert (a.games, b.games, c.games) == (5, 4, 1)
    # A is out by B's Guard (game 2) and by its own Baron (game 3); its Guard put B out.
    assert a.knocked_out == 2 and a.by_card == {1: 1, 3: 1} and a.own == {3: 1}
    assert a.knocks == {1: 1} and b.knocks == {1: 1}
    assert a.share(1) == 0.5 and c.share(1) is None
    # C's crash is a forfeit, not a knockout by a card.
    assert (c.forfeits, c.knocked_out, c.by_card) == (1, 0, {})
    assert a.to_dict()["knocked_out_by_own_play"] == {"Baron": 1}


def test_results_by_seat(games: list[StoredGame]) -> None:
    seats = seat_results(games, 2)
    # The first seat won games 1, 2 on deck 0 and lost game 5 there; lost both on deck 1.
    assert seats.first == SeatScore(5, 2.0)
    assert seats.decks == {0: SeatScore(3, 2.0), 1: SeatScore(2, 0.0)}
    assert seats.favoured(1) == [] and seats.favoured(-1) == []
    lo, hi = seats.decks[0].interval or (0.0, 0.0)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (20.8, 93.9)
    # A moved first in games 1 (won) and 3 (lost), second in 2 (lost), 4 and 5 (won).
    assert seats.bots["A"] == (SeatScore(2, 1.0), SeatScore(3, 2.0))
    assert seats.bots["C"] == (SeatScore(1, 0.0), SeatScore(0, 0.0))


def test_rating_history(games: list[StoredGame]) -> None:
    assert prefix_sizes(5) == [2, 3, 4, 5]
    assert prefix_sizes(0) == [] and prefix_sizes(1) == [1]
    sizes = prefix_sizes(100_000)
    assert len(sizes) <= 24 and sizes[-1] == 100_000 and sum(sizes) < 5 * 100_000
    history = rating_history(games)
    assert [p.games for p in history.points] == [2, 3, 4, 5]
    first = history.points[0]
    # Games 1 and 2: A and B one win each on one deck: equal, and no interval yet.
    assert first.elo == pytest.approx({"A": 1500.0, "B": 1500.0})
    assert first.lo == {"A": None, "B": None}
    standings = compute_standings(games)
    last = history.points[-1]
    assert last.elo == pytest.approx({s.bot: s.elo for s in standings.standings})
    assert last.lo["A"] is not None


def test_page_plans() -> None:
    record = GameRecord("classic", 2, ["A", "B"], [], 0, 0, [], [], [0], "", [0, 0], [0, 0])
    faulty = GameRecord(
        "classic", 2, ["B", "C"], [], 0, 0, [], [], [0], "", [0, 0], [0, 0],
        faults=[Fault(1, "timeout", "slow", 0)],
    )  # fmt: skip
    when = datetime(2024, 1, 1)
    many = [StoredGame(i, f"k{i}", 0, 0, when, record) for i in range(500)]
    many += [StoredGame(500 + i, f"f{i}", 0, 0, when, faulty) for i in range(250)]
    sample = plan_pages(many, "sample")
    assert sample.faults_total == 250 and len(sample.faulted) == MAX_FAULT_PAGES
    ab = sample.pairs["A", "B"]
    assert len(ab) == 20 and ab[0].id == 0 and ab[-1].id == 499
    assert len(sample.games) == MAX_FAULT_PAGES + 20 + 20 - len(
        {g.id for g in sample.pairs["B", "C"]} & {g.id for g in sample.faulted}
    )
    assert plan_pages(many, "faults").pairs == {} and len(plan_pages(many, "faults").games) == 250
    assert len(plan_pages(many, "all").games) == 750
    with pytest.raises(ValueError, match="unknown pages mode"):
        plan_pages(many, "some")


# -- the HTML report and its pages ---------------------------------------------------------------


def links(html: str) -> list[str]:
    return re.findall(r'href="([^"#][^"]*)"', html)


def test_html_sections_and_pages(store: Store, games: list[StoredGame], tmp_path: Path) -> None:
    page = tmp_path / "out" / "report.html"
    page.parent.mkdir()
    result = CliRunner().invoke(cli, ["report", "--html", str(page), "--db", store.url])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    # Every link to a file resolves, and every game has a page (5 games: all in the sample).
    hrefs = links(html)
    assert hrefs and all((page.parent / h).is_file() for h in hrefs)
    written = sorted(p.name for p in pages_dir(page).iterdir())
    assert written == sorted(f"game-{g.id}.html" for g in games)
    assert "5 replay pages" in result.stderr
    # The fault is linked to its game's page.
    crash = games[4]
    assert re.search(
        rf'crash in <a href="report-games/game-{crash.id}.html">game {crash.id}</a>', html
    )
    # The head-to-head cell of A and B links to their games, which link to their pages.
    assert re.search(r'<a class="cell" href="#games-1-2">', html)
    section = html[html.index('id="games-1-2"') :]
    section = section[: section.index("</ul>")]
    assert sorted(re.findall(r"game-(\d+)\.html", section)) == sorted(str(g.id) for g in games[:4])
    # Card plays: A played one Guard and one Baron: 50.0% each, 2 plays.
    assert re.search(r"A 2 50\.0 0\.0 50\.0 0\.0 0\.0 0\.0 0\.0 0\.0", text)
    # Knockouts: A 5 rounds, out of 2 (40.0%), by Guard 1, by Baron 1 (own 1), no forfeit.
    assert "A 5 2 40.0% 1 1 (1) 0 Guard 1" in text
    assert "C 1 0 0.0% 0 0 1 -" in text
    # Seats: the first seat scored 40.0% [11.8, 76.9] over 5 games; deck 0 66.7% [20.8, 93.9]
    # (deck positions are numbered from 0 in every command, as the store numbers them).
    assert "scored 40.0% [11.8, 76.9] over 5 rated games" in text
    assert "0 3 66.7 [20.8, 93.9]" in text and "1 2 0.0 [0.0, 65.8]" in text
    assert "How the ratings settled" in text and "at 4 points from 2 to 5 games" in text
    assert html.count("<svg") == 3


def test_pages_options(store: Store, games: list[StoredGame], tmp_path: Path) -> None:
    none = tmp_path / "none.html"
    invoke("report", "--html", str(none), "--pages", "none", "--db", store.url)
    assert links(none.read_text()) == [] and not pages_dir(none).exists()
    assert f"game {games[4].id}" in none.read_text()
    faults = tmp_path / "faults.html"
    invoke("report", "--html", str(faults), "--pages", "faults", "--db", store.url)
    assert [p.name for p in pages_dir(faults).iterdir()] == [f"game-{games[4].id}.html"]
    assert all((tmp_path / h).is_file() for h in links(faults.read_text()))


@pytest.mark.parametrize("finished", [False, True])
def test_pages_of_a_secret_tournament(tmp_path: Path, finished: bool) -> None:
    store = make_store(tmp_path / "secret.db", secret=12345, finished=finished)
    page = tmp_path / "report.html"
    invoke("report", "--html", str(page), "--pages", "all", "--db", store.url)
    game = store.stored_games(1)[0]
    written = (pages_dir(page) / f"game-{game.id}.html").read_text()
    expected = replay_page_html(game.record, game_id=game.id, tournament_id=1, hidden=True)
    assert (written == expected) is not finished


# -- text and JSON: what the help promises -------------------------------------------------------


def test_text_report_says_what_the_help_promises(store: Store) -> None:
    help_text = " ".join(invoke("report", "--help").split())
    for promised in ["likelihood of superiority", "faults", "provenance", "entrants"]:
        assert promised in help_text
    text = invoke("report", "--db", store.url)
    lines = text.splitlines()
    assert "likelihood of superiority (chance that row is stronger than column, %):" in lines
    assert any(line.startswith(" 1 A ") and "50.0" in line for line in lines)
    assert "  C: 1 faults; crash 1" in lines
    assert any("crash in repeat=0/deck=0" in line and "boom" in line for line in lines)
    assert "Bots ran in: no sandbox" in text
    for fact in [
        "  deck set: file:two.txt (2 decks)",
        "  move time (s): 1.0",
        "  fault limit: 10",
        "  seed: 5",
        "  arena version: 0.1.0",
    ]:
        assert fact in lines
    assert any(line.startswith("  games stored: 5, ") for line in lines)
    assert "  C: crasher, plugin crashers, crash-dist 6.6.6, {}" in lines
    assert '  A: uniform, plugin reference, loveletter-arena 0.1.0, {"k": 0}' in lines


def test_json_report_says_what_the_help_promises(store: Store) -> None:
    data: dict[str, Any] = json.loads(invoke("report", "--json", "--db", store.url))
    settings = data["settings"]
    assert data["tournament"] == 1 and data["status"] == "finished"
    assert settings["max_faults"] == 10 and settings["decks"] == "file:two.txt"
    assert settings["arena_version"] == "0.1.0" and settings["entrants"] == ["A", "B", "C"]
    assert settings["sandboxes"][0]["sandbox"] == "none"
    assert data["configuration"]["bots"] == ["A", "B", "C"]
    assert set(data["los"]) == {"A", "B", "C"} and data["los"]["A"]["B"] is not None
    assert data["faults"]["C"]["by_kind"] == {"crash": 1}
    assert data["entrants"][2] == {
        "name": "C",
        "bot": "crasher",
        "plugin": "crashers",
        "distribution": "crash-dist",
        "version": "6.6.6",
        "parameters": {},
    }
    assert data["plays"]["A"]["plays"] == {"Guard": 1, "Baron": 1}
    assert data["plays"]["C"]["forfeits"] == 1
    assert data["seats"]["first"]["games"] == 5 and data["seats"]["first"]["points"] == 2.0
    assert [p["games"] for p in data["history"]["points"]] == [2, 3, 4, 5]
    assert data["stored"]["first"] is not None


def test_bad_report_options_say_one_line(store: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    alone = runner.invoke(cli, ["report", "--pages", "all", "--db", store.url])
    assert alone.exit_code == 2 and "give --html" in alone.output
    missing = tmp_path / "no-such-dir" / "report.html"
    for pages in ("sample", "none"):
        result = runner.invoke(
            cli, ["report", "--html", str(missing), "--pages", pages, "--db", store.url]
        )
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert result.output.count("\n") == 1 and "cannot write" in result.output
    assert not missing.parent.exists()
