"""A competition that cannot be gamed or jammed (issue 37), through the real server on a loopback
port: one participant's bots never share a rated table and only its ranked bot plays rated
games; withdrawing, killing and restarting at any moment never stops rated play; the upload
limit holds when uploads come at once; one participant's slow builds never hold another's."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path
from typing import Any

import pytest
from serving import Server, add_participant, upload, wait_until
from wheels import PLUGIN, bot_wheel

from arena.serve.client import source_package
from leaderboard.store import Store

pytestmark = pytest.mark.usefixtures("bubblewrap")


def _two_bots(directory: Path, distribution: str, first: str, second: str) -> Path:
    """A wheel of ``distribution`` registering two bots, ``first`` and ``second``."""
    package = distribution.replace("-", "_")
    extra = {f"{package}/second.py": PLUGIN.format(name=second, extra="", factory="FirstLegal")}
    directory.mkdir(parents=True, exist_ok=True)
    return bot_wheel(
        directory,
        distribution,
        first,
        more_files=extra,
        more_entry_points=f"{second} = {package}.second\n",
    )


def _games(server: Server) -> list[tuple[str, list[str]]]:
    """Every stored game: its tournament's name and its seats."""
    store = Store(server.env["ARENA_DB"])
    try:
        return [
            (name, list(game.record.seats))
            for tid, name, _ in store.tournament_names()
            for game in store.stored_games(tid)
        ]
    finally:
        store.close()


@pytest.mark.slow
def test_one_participant_one_voice(tmp_path: Path) -> None:
    """A package registering a star and a feeder (the issue's: the feeder throws its rounds to
    the star) and another participant's bot: only the star (the first bot of the latest upload)
    plays rated games, against the field and the other participant, never against its feeder;
    once its participant ranks the feeder instead, the feeder is placed and the star leaves
    the ranked standings, and still no game seats the two."""
    server = Server(
        tmp_path,
        *("--check-rounds", "2", "--field", "random", "--ladder-decks", "2"),
        *("--rated-decks", "1", "--workers", "1"),
    )
    alice, bob = add_participant(server, "alice"), add_participant(server, "bob")
    server.start()
    try:
        star = upload(server, alice, _two_bots(tmp_path / "a", "alice-pack", "star", "feeder"))
        assert server.wait_final(alice, star)["status"] == "ranked"
        other = upload(server, bob, bot_wheel(_dir(tmp_path / "b"), "bob-bot", "bobbot"))
        assert server.wait_final(bob, other)["status"] == "ranked"
        code, ranked = server.get("/api/ranked", alice)
        assert code == 200 and ranked["voice"]["player"] == "star@1"
        assert not ranked["voice"]["chosen"]
        board = server.board(8)  # both placements: 2 decks, 2 seatings, 2 opponents each
        ranked_bots = {row["bot"]: row["participant"] for row in board["standings"]}
        assert ranked_bots == {"star@1": "alice", "bobbot@1": "bob", "random": None}
        # a bot name that is none of hers: one line
        refused = server.put_json("/api/ranked", alice, {"bot": "bobbot"})
        assert refused == (400, {"error": "'bobbot' is not one of your bots in the competition "
                                 "(feeder, star)"})  # fmt: skip
        code, ranked = server.put_json("/api/ranked", alice, {"bot": "Feeder"})
        assert code == 200 and ranked["voice"]["player"] == "feeder@1" and ranked["voice"]["chosen"]

        def placed() -> dict[str, Any] | None:
            code, board = server.get("/api/leaderboard", None)
            rows = {row["bot"] for row in board["standings"]}
            return board if code == 200 and "feeder@1" in rows else None

        board = wait_until("the feeder placed and ranked", placed)
        assert {row["bot"] for row in board["standings"]} == {"feeder@1", "bobbot@1", "random"}
        assert "star@1" in {row["bot"] for row in board["older_versions"]}
        # let rated rounds be played, then: no game ever seated alice's two bots together
        wait_until("a rated round", lambda: any("rated games" in n for n, _ in _games(server)), 120)
        for name, seats in _games(server):
            assert not {"star", "feeder"} <= set(seats), (name, seats)
    finally:
        server.kill()


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_uploads_at_once_are_counted_against_the_hourly_limit(tmp_path: Path) -> None:
    """Twenty uploads from one token at once against ``--per-hour 3``: three accepted (before,
    sixteen were: the count was checked before the upload was read, and stored after)."""
    server = Server(tmp_path, *("--per-hour", "3", "--field", "random", "--rated-decks", "0"))
    alice = add_participant(server, "alice")
    wheel = bot_wheel(_dir(tmp_path / "a"), "alice-bot", "alicebot")
    data = wheel.read_bytes()
    server.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(lambda _: server.post_file(alice, wheel.name, data), range(20)))
        codes = sorted(code for code, _ in answers)
        assert codes == [202] * 3 + [429] * 17, answers
        assert {a["error"] for c, a in answers if c == 429} == {
            "at most 3 uploads per participant per hour"
        }
    finally:
        server.kill()


@pytest.mark.slow
def test_slow_builds_of_one_participant_never_hold_another_s(tmp_path: Path) -> None:
    """Mallory's three uploads whose builds sleep (stopped at the build's 10 s), then Bob's, on
    one builder: Bob's build starts when the build at hand ends, before Mallory's others (it
    waited for all three before: 199 s at the defaults), and each of Mallory's says its limit
    in one line."""
    import test_hostile_builds

    server = Server(
        tmp_path,
        *("--builders", "1", "--build-seconds", "10", "--check-rounds", "2"),
        *("--field", "random", "--ladder-decks", "1", "--rated-decks", "0", "--workers", "1"),
    )
    mallory, bob = add_participant(server, "mallory"), add_participant(server, "bob")
    slow = test_hostile_builds.hostile(tmp_path / "slow", {"attack": "slow", "seconds": 600})
    name, data = source_package(slow)
    wheel = bot_wheel(_dir(tmp_path / "b"), "bob-bot", "bobbot")
    server.start()
    try:
        slow_ids = []
        for _ in range(3):
            code, answer = server.post_file(mallory, name, data)
            assert code == 202, answer
            slow_ids.append(int(answer["id"]))

        def status(token: str, upload_id: int) -> str:
            code, state = server.get(f"/api/submissions/{upload_id}", token)
            assert code == 200, state
            return str(state["status"])

        wait_until("mallory's first build", lambda: status(mallory, slow_ids[0]) == "building", 60)
        sent = time.monotonic()
        honest = upload(server, bob, wheel)
        wait_until("bob's build", lambda: status(bob, honest) != "queued", 10 + 15)
        waited = time.monotonic() - sent
        assert status(mallory, slow_ids[2]) == "queued", "bob's build waited for mallory's"
        assert waited < 10 + 15, waited
        assert server.wait_final(bob, honest)["status"] == "ranked"
        for upload_id in slow_ids:
            state = server.wait_final(mallory, upload_id)
            assert (state["status"], state["reason"]) == (
                "failed",
                "the build took longer than 10 s",
            )
    finally:
        server.kill()


def _tournaments(server: Server, part: str) -> list[tuple[int, str, str]]:
    """``(id, name, status)`` of the stored tournaments whose name holds ``part``."""
    store = Store(server.env["ARENA_DB"])
    try:
        return [(tid, name, store.status(tid)) for tid, name, _ in store.tournament_names()
                if part in name]  # fmt: skip
    finally:
        store.close()


def _running(server: Server, part: str) -> int | None:
    found = [tid for tid, _, status in _tournaments(server, part) if status == "running"]
    return found[0] if found else None


@pytest.mark.slow
def test_withdrawing_stopping_and_killing_never_stop_rated_play(tmp_path: Path) -> None:
    """The moments of the issue, through the real server: a participant withdraws while a
    rated round with its bot is played and the server is restarted (the round cannot be resumed:
    before, the ladder tried it first on every start and never played another rated game); a
    participant withdraws while a placement against its bot is played and the server is killed
    with SIGKILL and started again; the final round-robin refuses a withdrawal. Each time the
    ladder finishes what cannot be resumed with the games it had played, says so, and goes on."""
    server = Server(
        tmp_path,
        *("--check-rounds", "2", "--field", "random", "--ladder-decks", "2"),
        *("--rated-decks", "3", "--workers", "1"),
    )
    alice, bob, carol = (add_participant(server, name) for name in ("alice", "bob", "carol"))
    server.start()
    try:
        first = upload(server, alice, bot_wheel(_dir(tmp_path / "a"), "alice-bot", "alicebot"))
        second = upload(server, bob, bot_wheel(_dir(tmp_path / "b"), "bob-bot", "bobbot"))
        for token, upload_id in ((alice, first), (bob, second)):
            assert server.wait_final(token, upload_id)["status"] == "ranked"

        # 1. bob withdraws during a rated round with his bot; the server is stopped and started
        def bobs_round() -> int | None:
            for tid, _, status in _tournaments(server, "rated games"):
                if status == "running" and any(
                    e.startswith("bobbot") for e in _entrants(server, tid)
                ):
                    return tid
            return None

        interrupted = wait_until("a rated round with bob's bot", bobs_round)
        assert server.delete(f"/api/submissions/{second}", bob)[0] == 200
        server.stop()
        assert dict((t, s) for t, _, s in _tournaments(server, "rated games"))[interrupted] != (
            "finished"
        )
        server.start()

        def round_after() -> bool:
            later = [t for t, _, s in _tournaments(server, "rated games")
                     if t > interrupted and s == "finished"]  # fmt: skip
            return bool(later)

        wait_until("a rated round after the restart", round_after, 120)
        code, health = server.get("/api/health", None)
        assert code == 200 and health["ladder_error"] is None, health
        statuses = dict((t, s) for t, _, s in _tournaments(server, "rated games"))
        assert statuses[interrupted] == "finished"
        notes = " ".join(health["ladder_notes"])
        assert f"tournament {interrupted} " in notes and "could not be resumed" in notes

        # 2. carol's placement against alice's bot; alice withdraws, the server is killed
        third = upload(server, carol, bot_wheel(_dir(tmp_path / "c"), "carol-bot", "carolbot"))
        placing = wait_until("carol's placement", lambda: _running(server, f"upload {third},"), 180)
        assert server.delete(f"/api/submissions/{first}", alice)[0] == 200
        server.kill()
        server.start()
        assert server.wait_final(carol, third)["status"] == "ranked"
        assert dict((t, s) for t, _, s in _tournaments(server, "placement"))[placing] == "finished"
        wait_until("a rated round after the kill", lambda: _running(server, "rated games"), 120)

        # 3. the final round-robin refuses a withdrawal
        finishing = server.spawn("serve", "finish", "--decks", "1")
        try:
            def final_started() -> bool:
                if server.get("/api/leaderboard", None)[1]["final"]:
                    return True
                assert finishing.poll() is None, server.spawned_output()
                return False

            wait_until("the final", final_started, 300)
            code, refused = server.delete(f"/api/submissions/{third}", carol)
            assert code == 409 and "is being finished" in refused["error"], refused
        finally:
            finishing.wait(timeout=300)
        assert finishing.returncode == 0, server.spawned_output()
    finally:
        server.kill()


def _entrants(server: Server, tournament_id: int) -> set[str]:
    store = Store(server.env["ARENA_DB"])
    try:
        return {entrant.name for entrant in store.tournament(tournament_id).entrants}
    finally:
        store.close()
