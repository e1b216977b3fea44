"""``arena serve`` as an organizer and participants use it: the real server started on a loopback
port (a process of its own, its own database and submissions store in the test's directory),
participants added with the command, packages uploaded with ``arena submit --server``, over
plain HTTP and through the form in chromium (Debian's, through its chromedriver), built in the
sandbox and checked, ownership and limits enforced, the pages read in the browser, a server
killed and started again keeping everything, a competition frozen and finished: one competition
from start to finish, as issue 24 tells it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browsers import follow, headless_chromium, save_docs_image
from serving import Server, add_participant
from wheels import PLUGIN, bot_wheel

from leaderboard import participants as P
from leaderboard.store import Store

pytestmark = pytest.mark.usefixtures("bubblewrap")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(
        tmp_path,
        *("--check-rounds", "2", "--upload-mb", "1", "--per-hour", "4"),
        *("--field", "random", "--ladder-decks", "3", "--rated-decks", "0", "--workers", "1"),
    )
    yield running
    running.kill()


def test_a_participant_is_added_once_and_only_its_tokens_hash_is_kept(server: Server) -> None:
    token = add_participant(server, "alice")
    again = server.arena("serve", "participants", "add", "alice")
    assert again.returncode == 2
    assert again.stderr.strip() == "arena: error: a participant called 'alice' exists already"
    assert token.encode() not in (server.where / "arena.db").read_bytes()
    store = Store(server.env["ARENA_DB"])
    found = P.by_token(store, token)
    assert found is not None and found.name == "alice"
    assert P.by_token(store, token + "x") is None
    assert "alice (added " in server.arena("serve", "participants", "list").stdout


@pytest.mark.slow
def test_a_competition_from_start_to_finish(server: Server, tmp_path: Path) -> None:
    """The organizer adds participants; one uploads with arena submit --server, one through
    the form in chromium; both are built, checked and placed; the pages change; nobody reads
    or withdraws another's uploads; bad uploads fail with their reason; a restart keeps
    everything; the competition is frozen and finished. The docs' screenshots are taken here."""
    with headless_chromium(1280, 800) as browser:
        _a_competition(server, tmp_path, browser)


def _a_competition(server: Server, tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    alice, bob = add_participant(server, "alice"), add_participant(server, "bob")
    carol = add_participant(server, "carol <i>c</i>")  # shown on pages: escaped
    server.start()
    (tmp_path / "a").mkdir()
    mine = bot_wheel(tmp_path / "a", "alice-bot", "alicebot")
    submitted = server.arena("submit", str(mine), "--server", server.url, "--token", alice)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.strip() == (
        "alice-bot version 1 built, checked and placed: bots alicebot "
        f"(see {server.url}/api/leaderboard)"
    )
    said = [line.split(": ")[1] for line in submitted.stderr.splitlines()]
    assert said == ["queued", "building", "checking", "placing", "ranked"][-len(said) :]
    code, state = server.get("/api/submissions/1", alice)
    assert code == 200 and state["status"] == "ranked" and "--- arena check ---" in state["log"]
    # placed: alice's bot played the field's random on the 3 secret decks, both seatings
    board = server.board(6)
    assert board["games"] == 6
    assert sorted((r["bot"], r["games"]) for r in board["standings"]) == [
        ("alicebot@1", 6),
        ("random", 6),
    ]

    # the same distribution from someone else, a project directory (packed as a source package
    # and built there): refused, and nothing of alice's is bob's to read
    (tmp_path / "b").mkdir()
    theirs = bot_wheel(tmp_path / "b", "alice-bot", "bobbot")
    project = _project(tmp_path / "b" / "project", "alice-bot", "bobbot")
    sent = server.arena("submit", str(project), "--server", server.url, "--token", bob, "--json")
    assert sent.returncode == 1, sent.stderr
    state = json.loads(sent.stdout)
    assert (state["status"], state["filename"]) == ("failed", "project.tar.gz")
    assert state["reason"] == "alice-bot belongs to participant 'alice': choose another name"
    assert "Successfully built alice-bot" in state["log"]  # the build's log, refused or not
    answer = {"id": state["id"]}
    refused = (403, {"error": "upload 1 is another participant's"})
    assert server.get("/api/submissions/1", bob) == refused
    assert server.delete("/api/submissions/1", bob) == refused  # nor withdraw it
    assert server.delete(f"/api/submissions/{answer['id']}", bob) == (
        409,
        {"error": f"upload {answer['id']} is failed: only a placed upload can be withdrawn"},
    )
    code, listed = server.get("/api/submissions", bob)
    assert code == 200 and [u["id"] for u in listed] == [answer["id"]]
    assert all("log" not in u for u in listed)

    # bad requests: one line each, and nothing stored
    assert server.get("/api/submissions", None)[0] == 401
    assert server.get("/api/submissions", "not-a-token") == (401, {"error": "unknown token"})
    assert server.post_file(bob, "notes.txt", b"hello")[0] == 400
    code, said = server.post_file(bob, "big-1.0-py3-none-any.whl", b"x" * (2 * 1024 * 1024))
    assert code == 413 and said == {"error": f"an upload may hold at most {1024 * 1024} bytes"}
    # a broken wheel fails with its reason
    code, answer = server.post_file(bob, "junk-1.0-py3-none-any.whl", b"not a zip file")
    assert code == 202
    failed = server.wait_final(bob, answer["id"])
    assert failed["status"] == "failed" and failed["reason"].startswith("the build of junk-1.0")
    assert "$ pip install" in failed["log"]  # what the failed build wrote
    # bob has made 2 uploads this hour; the limit is 4
    for _ in range(2):
        assert server.post_file(bob, "junk-1.0-py3-none-any.whl", b"no")[0] == 202
    assert server.post_file(bob, "junk-1.0-py3-none-any.whl", b"no") == (
        429,
        {"error": "at most 4 uploads per participant per hour"},
    )
    # the upload form checks its CSRF token (a cookie and a hidden field) and the token typed in
    cookie, csrf = server.form("/submit")
    fields = {"csrf": csrf, "token": bob}
    code, page = server.post_form("/submit", fields, theirs, "arena_csrf=forged")
    assert code == 403 and "the form is stale or was not sent from this site" in page
    code, page = server.post_form("/submit", {**fields, "token": "wrong"}, theirs, cookie)
    assert code == 401 and "unknown token" in page
    cookie, csrf = server.form("/me")
    code, page = server.post_form("/me", {"csrf": csrf, "token": alice}, None, cookie)
    assert code == 200 and "alice: your uploads" in page
    assert "alicebot" in page and "--- arena check ---" in page and "bobbot" not in page

    # carol uploads through the form in a browser; her bot is placed against random and alice's
    own = bot_wheel(tmp_path, "carol-bot", "carolbot", extra=CHATTY, factory="Chatty")
    browser.get(f"{server.url}/submit")
    browser.find_element(By.NAME, "token").send_keys(carol)
    browser.find_element(By.NAME, "file").send_keys(str(own))
    follow(browser, browser.find_element(By.CSS_SELECTOR, "form button"))
    assert browser.find_element(By.ID, "queued").text.startswith("Upload 6 is queued")
    assert server.wait_final(carol, 6)["status"] == "ranked"
    assert server.board(18)["games"] == 18
    browser.get(f"{server.url}/")
    rows = browser.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert sorted(r.find_elements(By.TAG_NAME, "td")[1].text for r in rows) == [
        "alicebot@1",
        "carolbot@1",
        "random",
    ]
    assert browser.find_elements(By.CSS_SELECTOR, "svg.spark polyline")  # alice's: 6, 18 games
    save_docs_image(browser.get_screenshot_as_png(), "serve-leaderboard.png", varies=True)
    follow(browser, browser.find_element(By.LINK_TEXT, "carolbot@1"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "carolbot@1"
    assert "carol <i>c</i>" in browser.find_element(By.TAG_NAME, "body").text
    assert not browser.find_elements(By.CSS_SELECTOR, "td i")  # escaped, not markup
    save_docs_image(browser.get_screenshot_as_png(), "serve-bot.png", varies=True)
    follow(browser, browser.find_elements(By.CSS_SELECTOR, "a[href^='/games/']")[0])
    assert "carolbot" in browser.page_source and "/games/" in browser.current_url
    # her own page: her upload and what her bot wrote in its games, escaped
    browser.get(f"{server.url}/me")
    browser.find_element(By.NAME, "token").send_keys(carol)
    follow(browser, browser.find_element(By.CSS_SELECTOR, "form button"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "carol <i>c</i>: your uploads"
    assert "Upload 6: ranked" in browser.find_element(By.TAG_NAME, "body").text
    browser.find_element(By.CSS_SELECTOR, "details.output summary").click()
    shown = browser.find_element(By.CSS_SELECTOR, "details.output").text
    assert "carolbot thinks <b>hard</b>\\x1b[2J" in shown
    code, mine = server.get("/api/submissions/6", carol)
    assert code == 200 and mine["output"]["carolbot@1"]
    assert server.get("/api/submissions/6", alice)[0] == 403
    log = (server.where / "server.log").read_text()
    assert alice not in log and bob not in log and carol not in log

    # the pages and their JSON
    page = server.page("/")
    assert '<meta http-equiv="refresh" content="30">' in page and "alicebot@1" in page
    code, alice_bot = server.get("/api/bots/alicebot@1", None)
    assert code == 200 and alice_bot["standing"]["games"] == 12
    assert sorted(alice_bot["head_to_head"]) == ["carolbot@1", "random"]
    assert [v["id"] for v in alice_bot["versions"]] == [1]
    assert len(alice_bot["recent_games"]) == 12 and alice_bot["rating_history"]
    assert "Head to head" in server.page("/bots/alicebot%401")
    # a submitted bot's name alone is its ranked version
    assert server.get("/api/bots/alicebot", None)[1]["bot"] == "alicebot@1"
    assert "<h1>alicebot@1</h1>" in server.page("/bots/alicebot")  # redirected
    game_id = alice_bot["recent_games"][0]["id"]
    code, game = server.get(f"/api/games/{game_id}", None)
    assert code == 200 and "alicebot@1" not in game["seats"] and "alicebot" in game["seats"]
    assert game["hidden"] is True  # its placement is finished, but the competition runs
    assert "<!doctype html>" in server.page(f"/games/{game_id}").lower()
    assert server.get("/api/bots/nobody", None)[0] == 404
    assert server.get("/api/games/999999", None)[0] == 404
    assert server.get("/api/games/" + "9" * 40, None) == (404, {"error": "no such game"})
    assert server.get("/api/submissions/" + "9" * 40, alice) == (404, {"error": "no such upload"})

    # carol withdraws her bot on her page: it leaves the ladder, its games stay
    form = browser.find_element(By.CSS_SELECTOR, "form.withdraw")
    form.find_element(By.NAME, "token").send_keys(carol)
    follow(browser, form.find_element(By.TAG_NAME, "button"))
    done = browser.find_element(By.ID, "done").text
    assert done == "Upload 6 withdrawn: carolbot left the ladder."
    board = server.board(0)
    assert [(r["bot"], r["withdrawn"]) for r in board["older_versions"]] == [("carolbot@1", True)]
    assert sorted(r["bot"] for r in board["standings"]) == ["alicebot@1", "random"]

    # killed and started again: everything is still there
    server.kill()
    server.options = (*server.options, "--rated-decks", "2")
    server.start()
    code, state = server.get("/api/submissions/1", alice)
    assert code == 200 and state["status"] == "ranked" and state["bots"] == ["alicebot"]
    # and now the ladder keeps playing: rounds of 4 rated games between its two players, each
    # round on decks of its own (the same pair again is a new tournament, not the last resumed)
    board = server.board(18 + 2 * 4)
    store = Store(server.env["ARENA_DB"])
    rated = [t for t in store.tournaments() if t.name.startswith("ladder: rated games ")]
    assert len(rated) >= 2 and all(sorted(t.entrants) == ["alicebot", "random"] for t in rated)
    assert [t.games for t in rated[:2]] == [4, 4]
    (mine,) = [r for r in board["standings"] if r["bot"] == "alicebot@1"]
    assert mine["version"] == "1" and mine["last_change"]["when"] and len(mine["sparkline"]) >= 2
    assert not any((server.where / "submissions" / "uploads").iterdir())  # files go once decided

    # frozen: no new uploads; finished: a final round-robin on fresh secret decks, its report
    frozen = server.arena("serve", "freeze")
    assert frozen.returncode == 0 and frozen.stdout.strip() == "competition 'ladder' is frozen"
    assert server.post_file(bob, theirs.name, theirs.read_bytes()) == (
        403,
        {"error": "the competition 'ladder' is frozen: no new uploads"},
    )
    assert server.get("/api/leaderboard", None)[1]["frozen"] is True
    assert server.get("/final", None)[0] == 404
    finished = server.arena("serve", "finish", "--decks", "1")
    assert finished.returncode == 0, finished.stderr
    final = Store(server.env["ARENA_DB"]).tournament_names("ladder: final round-robin")
    assert [(name, status) for _, name, status in final] == [
        ("ladder: final round-robin", "finished")
    ]
    (entered,) = [t for t in Store(server.env["ARENA_DB"]).tournaments() if t.id == final[0][0]]
    assert sorted(entered.entrants) == ["alicebot", "random"] and entered.games == 2
    assert "<html" in server.page("/final").lower()
    assert server.get("/api/leaderboard", None)[1]["final_tournament"] == final[0][0]
    assert server.get(f"/api/games/{game_id}", None)[1]["hidden"] is False  # finished: shown


def _project(where: Path, distribution: str, bot: str) -> Path:
    """A project directory (``pyproject.toml``, a package registering ``bot``) of
    ``distribution``, with a cache folder and a compiled file that packing leaves out."""
    package = distribution.replace("-", "_")
    (where / package / "__pycache__").mkdir(parents=True)
    (where / package / "__pycache__" / "plugin.cpython-311.pyc").write_bytes(b"not code")
    (where / package / "__init__.py").write_text("")
    (where / package / "plugin.py").write_text(
        PLUGIN.format(name=bot, extra="", factory="FirstLegal")
    )
    (where / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=70.1"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{distribution}"\nversion = "1.0"\n'
        f'[project.entry-points."arena.bots"]\n{bot} = "{package}.plugin"\n'
        f"[tool.setuptools]\npackages = [{package!r}]\n"
    )
    return where


#: A bot that says something on stderr once per process (markup and an escape sequence in it).
CHATTY = """
import sys


class Chatty(FirstLegal):
    said = False

    def act(self, observation):
        if not Chatty.said:
            Chatty.said = True
            print("carolbot thinks <b>hard</b>\\x1b[2J", file=sys.stderr, flush=True)
        return super().act(observation)
"""


def test_a_server_stopped_mid_build_queues_the_upload_again(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    store.create_schema()
    P.add_participant(store, "carol")
    (carol,) = P.participants(store)
    first = P.add_upload(store, carol.id, "a-1.0-py3-none-any.whl", 10)
    second = P.add_upload(store, carol.id, "b-1.0-py3-none-any.whl", 10)
    third = P.add_upload(store, carol.id, "c-1.0-py3-none-any.whl", 10)
    P.set_upload(store, first, "building")
    P.set_upload(store, second, "failed", reason="no")
    P.set_upload(store, third, "checking", distribution="c", version=1, bots=["c"])
    assert P.requeue_unfinished(store) == 1
    # a stored version being checked is checked again, never built again as a new version
    assert [(u.id, u.status) for u in P.uploads(store)] == [
        (first, "queued"),
        (second, "failed"),
        (third, "checking"),
    ]


def test_builds_are_taken_in_turn_between_participants(tmp_path: Path) -> None:
    """One worker: Alice's three uploads and then Bob's and Carol's are taken Alice, Bob, Carol,
    Alice, Alice; two workers never hold two uploads of one participant at once."""
    from arena.serve.pipeline import FairQueue

    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    store.create_schema()
    for name in ("alice", "bob", "carol"):
        P.add_participant(store, name)
    ids = {p.name: p.id for p in P.participants(store)}
    for name in ("alice", "alice", "alice", "bob", "carol"):
        P.add_upload(store, ids[name], f"{name}-1.0-py3-none-any.whl", 10)
    queue = FairQueue(store, "queued")
    order = []
    while (upload := queue.take()) is not None:
        order.append(upload.participant)
        queue.done(upload)
        P.set_upload(store, upload.id, "failed", reason="taken")
    assert order == ["alice", "bob", "carol", "alice", "alice"]
    for upload in P.uploads(store):
        P.set_upload(store, upload.id, "queued")
    first, second = queue.take(), queue.take()
    assert first is not None and second is not None
    assert first.participant != second.participant
    third = queue.take()
    assert third is not None and third.participant not in {first.participant, second.participant}
    assert queue.take() is None  # the other two are Alice's, and one of hers is taken
