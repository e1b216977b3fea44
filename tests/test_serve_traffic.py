"""Hostile traffic is shed, not served (issue 37, item 4), through the real server on a loopback
port with the open-file limit of a service (1,024): 1,100 half-sent requests held against it
leave the leaderboard and the health probe answering within 2 s and its log nearly still."""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import Server
from siege import FileCount, Siege, Visitor, visit

pytestmark = pytest.mark.usefixtures("bubblewrap")

#: A service's usual limit of open files (systemd's soft limit).
OPEN_FILES = 1024
#: Half-sent requests held at once: more than the server may have files.
HELD = 1100
#: Seconds the attack lasts while pages are asked.
ATTACK_SECONDS = 16.0
#: The longest a page may take under attack.
ANSWER_SECONDS = 2.0
#: The most the log may grow by during the attack.
LOG_BYTES = 1024 * 1024
#: The pages asked during the attack: the leaderboard, its API and the health probe.
PAGES = ("/", "/api/leaderboard", "/api/health")


@pytest.fixture
def more_files() -> Iterator[None]:
    """This process may open as many files as its hard limit allows (the siege holds 1,100
    sockets)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < HELD + 200:
        pytest.skip(f"the siege needs {HELD + 200} open files; the hard limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _server(tmp_path: Path, *options: str) -> Server:
    return Server(
        tmp_path,
        *("--field", "random", "--rated-decks", "0", "--workers", "1", *options),
        open_files=OPEN_FILES,
    )


@pytest.mark.alone
@pytest.mark.usefixtures("more_files")
def test_half_sent_requests_are_shed_and_pages_still_answer(tmp_path: Path) -> None:
    server = _server(tmp_path)
    server.start()
    address = ("127.0.0.1", server.port)
    siege = Siege(address, HELD)
    visitor = Visitor(address, PAGES)
    log = tmp_path / "server.log"
    assert server.process is not None
    files = FileCount(server.process.pid)
    try:
        before = log.stat().st_size
        files.start()
        siege.start()
        visitor.start()
        time.sleep(ATTACK_SECONDS)
        visits = visitor.stop()
        grown = log.stat().st_size - before
        opened, closed = siege.opened, siege.closed_by_server
        siege.stop()
        most_files = files.stop()
        after = visit(address, "/api/health", 10.0)
    finally:
        server.kill()
    times = [v.seconds for v in visits]
    slow = [v for v in visits if v.seconds >= ANSWER_SECONDS or v.status != 200]
    print(
        f"\nunder attack: {len(visits)} pages, median {statistics.median(times):.3f} s, "
        f"slowest {max(times):.3f} s, {len(slow)} late or failed; log grew {grown} bytes; "
        f"siege opened {opened} connections, the server closed {closed}; "
        f"the server held {most_files} files at most"
    )
    assert not slow, slow[:10]
    assert len(visits) >= 20
    assert grown < LOG_BYTES
    assert after.status == 200 and after.seconds < ANSWER_SECONDS, after
