"""Nothing outlives the server (docs/serve.md): killed with SIGKILL while a build, an
``arena check`` or a placement tournament runs, none of its processes goes on (the build process
and its sandbox, ``arena check`` and its hosts, ``arena tournament`` with its workers and
hosts); started again, it resumes the ladder at once (no lease of a dead runner waited for) and
an upload ends with exactly one version."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from serving import Server, add_participant, upload, wait_until
from wheels import bot_wheel

from arena.hosting.submissions import Store as Submissions
from arena.serve.client import source_package
from leaderboard.store import Store

pytestmark = pytest.mark.usefixtures("bubblewrap")

#: Seconds the processes of a killed server may take to end (Ctrl-C's clean-up).
GONE_SECONDS = 10.0
#: A bot that thinks a while over every move: its checks and games take long enough to be
#: interrupted.
SLOW = """
import time


class Slow(FirstLegal):
    def act(self, observation):
        time.sleep(0.08)
        return super().act(observation)
"""


def _ours(where: Path) -> dict[int, str]:
    """The processes (pid: command line) whose command line or environment names ``where``:
    the server's and everything it started (the sandboxes' command lines bind the store under
    it); never this test's own."""
    marker = str(where).encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except OSError:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            environ = b""
        if marker in cmdline or marker in environ:
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
    return found


def _killed(server: Server) -> None:
    """Kill the server with SIGKILL and check that none of its processes remains within
    :data:`GONE_SECONDS`."""
    server.kill()
    deadline = time.monotonic() + GONE_SECONDS
    left = _ours(server.where)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _ours(server.where)
    assert not left, f"outlived the server by {GONE_SECONDS:g} s: {left}"


def _running(where: Path, part: str) -> bool:
    """Whether one of the test's processes has ``part`` in its command line."""
    return any(part in line for line in _ours(where).values())


def _status(server: Server, token: str, upload_id: int) -> str:
    code, state = server.get(f"/api/submissions/{upload_id}", token)
    assert code == 200, state
    return str(state["status"])


def _placement(server: Server, upload_id: int) -> tuple[int, str | None] | None:
    """The placement tournament of upload ``upload_id`` while a runner holds it: (id, the
    runner's holder line)."""
    store = Store(server.env["ARENA_DB"])
    try:
        for tid, name, _ in store.tournament_names():
            if f"upload {upload_id}," in name:
                runner = store.runner(tid)
                return (tid, None if runner is None else runner.holder)
        return None
    finally:
        store.close()


def _forget(where: Path) -> None:
    """Kill whatever of the test's processes is left (a failed test's orphans)."""
    for pid in _ours(where):
        with contextlib.suppress(OSError):
            os.kill(pid, 9)


@pytest.mark.slow
def test_a_killed_server_leaves_no_check_nor_tournament_and_resumes_at_once(
    tmp_path: Path,
) -> None:
    """SIGKILL during ``arena check``: the check ends with the server (before, it went on), the
    restarted server checks the stored version again; SIGKILL during the placement: the
    tournament, its workers and hosts end with it (before, they went on and the restarted
    server waited on their lease: "is being played elsewhere"), the restarted server resumes it
    at once; the upload ends ranked with one version, ``slowbot@1``."""
    server = Server(
        tmp_path,
        *("--builders", "1", "--check-rounds", "10", "--field", "random"),
        *("--ladder-decks", "30", "--rated-decks", "0", "--workers", "1"),
    )
    alice = add_participant(server, "alice")
    wheel = bot_wheel(tmp_path / "w", "slow-bot", "slowbot", extra=SLOW, factory="Slow")
    server.start()
    try:
        uploaded = upload(server, alice, wheel)
        wait_until("the check", lambda: _status(server, alice, uploaded) == "checking", 60)
        wait_until("its hosts", lambda: _running(tmp_path, "bwrap"), 30)
        time.sleep(1)
        assert _status(server, alice, uploaded) == "checking"
        _killed(server)
        server.start()
        placing = wait_until("the placement", lambda: _placement(server, uploaded), 120)
        held = wait_until("its runner", lambda: (_placement(server, uploaded) or (0, None))[1], 30)
        time.sleep(2)
        _killed(server)
        server.start()

        def taken_over() -> bool:
            now = _placement(server, uploaded)
            return now is not None and now[1] is not None and now[1] != held

        wait_until("the placement resumed", taken_over, 8)
        state = server.wait_final(alice, uploaded)
        assert (state["status"], state["version"]) == ("ranked", 1), state
        records = Submissions(tmp_path / "submissions").records("slow-bot")
        assert [r.version for r in records] == [1]
        code, health = server.get("/api/health", None)
        assert code == 200 and health["ladder_error"] is None, health
        assert placing[0] == (_placement(server, uploaded) or (0,))[0]
    finally:
        server.kill()
        _forget(tmp_path)


@pytest.mark.slow
def test_a_killed_server_leaves_no_build(tmp_path: Path) -> None:
    """SIGKILL during a build (a package whose build sleeps): the build process and its sandbox
    end with the server (before, they went on to the build's time limit); the restarted
    server builds the upload again, and it ends with the build's limit, no version stored."""
    import test_hostile_builds

    server = Server(
        tmp_path,
        *("--builders", "1", "--build-seconds", "20", "--check-rounds", "2"),
        *("--field", "random", "--ladder-decks", "1", "--rated-decks", "0", "--workers", "1"),
    )
    mallory = add_participant(server, "mallory")
    slow = test_hostile_builds.hostile(tmp_path / "slow", {"attack": "slow", "seconds": 600})
    name, data = source_package(slow)
    server.start()
    try:
        code, answer = server.post_file(mallory, name, data)
        assert code == 202, answer
        uploaded = int(answer["id"])
        wait_until("the build", lambda: _status(server, mallory, uploaded) == "building", 60)
        time.sleep(3)
        _killed(server)
        server.start()
        wait_until("built again", lambda: _status(server, mallory, uploaded) == "building", 10)
        state = server.wait_final(mallory, uploaded)
        assert (state["status"], state["reason"]) == ("failed", "the build took longer than 20 s")
        assert Submissions(tmp_path / "submissions").records() == []
    finally:
        server.kill()
        _forget(tmp_path)


def test_a_version_stored_by_a_killed_server_is_taken_up_not_stored_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stored an upload's version and was killed before the upload said so: built
    again after the restart, the upload takes that version up (one version, ``@1``; before, the
    build was stored again as ``@2``, identical); once an upload names it, identical content
    uploaded again is a new version, as always."""
    from types import SimpleNamespace
    from typing import Any, cast

    from arena.hosting.submissions import Record
    from arena.serve.pipeline import stored_before
    from leaderboard import participants as P

    monkeypatch.setenv("ARENA_SUBMISSIONS", str(tmp_path / "submissions"))
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    store.create_schema()
    P.add_participant(store, "hotel")
    (hotel,) = P.participants(store)
    upload_id = P.add_upload(store, hotel.id, "hotel-1.0-py3-none-any.whl", 10)
    content = "a" * 64
    Submissions().write(Record("hotel", 1, content, "1.0", "2026-11-28T00:00:00+00:00"))
    built: Any = SimpleNamespace(distribution="hotel", content=content)
    claimed: list[str] = []
    found = stored_before(store, cast("Any", built), claimed.append)
    assert found is not None and found.version == 1 and claimed == ["hotel"]
    P.set_upload(store, upload_id, "checking", distribution="hotel", version=1, bots=["hotel"])
    assert stored_before(store, built, claimed.append) is None
    store.close()


#: A parent that ignores Ctrl-C (as ``arena serve finish &`` in a script does), starts a child
#: with :func:`arena.serve.background.spawn` from a thread, says the child's pid and waits.
PARENT = """
import signal, subprocess, sys, threading, time
from arena.serve.background import spawn

signal.signal(signal.SIGINT, signal.SIG_IGN)
child = "import time; time.sleep(60)"
threading.Thread(target=lambda: print(spawn([sys.executable, "-c", child]).pid, flush=True)).start()
time.sleep(60)
"""


def test_a_child_of_a_killed_parent_is_interrupted_even_with_ctrl_c_ignored() -> None:
    """The mechanism alone: a child started by ``spawn`` (from a thread that lives on) of a
    parent that ignores Ctrl-C ends within a few seconds of the parent's SIGKILL (without the
    reset of Ctrl-C in ``spawn``, it inherits Ctrl-C ignored and sleeps on)."""
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        parent.kill()
        parent.wait()
        wait_until("the child gone", lambda: not _alive(child), 5)
    finally:
        parent.kill()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
