"""A competition a teacher runs for a class (issue 38, items 1 to 3): the class list managed
from the command line (names in, tokens out; a lost token reset; a typo renamed or removed;
who has not submitted), results to grade with each bot's participant (a command and a CSV
download), and a schedule (a closing time that freezes uploads by itself, an announcement, the
uploads a participant has left this hour). The commands run as a teacher types them; the pages
and the download through the real server on a loopback port."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from serving import Server, add_participant, upload
from wheels import bot_wheel

from arena.cli.main import cli
from leaderboard import participants as P
from leaderboard.store import Store


def arena(db: str, *args: str) -> Any:
    """``arena serve ARGS --db DB`` as a teacher types it (``--db`` after the subcommand)."""
    return CliRunner().invoke(cli, ["serve", *args, "--db", db])


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/class.db"


def test_a_class_list_in_tokens_out_once_as_csv(db: str, tmp_path: Path) -> None:
    names = tmp_path / "class.txt"
    names.write_text("# CS 101, spring\nalice\nbob  # late enrolment\n\ncarol\n")
    done = arena(db, "participants", "add", "--from", str(names), "dave")
    assert done.exit_code == 0, done.output
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["name", "token"]
    assert [r[0] for r in rows[1:]] == ["dave", "alice", "bob", "carol"]
    store = Store(db)
    for name, token in rows[1:]:
        found = P.by_token(store, token)
        assert found is not None and found.name == name


def test_a_class_list_with_a_look_alike_adds_nobody(db: str, tmp_path: Path) -> None:
    names = tmp_path / "class.txt"
    names.write_text("alice\ncarol\ncaroI\n")
    done = arena(db, "participants", "add", "--from", str(names))
    assert done.exit_code == 2
    assert "'caroI' can be mistaken for participant 'carol'" in done.output
    assert P.participants(Store(db)) == []


def test_reset_rename_remove_and_list(db: str) -> None:
    store = Store(db)
    tokens = dict(P.add_participants(store, ["alice", "Bad Name!", "bob"]))
    reset = arena(db, "participants", "reset-token", "alice")
    assert reset.exit_code == 0, reset.output
    new = reset.output.strip().rsplit(" ", 1)[-1]
    assert P.by_token(store, tokens["alice"]) is None  # the lost token stops working
    assert P.by_token(store, new) is not None and P.by_token(store, new).name == "alice"

    assert arena(db, "participants", "rename", "bob", "robert").exit_code == 0
    clash = arena(db, "participants", "rename", "robert", "aIice")
    assert clash.exit_code == 2 and "can be mistaken for participant 'alice'" in clash.output

    upload_id = P.add_upload(store, P.find_participant(store, "Bad Name!").id, "x.whl", 10)
    removed = arena(db, "participants", "remove", "Bad Name!")
    assert removed.exit_code == 0, removed.output
    assert "1 uploads withdrawn" in removed.output
    assert P.upload(store, upload_id).status == "withdrawn"  # type: ignore[union-attr]
    assert P.by_token(store, tokens["Bad Name!"]) is None
    again = arena(db, "participants", "add", "Bad Name!")  # the name is free again
    assert again.exit_code == 0, again.output
    missing = arena(db, "participants", "remove", "nobody")
    assert missing.exit_code == 2 and "no participant called 'nobody'" in missing.output

    listed = arena(db, "participants", "list", "--json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert [r["name"] for r in rows] == ["alice", "robert", "Bad Name!"]
    assert all(r["uploads"] == 0 and r["latest_status"] is None for r in rows)
    text = arena(db, "participants", "list", "--missing").output
    assert "alice" in text and "not submitted yet" in text


def test_a_closing_time_freezes_uploads_by_itself(db: str) -> None:
    from leaderboard import competition as C

    store = Store(db)
    later = (dt.datetime.now() + dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M")
    done = arena(db, "schedule", "--closes-at", later, "--announce", "Uploads close Friday!")
    assert done.exit_code == 0, done.output
    assert "announcement: Uploads close Friday!" in done.output
    assert not C.close_if_due(store, "ladder").frozen
    soon = C.schedule(store, "ladder").closes_at
    assert soon is not None
    assert C.close_if_due(store, "ladder", now=soon + dt.timedelta(seconds=1)).frozen
    reopened = CliRunner().invoke(cli, ["serve", "--db", db, "freeze", "--reopen"])
    assert reopened.exit_code == 0 and not C.competition(store, "ladder").frozen
    bad = arena(db, "schedule", "--closes-at", "next friday")
    assert bad.exit_code == 2 and "is no date and time" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_results_name_who_has_not_submitted(db: str) -> None:
    P.add_participants(Store(db), ["alice", "bob"])
    done = arena(db, "results", "--csv")
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.output)))
    assert [(r["participant"], r["status"]) for r in rows] == [
        ("alice", "not submitted"),
        ("bob", "not submitted"),
    ]


@pytest.mark.slow
@pytest.mark.usefixtures("bubblewrap")
def test_the_class_through_the_server(tmp_path: Path) -> None:
    """Alice's bot is ranked: the leaderboard names her, the results download has her row with
    rank, rating and interval and bob's "not submitted"; /me says how many uploads she has left;
    an announcement and a closing time show on the front page, and once the closing time has
    passed an upload is refused."""
    server = Server(
        tmp_path,
        *("--check-rounds", "1", "--field", "random", "--ladder-decks", "1"),
        *("--rated-decks", "0", "--workers", "1", "--per-hour", "5"),
        *("--announce", "Final standings on Friday"),
    )
    alice = add_participant(server, "alice")
    add_participant(server, "bob")
    server.start()
    try:
        wheel = bot_wheel(_dir(tmp_path / "a"), "alice-bot", "alicebot")
        first = upload(server, alice, wheel)
        assert server.wait_final(alice, first)["status"] == "ranked"
        server.board(2)
        page = server.page("/")
        assert "Final standings on Friday" in page and "<td>alice</td>" in page
        assert "/results.csv" in page
        with urllib.request.urlopen(f"{server.url}/results.csv", timeout=30) as answer:
            assert answer.headers["content-type"].startswith("text/csv")
            assert "attachment" in answer.headers["content-disposition"]
            with_csv = answer.read().decode("utf-8")
        rows = {r["participant"]: r for r in csv.DictReader(io.StringIO(with_csv))}
        assert rows["alice"]["bot"] == "alicebot" and rows["alice"]["version"] == "1"
        assert rows["alice"]["rank"] and rows["alice"]["elo"] and rows["alice"]["games"] == "2"
        assert rows["bob"]["status"] == "not submitted"
        cookie, csrf = server.form("/me")
        code, mine = server.post_form("/me", {"csrf": csrf, "token": alice}, None, cookie)
        assert code == 200 and "4 of 5 uploads left this hour" in mine

        past = (dt.datetime.now() - dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M")
        assert server.arena("serve", "schedule", "--closes-at", past).returncode == 0
        code, answer = server.post_file(alice, wheel.name, wheel.read_bytes())
        assert code == 403 and "is frozen" in answer["error"]
        assert "uploads closed" in server.page("/")
    finally:
        server.kill()


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
