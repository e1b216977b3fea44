"""The replay page: the states it embeds (replayed through the engine), what a hidden game's
page holds, the ``replay --html`` command, and the page itself in a real browser.

The browser tests drive Debian's chromium through its chromedriver (never a downloaded one).
Where either is missing they are skipped with the reason, unless ``ARENA_REQUIRE_BROWSER=1``
(the CI sets it), which turns that into a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from browsers import headless_chromium, save_docs_image
from click.testing import CliRunner

from arena.cli.main import cli
from arena.game import Card, Event, Game
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import GameRecord
from bots.uniform import UniformBot
from leaderboard.replay_page import (
    ReplayError,
    replay_data,
    replay_match,
    replay_page_html,
    replay_round,
)
from leaderboard.store import EntrantInfo, Store

G, PRIEST, BARON, MAID, PRINCE, KING, COUNTESS, PRINCESS = (Card(v) for v in range(1, 9))
#: Princess set aside, three Guards face up; seat 0 is dealt a Priest and draws a Guard, seat 1
#: is dealt a Baron and draws the King; then seat 0 draws a Handmaid.
DECK = [8, 1, 1, 1, 2, 3, 1, 6, 4, 5, 2, 3, 4, 5, 7, 1]
NAMES = ("uniform", "uniform:seed=1")


def play(opening: tuple[str, ...] = (), seed: int = 1, bots: tuple[Any, ...] = ()) -> GameRecord:
    """A real record: the given opening on :data:`DECK`, then the bots (uniform by default)."""
    players = bots or (UniformBot(), UniformBot())
    handles = [InProcessHandle(b, name=n) for b, n in zip(players, NAMES, strict=True)]
    return Referee(move_time=None).play_round(handles, deck=DECK, seed=seed, opening=opening)


class Crasher:
    """A bot whose every move raises."""

    def act(self, observation: Any) -> Any:
        raise RuntimeError("no idea")


# --- the states --------------------------------------------------------------------------------


def test_every_step_of_a_concrete_deal() -> None:
    record = play(("Priest->1", "King->0", "Baron->1"))
    steps = replay_round(record).steps
    assert [s.kind for s in steps] == ["deal", "move", "move", "move"]
    assert all(s.opening for s in steps[1:])
    assert [s.hands for s in steps] == [
        ((PRIEST, G), (BARON,)),
        ((G,), (BARON, KING)),
        ((BARON, MAID), (G,)),  # the King swapped hands, then seat 0 drew the Handmaid
        ((MAID,), ()),  # the Baron knocked seat 1 out
    ]
    assert {s.set_aside for s in steps} == {PRINCESS}
    assert [len(s.draw_pile) for s in steps] == [s.observations[0].deck_size for s in steps]
    assert steps[0].draw_pile[:2] == (KING, MAID)
    # what each seat knew of the other's hand
    assert [s.observations[0].known[1] for s in steps] == [None, BARON, G, None]
    assert [s.observations[1].known[0] for s in steps] == [None, None, BARON, None]
    assert steps[1].observations[1].legal_actions and not steps[1].observations[0].legal_actions
    assert steps[1].label == "seat 0 (uniform) plays Priest at seat 1 (uniform:seed=1)"
    assert steps[-1].observations[0].winners == (0,)
    assert steps[-1].events == len(record.events)


def test_page_data_of_a_concrete_deal() -> None:
    record = play(("Priest->1", "King->0", "Baron->1"))
    data = replay_data(record, game_id=7, tournament_id=3, hidden=False)
    assert data["title"] == "Game 7 of tournament 3: uniform vs uniform:seed=1"
    after_priest = data["steps"][1]
    assert after_priest["truth"]["hands"] == [[1], [3, 6]]
    assert after_priest["table"]["hand_counts"] == [1, 2]
    assert after_priest["table"]["turn"] == 1
    assert after_priest["table"]["discards"] == [[2], []]
    assert after_priest["table"]["face_up"] == [1, 1, 1]
    assert after_priest["views"][0]["known"] == [None, 3]
    assert after_priest["views"][1]["hand"] == [3, 6]
    assert after_priest["views"][1]["known"] == [None, None]
    assert after_priest["views"][1]["legal_actions"][0].startswith("Baron")
    assert data["steps"][-1]["table"]["end_reason"] == "last_standing"
    assert data["steps"][-1]["table"]["alive"] == [True, False]
    # every event once, tagged with the step that caused it, the private ones marked
    events = data["rounds"][0]["events"]
    assert [e["text"] for e in events] == [e.text(NAMES) for e in record.events]
    assert [e["step"] for e in events] == sorted(e["step"] for e in events)
    priest = [e for e in events if "sees that" in e["text"]]
    assert priest == [
        {
            "text": "seat 0 (uniform) sees that seat 1 (uniform:seed=1) holds Baron",
            "visible_to": [0],
            "step": 1,
        }
    ]
    assert data["rounds"][0]["end_text"].endswith("seat 0 (uniform) wins")


def test_a_fault_is_a_step_that_knocks_its_seat_out() -> None:
    record = play(("Priest->1",), bots=(UniformBot(), Crasher()))
    assert [f.kind for f in record.faults] == ["crash"]
    steps = replay_round(record).steps
    assert [s.kind for s in steps] == ["deal", "move", "fault"]
    fault = steps[-1]
    assert fault.seat == 1 and fault.fault == record.faults[0]
    assert "fault (crash): act raised RuntimeError: no idea" in fault.label
    assert fault.observations[0].alive == (True, False)
    assert fault.observations[0].winners == (0,)
    data = replay_data(record, game_id=1, tournament_id=1, hidden=False)
    assert data["steps"][-1]["fault"]["kind"] == "crash"
    assert any("forfeits" in e["text"] and e["step"] == 2 for e in data["rounds"][0]["events"])


def test_a_match_steps_through_every_round() -> None:
    handles = [InProcessHandle(UniformBot(), name=n) for n in NAMES]
    match = Referee(move_time=None).play_match(handles, seed=4)
    rounds = replay_match(match)
    assert [r.record for r in rounds] == match.rounds
    assert rounds[0].tokens_before == (0, 0)
    assert rounds[-1].tokens_after == tuple(match.tokens)
    assert all(a.tokens_after == b.tokens_before for a, b in pairwise(rounds))
    data = replay_data(match, game_id=None, tournament_id=None, hidden=False)
    assert data["match"] and data["match_winner"] == match.winner
    assert sorted({s["round"] for s in data["steps"]}) == list(range(len(match.rounds)))
    assert len(data["steps"]) == sum(len(r.steps) for r in rounds)


def test_a_record_that_does_not_play_again_is_refused() -> None:
    record = play(("Priest->1", "King->0", "Baron->1"))
    swapped = GameRecord.from_json({**record.to_json(), "deck": [8, 1, 1, 1, 3, 2, *DECK[6:]]})
    with pytest.raises(ReplayError, match="does not play again"):
        replay_round(swapped)
    wrong_seat = GameRecord.from_json(
        {**record.to_json(), "actions": [[1, "Priest->0"], *record.to_json()["actions"][1:]]}
    )
    with pytest.raises(ReplayError, match="action 1 is seat 1's, but seat 0 moves"):
        replay_round(wrong_seat)


# --- hidden games and untrusted text -----------------------------------------------------------


def embedded(page: str) -> dict[str, Any]:
    """The JSON the page embeds."""
    found = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_hidden_page_holds_only_what_every_seat_saw() -> None:
    record = play(("Priest->1", "King->0"))
    private = [e.text(NAMES) for e in record.events if not e.public]
    assert private  # deals, draws, the Priest's look, the cards received in the swap
    shown = replay_page_html(record, game_id=1, tournament_id=1, hidden=False)
    hidden = replay_page_html(record, game_id=1, tournament_id=1, hidden=True)
    assert all(text in shown for text in private)
    assert not [text for text in private if text in hidden]
    data = embedded(hidden)
    assert data["hidden"] is True
    for step in data["steps"]:
        assert set(step) == {"round", "kind", "seat", "label", "opening", "fault", "table"}
    assert all(e["visible_to"] is None for e in data["rounds"][0]["events"])
    assert '"truth"' not in hidden and '"views"' not in hidden and '"hand"' not in hidden
    assert '"truth"' in shown and '"views"' in shown


def test_a_hidden_page_adds_the_private_view_of_the_readers_own_seat_alone() -> None:
    record = play(("Priest->1", "King->0"))
    mine = [e.text(NAMES) for e in record.events if e.visible_to == (0,)]
    theirs = [e.text(NAMES) for e in record.events if e.visible_to == (1,)]
    assert mine and theirs  # each seat's deal and draws
    page = replay_page_html(record, game_id=1, tournament_id=1, hidden=True, own_seats={0})
    assert all(text in page for text in mine)
    assert not [text for text in theirs if text in page]
    data = embedded(page)
    assert data["hidden"] is True and data["own_seats"] == [0]
    assert all(e["visible_to"] in (None, [0], [0, 1]) for e in data["rounds"][0]["events"])
    for step in data["steps"]:
        assert "truth" not in step and step["views"][1] is None
        assert step["views"][0]["hand"]
    # a page that is not hidden shows every seat, whatever the reader's seats
    shown = embedded(replay_page_html(record, game_id=1, tournament_id=1, hidden=False))
    assert shown["own_seats"] == [] and all(shown["steps"][0]["views"])


def test_untrusted_names_are_escaped() -> None:
    name = "</script><script>alert(1)</script>"
    record = play(("Priest->1",))
    record.seats = [name, "b"]
    page = replay_page_html(record, game_id=1, tournament_id=1, hidden=False)
    assert name not in page and "<script>alert" not in page
    assert embedded(page)["seats"] == [name, "b"]


# --- the command -------------------------------------------------------------------------------


def store_game(url: str, record: GameRecord, secret: int | None = None) -> int:
    """Store ``record`` as the one game of a new tournament (on secret decks with ``secret``);
    returns the game's id."""
    store = Store(url)
    store.create_schema()
    entrants = [
        EntrantInfo(n, "uniform", {}, "reference", "loveletter-arena", "0.1.0") for n in NAMES
    ]
    # a secret deck set's spec: its decks were drawn from the secret
    decks = "balanced:1" if secret is not None else "test:1"
    tid = store.start_tournament(
        name="replay",
        configuration={"bots": list(NAMES), "decks": decks},
        seed=1,
        variant="classic",
        players=2,
        entrants=entrants,
        decks=[record.deck],
        secret=secret,
    )
    store.record_block(tid, [("g0", 0, 0, record)])
    return store.stored_games(tid)[0].id


def test_replay_html_writes_the_page(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/a.db"
    record = play(("Priest->1",))
    game = store_game(url, record)
    page = tmp_path / "game.html"
    runner = CliRunner()
    done = runner.invoke(cli, ["replay", str(game), "--html", str(page), "--db", url])
    assert done.exit_code == 0, done.output
    html = page.read_text(encoding="utf-8")
    data = embedded(html)
    assert data["game_id"] == game and data["hidden"] is False
    assert len(data["steps"]) == 1 + len(record.actions) + len(record.faults)
    assert "<script src" not in html and "<link" not in html and "<img" not in html
    assert set(re.findall(r"https?://[^\"' ]*", html)) == {"http://www.w3.org/2000/svg"}

    both = runner.invoke(cli, ["replay", str(game), "--html", str(page), "--json", "--db", url])
    assert both.exit_code == 2 and "choose one" in both.output
    nowhere = tmp_path / "missing" / "game.html"
    failed = runner.invoke(cli, ["replay", str(game), "--html", str(nowhere), "--db", url])
    assert failed.exit_code == 2
    assert len(failed.output.strip().splitlines()) == 1 and "cannot write" in failed.output


def test_replay_html_of_an_unfinished_secret_tournament_is_public(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    record = play(("Priest->1",))
    game = store_game(url, record, secret=123456789)
    page = tmp_path / "game.html"
    done = CliRunner().invoke(cli, ["replay", str(game), "--html", str(page), "--db", url])
    assert done.exit_code == 0, done.output
    html = page.read_text(encoding="utf-8")
    assert embedded(html)["hidden"] is True and '"truth"' not in html
    assert not [e for e in record.events if not e.public and e.text(NAMES) in html]


def test_replay_html_refuses_a_record_that_does_not_play_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    record = play(("Priest->1", "King->0", "Baron->1"))
    record.actions[1] = (1, "Guard->0:Priest")
    game = store_game(url, record)
    page = tmp_path / "game.html"
    done = CliRunner().invoke(cli, ["replay", str(game), "--html", str(page), "--db", url])
    assert done.exit_code == 2 and f"game {game}: the record does not play again" in done.output
    assert len(done.output.strip().splitlines()) == 1 and not page.exists()


# --- in a real browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium for the module (:mod:`browsers`)."""
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def stored_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GameRecord]:
    """The page ``arena replay --html`` writes for a real stored game (a Priest's look first,
    then two uniform bots), and that game's record as stored."""
    folder = tmp_path_factory.mktemp("replay")
    url = f"sqlite:///{folder}/games.db"
    game = store_game(url, play(("Priest->1",), seed=31))
    page = folder / "game.html"
    done = CliRunner().invoke(cli, ["replay", str(game), "--html", str(page), "--db", url])
    assert done.exit_code == 0, done.output
    return page, Store(url).game(game)[1].record


def expected_steps(record: GameRecord) -> list[tuple[Game, list[Event]]]:
    """The table after every step of ``record`` (a game without faults), by the engine, with
    the events of that step."""
    tables = []
    game = Game(record.players, record.variant, deck=record.deck, first=record.first)
    tables.append((_copy(game), list(game.events)))
    for _, action in record.actions:
        before = len(game.events)
        game.play(action)
        tables.append((_copy(game), game.events[before:]))
    return tables


def _copy(game: Game) -> Game:
    copy = Game(game.players, game.variant, deck=game.deck, first=game.first)
    for _, action in game.actions:
        copy.play(action)
    return copy


#: What the page shows now, read in one round trip: the step counter, each seat's hand (card
#: values, "back" for a card face down), the deck count, the set-aside card, the log lines and
#: the highlighted ones.
SHOWN = """
const cards = (node) => Array.from(node.querySelectorAll(".card"), (c) => c.dataset.card);
const lines = (selector) =>
  Array.from(document.querySelectorAll(selector), (li) => li.firstChild.textContent);
return {
  position: document.getElementById("position").textContent,
  hands: Array.from(document.querySelectorAll(".seat .hand"), cards),
  deck: document.getElementById("deck-count").textContent,
  aside: document.getElementById("set-aside").dataset.card,
  draw_pile: document.getElementById("draw-pile") !== null,
  log: lines("#log li"),
  current: lines("#log li.current"),
};
"""


def shown(driver: Any) -> dict[str, Any]:
    """What the page shows now (:data:`SHOWN`)."""
    found: dict[str, Any] = driver.execute_script(SHOWN)
    return found


def test_the_page_steps_through_a_stored_game_in_a_browser(
    browser: Any, stored_page: tuple[Path, GameRecord]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    page, record = stored_page
    assert not record.faults
    tables = expected_steps(record)
    last = len(tables)
    browser.get(page.as_uri())
    body = browser.find_element(By.TAG_NAME, "body")
    view = Select(browser.find_element(By.ID, "view"))
    assert [o.text for o in view.options] == [
        "Everything",
        "As seat 0 (uniform) saw it",
        "As seat 1 (uniform:seed=1) saw it",
    ]

    # everything, forward with the keyboard: true hands, deck count, the step's log lines
    for k, (game, events) in enumerate(tables):
        now = shown(browser)
        assert now["position"] == f"step {k + 1} of {last}"
        assert now["hands"] == [[str(int(c)) for c in game.hand(s)] for s in range(2)]
        assert now["deck"] == str(game.observation(0).deck_size)
        assert now["aside"] == str(int(record.deck[0])) and now["draw_pile"]
        assert now["current"] == [e.text(record.seats) for e in events]
        assert now["log"] == [e.text(record.seats) for e in record.events]
        body.send_keys(Keys.ARROW_RIGHT)
    assert shown(browser)["position"] == f"step {last} of {last}"  # no step past the end
    assert "wins" in browser.find_element(By.ID, "banner").text

    # as seat 0 saw it, backward with the button: its hand, the other hand face down (or the
    # card it knew), only the log lines it saw
    view.select_by_value("0")
    previous = browser.find_element(By.ID, "prev")
    seen_log = [e.text(record.seats) for e in record.events if e.visible(0)]
    for k in reversed(range(last)):
        game, events = tables[k]
        seen = game.observation(0)
        other = ["back"] * len(game.hand(1))
        if other and seen.known[1] is not None:
            other[0] = str(int(seen.known[1]))
        now = shown(browser)
        assert now["position"] == f"step {k + 1} of {last}"
        assert now["hands"] == [[str(int(c)) for c in seen.hand], other]
        assert now["deck"] == str(seen.deck_size)
        assert now["aside"] == "back" and not now["draw_pile"]
        assert now["current"] == [e.text(record.seats) for e in events if e.visible(0)]
        assert now["log"] == seen_log
        if k:
            previous.click()

    # the Priest's look: seat 0 knows seat 1's card; the picture for the docs
    browser.find_element(By.ID, "next").click()
    known = tables[1][0].observation(0).known[1]
    assert known is not None and shown(browser)["hands"][1][0] == str(int(known))
    save_docs_image(browser.get_screenshot_as_png(), "replay.png")

    # End and Home keys, and the slider
    body.send_keys(Keys.END)
    assert shown(browser)["position"] == f"step {last} of {last}"
    body.send_keys(Keys.HOME)
    assert shown(browser)["position"] == f"step 1 of {last}"
    browser.execute_script(
        "const s = document.getElementById('slider'); s.value = 2;"
        "s.dispatchEvent(new Event('input'));"
    )
    assert shown(browser)["position"] == f"step 3 of {last}"
    assert browser.get_log("browser") == []


def test_a_hidden_page_in_a_browser_shows_every_hand_face_down(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    record = play(("Priest->1",), seed=31)
    page = tmp_path / "hidden.html"
    page.write_text(replay_page_html(record, game_id=1, tournament_id=1, hidden=True))
    browser.get(page.as_uri())
    view = Select(browser.find_element(By.ID, "view"))
    assert [o.text for o in view.options] == ["What every seat saw"]
    public = [e.text(record.seats) for e in record.events if e.public]
    for k in range(len(embedded(page.read_text())["steps"])):
        now = shown(browser)
        assert now["position"].startswith(f"step {k + 1} of")
        assert {card for hand in now["hands"] for card in hand} <= {"back"}
        assert now["aside"] == "back" and not now["draw_pile"]
        assert now["log"] == public
        browser.find_element(By.ID, "next").click()


def test_a_fault_and_the_end_are_shown_plainly_in_a_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    record = play(("Priest->1",), bots=(UniformBot(), Crasher()))
    page = tmp_path / "fault.html"
    page.write_text(replay_page_html(record, game_id=3, tournament_id=1, hidden=False))
    browser.get(page.as_uri())
    assert not browser.find_elements(By.CSS_SELECTOR, "#banner .fault")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    fault = browser.find_element(By.CSS_SELECTOR, "#banner .fault").text
    assert fault == (
        "Fault: seat 1 (uniform:seed=1): crash: act raised RuntimeError: no idea"
        " \u2014 its seat is out of the round"
    )
    end = browser.find_element(By.CSS_SELECTOR, "#banner .end").text
    assert end == "round over (only one player is left): seat 0 (uniform) wins"
    assert "out" in browser.find_element(By.CSS_SELECTOR, '.seat[data-seat="1"]').text
