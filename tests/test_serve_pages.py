"""Issue 38 item 5, "why did my bot lose", through the real server on a loopback port: a
participant replays its own seat's view of its bots' games of finished tournaments (its hand,
its draws), which another participant and an anonymous visitor do not see; and the pages are
read in chromium at a desktop's and a phone's width without the page scrolling sideways, the
rating chart with its axes, times in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browsers import follow, headless_chromium, save_docs_image
from serving import Server, add_participant, upload, wait_until
from wheels import bot_wheel

pytestmark = pytest.mark.usefixtures("bubblewrap")


#: Each bot writes to stderr as it chooses each move: its participant's name and the move.
CHATTY = """
import sys


class Chatty(FirstLegal):
    said = 0

    def act(self, observation):
        self.said += 1
        print("{name}-SAYS move", self.said, file=sys.stderr, flush=True)
        return super().act(observation)
"""


def _game(server: Server, game_id: int, token: str | None) -> dict[str, Any]:
    code, found = server.get(f"/api/games/{game_id}", token)
    assert code == 200, found
    return dict(found)


def _private(found: dict[str, Any]) -> list[list[int]]:
    """Who saw each private event the answer holds."""
    return [e["visible_to"] for e in found["events"] if e["visible_to"] is not None]


def _in_progress(server: Server) -> bool:
    """Whether the leaderboard lists alice's upload as placing, with nothing private."""
    board = server.get("/api/leaderboard", None)[1]
    shown = [{**u, "created": None} for u in board["in_progress"]]
    alices = {"id": 1, "participant": "alice", "bots": ["alicebot"], "status": "placing"}
    return shown == [{**alices, "created": None}]


@pytest.mark.slow
def test_a_participant_replays_its_own_seat_and_pages_fit_a_phone(tmp_path: Path) -> None:
    """Alice's and Bob's bots are placed against each other (tournaments on secret decks, now
    finished); Alice reads her seat's private events (her draws) in their games, Bob his own
    seat's alone, Carol (not seated) and anonymous the public events alone; then the pages, in
    chromium at 1280 and 400 pixels wide."""
    server = Server(
        tmp_path,
        *("--check-rounds", "1", "--field", "", "--ladder-decks", "1", "--rated-decks", "0"),
        *("--workers", "1"),
    )
    alice, bob = add_participant(server, "alice"), add_participant(server, "bob")
    carol = add_participant(server, "carol")
    server.start()
    try:
        for name, token in (("alice", alice), ("bob", bob)):
            where = tmp_path / name
            where.mkdir()
            chatty = CHATTY.format(name=name.upper())
            wheel = bot_wheel(where, f"{name}-bot", f"{name}bot", extra=chatty, factory="Chatty")
            sent = upload(server, token, wheel)
            if name == "alice":  # placed once there is an opponent: in progress meanwhile
                wait_until("alice's upload in progress", lambda: _in_progress(server), 120)
                assert "alice: alicebot" in server.page("/")
            if name == "bob":
                assert server.wait_final(token, sent)["status"] == "ranked"
        server.board(4)
        code, page = server.get("/api/bots/alicebot@1", None)
        assert code == 200 and page["participant"] == "alice"
        games = [g["id"] for g in page["recent_games"]]
        assert len(games) == 4
        alice_said, talked = 0, games[0]
        for game_id in games:
            seats = _game(server, game_id, None)["seats"]
            mine = next(i for i, s in enumerate(seats) if s.startswith("alicebot"))
            theirs = next(i for i, s in enumerate(seats) if s.startswith("bobbot"))
            # the tournament is finished once the ladder records it so
            seen = wait_until(
                "alice's seat shown",
                lambda g=game_id: _game(server, g, alice)["own_seats"] or None,  # type: ignore[misc]
                60,
            )
            assert seen == [mine]
            own = _game(server, game_id, alice)
            assert own["hidden"] and own["deck"] is None  # the rest stays hidden
            assert [mine] in _private(own)  # her draws
            assert all(mine in who for who in _private(own))
            his = _game(server, game_id, bob)
            assert his["own_seats"] == [theirs] and [theirs] in _private(his)
            assert all(theirs in who for who in _private(his))
            # what each bot wrote, beside its own moves, to its own participant alone
            said = own.get("output", [])  # a game may end before her bot's first move
            assert {o["seat"] for o in said} <= {mine}
            assert all(o["text"].startswith("ALICE-SAYS move") for o in said)
            alice_said += len(said)
            talked = game_id if said else talked
            assert {o["seat"] for o in his.get("output", ())} <= {theirs}
            assert "ALICE-SAYS" not in json.dumps(his)
            for token in (carol, None):
                public = _game(server, game_id, token)
                assert public["own_seats"] == [] and _private(public) == []
                assert "output" not in public and "-SAYS" not in json.dumps(public)
        assert alice_said > 0
        # on the pages: alice through /me (the token typed, CSRF-checked), everyone else public
        cookie, csrf = server.form("/me")
        fields = {"csrf": csrf, "token": alice, "game": str(talked)}
        seats = _game(server, talked, None)["seats"]
        mine = next(i for i, s in enumerate(seats) if s.startswith("alicebot"))
        code, replay = server.post_form("/me", fields, None, cookie)
        assert code == 200 and f'"own_seats": [{mine}]' in replay
        assert "ALICE-SAYS" in replay and "BOB-SAYS" not in replay
        code, replay = server.post_form("/me", {**fields, "token": carol}, None, cookie)
        assert code == 200 and '"own_seats": []' in replay and "-SAYS" not in replay
        assert '"own_seats": []' in server.page(f"/games/{talked}")
        assert "-SAYS" not in server.page(f"/games/{talked}")
        code, _ = server.post_form("/me", {**fields, "csrf": "forged"}, None, cookie)
        assert code == 403
        _pages_in_a_browser(server, alice, talked)
    finally:
        server.kill()


#: Each page read, and the name of its screenshot's file (``None``: no screenshot).
PAGES = [("/", "serve-leaderboard"), ("/bots/alicebot@1", "serve-bot"), ("/me", None)]


def _pages_in_a_browser(server: Server, token: str, game_id: int) -> None:
    from selenium.webdriver.common.by import By

    for width in (1280, 400):
        with headless_chromium(max(width, 800), 900) as browser:
            # a window is at least 500 pixels wide: a phone's screen is emulated
            metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 800}
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            inner = width
            for path, shot in [*PAGES, (f"/games/{game_id}", None)]:
                browser.get(f"{server.url}{path}")
                # each page says its viewport is the device's width
                assert browser.execute_script("return window.innerWidth") == width, path
                wide = browser.execute_script("return document.documentElement.scrollWidth")
                assert wide <= inner, (path, width, wide, inner)
                if shot and width < 1000:
                    save_docs_image(
                        browser.get_screenshot_as_png(), f"{shot}-phone.png", True, phone=True
                    )
            browser.get(f"{server.url}/bots/alicebot@1")
            chart = browser.find_element(By.CSS_SELECTOR, "svg.chart")
            labels = [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.axis-label")]
            assert labels == ["Elo", "time (UTC)"]
            assert len(chart.find_elements(By.CSS_SELECTOR, "line.axis")) == 2
            assert browser.find_element(By.ID, "about").text.startswith("By alice")
            times = browser.find_elements(By.TAG_NAME, "time")
            assert times and all(t.text.endswith("ago") or t.text == "just now" for t in times)
            assert all(t.get_attribute("title").endswith(" UTC") for t in times)
            # alice's own view of a game, through /me
            browser.get(f"{server.url}/me")
            form = browser.find_element(By.CSS_SELECTOR, "form.game")
            form.find_element(By.NAME, "game").send_keys(str(game_id))
            form.find_element(By.NAME, "token").send_keys(token)
            follow(browser, form.find_element(By.TAG_NAME, "button"))
            options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#view option")]
            assert options[0] == "What every seat saw" and len(options) == 2
            assert options[1].endswith("saw it (your bot)")
            # what her bot wrote, under the move it chose
            step = browser.execute_script(
                "const data = JSON.parse(document.getElementById('replay-data').textContent);"
                "const at = data.steps.findIndex(s => s.output !== undefined);"
                "const slider = document.getElementById('slider'); slider.value = String(at);"
                "slider.dispatchEvent(new Event('input')); return at;"
            )
            assert step > 0
            said = browser.find_element(By.CSS_SELECTOR, "#banner .output pre").text
            assert said.startswith("ALICE-SAYS move")
            wide = browser.execute_script("return document.documentElement.scrollWidth")
            assert wide <= inner, ("/me game", width, wide, inner)
            # a version that never played: a page that says so, not the API's JSON
            browser.get(f"{server.url}/bots/alicebot@7")
            assert "has played in the ladder" in browser.find_element(By.ID, "missing").text
