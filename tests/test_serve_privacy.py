"""What the competition server defends (issue 37, items 5 and 6), through the real server on a
loopback port: a bot's private output (its exception messages, what it wrote to stderr, how its
process ended) reaches its own participant alone, on every page, call and report; and a bot
name that can be mistaken for another participant's or the arena's own is refused."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import pytest
from serving import Server, add_participant, upload, wait_until
from wheels import bot_wheel

pytestmark = pytest.mark.usefixtures("bubblewrap")

#: What the leaky bot puts in its exception's message.
RAISED = "PRIVATE-RAISED-7f3a"
#: What the leaky bot writes to stderr before it fails (an ``exited`` fault's message quotes
#: the last output of the bot's process).
WRITTEN = "PRIVATE-WRITTEN-91c2"
#: The file whose presence, in a directory of ``PYTHONPATH`` (shown to every host), arms the
#: leaky bot: an attacker's bot passes ``arena check`` and fails in the ladder alone; here the
#: test decides when instead of the bot guessing.
ARM = "leak-now"

LEAKY = f"""
import os
import sys


def _armed():
    places = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return any(os.path.exists(os.path.join(p, {ARM!r})) for p in places if p)


class Leaky(FirstLegal):
    seed = 0

    def reset(self, seed):
        super().reset(seed)
        self.seed = seed

    def act(self, observation):
        if _armed():
            print({WRITTEN!r}, file=sys.stderr, flush=True)
            if self.seed % 2:
                os._exit(3)
            raise ValueError({RAISED!r} + " in " + __file__)
        return super().act(observation)
"""


def _status(server: Server, token: str, upload_id: int) -> str:
    code, state = server.get(f"/api/submissions/{upload_id}", token)
    assert code == 200, state
    assert state["status"] != "failed", state
    return str(state["status"])


def _page(server: Server, path: str) -> str:
    with urllib.request.urlopen(f"{server.url}{path}", timeout=30) as answer:
        return str(answer.read().decode("utf-8"))


def _text(server: Server, paths: list[str], token: str | None) -> str:
    """Everything ``paths`` answer (``/api/...`` with ``token``, pages as anyone), as one text."""
    said = []
    for path in paths:
        if path.startswith("/api/"):
            code, body = server.get(path, token)
            assert code == 200, (path, body)
            said.append(f"{path}: {body!r}")
        else:
            said.append(f"{path}: {_page(server, path)}")
    return "\n".join(said)


def _private(text: str) -> list[str]:
    """The private things of the leaky bot ``text`` shows."""
    return [s for s in (RAISED, WRITTEN, "plugin.py") if s in text]


def _own_page(server: Server, token: str) -> str:
    cookie, csrf = server.form("/me")
    code, page = server.post_form("/me", {"csrf": csrf, "token": token}, None, cookie)
    assert code == 200, page
    return page


@pytest.mark.slow
def test_a_bots_private_output_reaches_its_participant_alone(tmp_path: Path) -> None:
    """Alice's bot passes its check, then fails in every ladder game with a secret in its
    exception and on its stderr; Bob (whose bot it played) and an anonymous visitor read every
    page, call and the final report and find only the faults' kinds; Alice finds the secrets."""
    flags = tmp_path / "flags"
    flags.mkdir()
    server = Server(
        tmp_path,
        *("--check-rounds", "1", "--field", "", "--ladder-decks", "1", "--rated-decks", "0"),
        *("--workers", "1"),
    )
    server.env["PYTHONPATH"] = str(flags)
    alice, bob = add_participant(server, "alice"), add_participant(server, "bob")
    server.start()
    try:
        wheel = bot_wheel(_dir(tmp_path / "a"), "alice-leaks", "leakybot", extra=LEAKY,
                          factory="Leaky")  # fmt: skip
        leaky = upload(server, alice, wheel)
        # checked and waiting for an opponent (no reference field): arm it, then bring one
        wait_until("alice's bot checked", lambda: _status(server, alice, leaky) == "placing")
        (flags / ARM).touch()
        plain = upload(server, bob, bot_wheel(_dir(tmp_path / "b"), "bob-bot", "bobbot"))
        for token, upload_id in ((alice, leaky), (bob, plain)):
            assert server.wait_final(token, upload_id)["status"] == "ranked"
        board = server.board(4)
        assert {row["bot"]: row["faults"] > 0 for row in board["standings"]} == {
            "leakybot@1": True,
            "bobbot@1": False,
        }
        code, seen = server.get("/api/bots/leakybot@1", None)
        # a game may end before the leaky bot's first move (a Guard guessing its card at once)
        assert code == 200 and seen["faults"]["total"] >= 1
        games = [g["id"] for g in seen["recent_games"]]
        assert len(games) == 4
        paths = [
            "/api/health", "/api/leaderboard", "/", "/api/bots/leakybot@1", "/api/bots/leakybot",
            "/bots/leakybot@1", "/bots/leakybot", "/api/bots/bobbot@1", "/bots/bobbot@1",
            *(f"/api/games/{g}" for g in games), *(f"/games/{g}" for g in games),
        ]  # fmt: skip
        assert _private(_text(server, paths, None)) == []
        assert _private(_text(server, paths, bob)) == []
        assert _private(_own_page(server, bob)) == []
        code, bobs = server.get(f"/api/submissions/{plain}", bob)
        assert code == 200 and _private(repr(bobs)) == []
        # the kinds are there for everyone
        assert set(seen["faults"]["by_kind"]) <= {"crash", "exited", "disqualified"}
        kinds = {f["kind"] for g in games for f in server.get(f"/api/games/{g}", None)[1]["faults"]}
        assert kinds and kinds <= {"crash", "exited", "disqualified"}

        # alice reads her own bot's messages: in its games, on its page's JSON and on /me
        mine = _text(server, [*(f"/api/games/{g}" for g in games), "/api/bots/leakybot@1"], alice)
        assert RAISED in mine or WRITTEN in mine
        assert WRITTEN in _own_page(server, alice)
        # a token that is nobody's is refused rather than read as nobody
        assert server.get(f"/api/games/{games[0]}", "not-a-token") == (
            401,
            {"error": "unknown token"},
        )

        # the final round-robin's published report: kinds only
        finished = server.arena("serve", "finish", "--decks", "1")
        assert finished.returncode == 0, finished.stderr
        report = _page(server, "/final")
        assert "leakybot" in report and _private(report) == []
        assert _private(_text(server, [f"/api/games/{g}" for g in games], None)) == []
    finally:
        server.kill()


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _settled(server: Server, token: str, upload_id: int) -> dict[str, Any]:
    """The upload once it is past its build (failed, or stored and being checked or placed)."""

    def past() -> dict[str, Any] | None:
        code, state = server.get(f"/api/submissions/{upload_id}", token)
        assert code == 200, state
        return None if state["status"] in ("queued", "building") else dict(state)

    found: dict[str, Any] = wait_until(f"upload {upload_id} built", past, 240)
    return found


@pytest.mark.slow
def test_names_that_can_be_mistaken_are_refused(tmp_path: Path) -> None:
    """Bob's ``caroIbot`` (a capital I) beside Carol's ``carolbot``, and his ``greedy_`` beside
    the arena's ``greedy``, are refused in one line naming the name they can be mistaken for;
    Carol's next version of her own ``carolbot`` is taken; a participant ``caroI`` is refused."""
    server = Server(
        tmp_path,
        *("--check-rounds", "1", "--field", "", "--ladder-decks", "1", "--rated-decks", "0"),
        *("--workers", "1"),
    )
    carol, bob = add_participant(server, "carol"), add_participant(server, "bob")
    refused = server.arena("serve", "participants", "add", "caroI")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "arena: error: participant name 'caroI' can be mistaken for participant 'carol': "
        "choose another name"
    )
    server.start()
    try:
        first = upload(server, carol, bot_wheel(_dir(tmp_path / "c1"), "carol-bot", "carolbot"))
        assert _settled(server, carol, first)["status"] != "failed"
        mimic = upload(server, bob, bot_wheel(_dir(tmp_path / "b1"), "bob-bot", "caroIbot"))
        thief = upload(server, bob, bot_wheel(_dir(tmp_path / "b2"), "bob-greedy", "greedy_"))
        again = bot_wheel(_dir(tmp_path / "c2"), "carol-bot", "carolbot", version="2.0")
        second = upload(server, carol, again)
        state = _settled(server, bob, mimic)
        assert (state["status"], state["reason"]) == (
            "failed",
            "bot 'caroIbot' of bob-bot is refused: it can be mistaken for 'carolbot' of "
            "carol-bot (choose another name)",
        )
        state = _settled(server, bob, thief)
        assert (state["status"], state["reason"]) == (
            "failed",
            "bot 'greedy_' of bob-greedy is refused: it can be mistaken for 'greedy' of "
            "loveletter-arena (choose another name)",
        )
        state = _settled(server, carol, second)
        assert state["status"] != "failed" and state["version"] == 2, state
    finally:
        server.kill()


def test_every_route_of_the_server_says_what_private_output_it_may_carry(tmp_path: Path) -> None:
    """A new route fails here until arena.serve.privacy.CHANNELS says how it keeps a bot's
    private output to its participant (and a route gone leaves no line behind)."""
    from starlette.routing import Route

    from arena.serve.app import create_app
    from arena.serve.privacy import CHANNELS
    from leaderboard.store import Store

    app = create_app(Store(f"sqlite:///{tmp_path / 'arena.db'}"), tmp_path, background=False)
    routed = {route.path for route in app.routes if isinstance(route, Route)}
    assert routed == set(CHANNELS)
    assert len(app.routes) == len([r for r in app.routes if isinstance(r, Route)])


def test_participant_and_distribution_names_that_can_be_mistaken_are_refused(
    tmp_path: Path,
) -> None:
    from leaderboard import participants as P
    from leaderboard.store import Store

    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    P.add_participant(store, "carol")
    P.add_participant(store, "bob")
    for name, other in (("Carol", "carol"), ("car0l", "carol"), ("8ob", "bob")):
        with pytest.raises(P.ParticipantError) as refused:
            P.add_participant(store, name)
        assert str(refused.value) == (
            f"participant name {name!r} can be mistaken for participant {other!r}: "
            "choose another name"
        )
    with pytest.raises(P.ParticipantError, match="printable ASCII"):
        P.add_participant(store, "c\u0430rol")  # a Cyrillic a
    ids = {p.name: p.id for p in P.participants(store)}
    P.claim(store, "carol-bot", ids["carol"])
    with pytest.raises(P.ParticipantError) as refused:
        P.claim(store, "caroi-bot", ids["bob"])
    assert str(refused.value) == (
        "caroi-bot can be mistaken for carol-bot, which belongs to participant 'carol': "
        "choose another name"
    )
    P.claim(store, "caroi-bot", ids["carol"])  # her own look-alikes are hers to choose
    P.claim(store, "carol-bot", ids["carol"])  # and her own again


def test_a_viewer_reads_the_messages_of_its_own_bots_alone() -> None:
    from arena.referee.records import HIDDEN_MESSAGE, Fault, GameRecord
    from arena.serve.privacy import ANONYMOUS, Viewer, faults

    record = GameRecord(
        variant="classic", players=2, seats=["mine", "theirs"], deck=[], first=0, seed=1,
        events=[], actions=[], winners=[], end_reason="", times=[0.0, 0.0], moves=[0, 0],
        faults=[Fault(0, "crash", "ValueError: mine", 3), Fault(1, "exited", "theirs", 4)],
    )  # fmt: skip
    shown = record.with_messages_of({0})
    assert [(f.seat, f.kind, f.move, f.message) for f in shown.faults] == [
        (0, "crash", 3, "ValueError: mine"),
        (1, "exited", 4, HIDDEN_MESSAGE),
    ]
    assert record.faults[1].message == "theirs"  # a copy: the stored record is unchanged
    summary = {"total": 1, "by_kind": {"crash": 1}, "examples": [{"kind": "crash", "message": "x"}]}
    assert faults(summary, 7, Viewer(7)) == summary
    for viewer in (ANONYMOUS, Viewer(8)):
        assert faults(summary, 7, viewer)["examples"] == [
            {"kind": "crash", "message": HIDDEN_MESSAGE}
        ]
    assert faults(summary, None, Viewer(7))["examples"][0]["message"] == HIDDEN_MESSAGE
    assert not ANONYMOUS.sees(None)
