"""Hostile traffic is shed, not served (issue 37, item 4). Through the real server on a loopback
port with the open-file limit of a service (1,024): 1,100 half-sent requests held against it
leave the leaderboard and the health probe answering within 2 s and its log nearly still; a
slow upload is cut off and an idle connection closed. Through the same server code in this
process (:func:`serving.guarded`, a tiny application): every channel of the kind, each cut at
its own limit; the cap the open-file limit leaves room for; the log filter; bad options."""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from serving import BIG, Server, add_participant, free_port, guarded
from siege import FileCount, Siege, Visitor, visit

from arena.cli.main import cli
from arena.serve.connections import BODY, HEAD, Connections
from arena.serve.logs import RateLimitedLog
from arena.serve.server import Acceptor
from arena.serve.traffic import TrafficError, TrafficLimits, connection_room, traffic_limits

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


@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.usefixtures("bubblewrap", "more_files")
def test_half_sent_requests_are_shed_and_pages_still_answer(tmp_path: Path) -> None:
    """The attack of the issue: 1,100 connections half-sent (half a head, or a head announcing
    a body that never comes), each trickling, each opened again once closed; pages asked all
    the while answer within 2 s, the log grows by less than a megabyte, and once the attack
    stops the server answers as before."""
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


@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.usefixtures("bubblewrap")
def test_a_slow_upload_is_cut_off_and_an_idle_connection_closed(tmp_path: Path) -> None:
    """Through the real server: an upload with a good token whose body comes at 80 bytes a
    second is cut off once it is --body-timeout behind 1 KiB/s, and nothing is stored; a
    connection left idle after its answer is closed after --keep-alive; the log says what was
    cut off, and the server answers as before."""
    server = _server(tmp_path, *("--body-timeout", "2", "--body-rate", "1", "--keep-alive", "1"))
    token = add_participant(server, "alice")
    server.start()
    address = ("127.0.0.1", server.port)
    try:
        idle = _connect(address)
        idle.sendall(b"GET /api/health HTTP/1.1\r\nHost: arena\r\n\r\n")
        assert _answer(idle).startswith(b"HTTP/1.1 200")
        took, said = _closed_within(idle, 5)
        assert 0.8 <= took <= 2.5 and said == b""

        upload = _connect(address)
        upload.sendall(
            b"POST /api/submissions HTTP/1.1\r\nHost: arena\r\n"
            + f"Authorization: Bearer {token}\r\n".encode()
            + b"Content-Type: multipart/form-data; boundary=b0undary\r\n"
            + b"Content-Length: 300000\r\n\r\n--b0undary\r\nContent-Disposition: form-data; "
            + b'name="file"; filename="slow-1.0-py3-none-any.whl"\r\n\r\n'
        )
        took, said = _closed_within(upload, 15, trickle=b"z" * 16)
        assert 2.0 <= took <= 6.0 and said == b""
        assert server.get("/api/submissions", token) == (200, [])
        log = tmp_path / "server.log"
        deadline = time.monotonic() + 15  # the table says what it cut off every 10 s
        while "cut off: request body slower than 1 KiB/s" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        assert visit(address, "/", 10.0).status == 200
    finally:
        server.kill()


def _connect(address: tuple[str, int], source: str = "127.0.0.1", rcvbuf: int = 0) -> socket.socket:
    """A connection to ``address`` from ``source`` (a loopback address), its receive buffer
    ``rcvbuf`` bytes if given."""
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.bind((source, 0))
    sock.connect(address)
    return sock


def _closed_within(sock: socket.socket, limit: float, trickle: bytes = b"") -> tuple[float, bytes]:
    """Seconds until the server closes ``sock`` (``trickle`` sent every 0.2 s meanwhile, a
    slow client), and what it sent before; fails after ``limit`` seconds."""
    start = time.monotonic()
    got = b""
    sock.settimeout(0.2)
    while time.monotonic() - start < limit:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            if trickle:
                try:
                    sock.sendall(trickle)
                except OSError:
                    return time.monotonic() - start, got
            continue
        except OSError:
            return time.monotonic() - start, got
        if not data:
            return time.monotonic() - start, got
        got += data
    raise AssertionError(f"the connection is still open after {limit} s; got {got[:200]!r}")


def _answer(sock: socket.socket) -> bytes:
    """One whole answer read from ``sock`` (head and its Content-Length of body)."""
    data = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _limits(**values: float) -> TrafficLimits:
    return TrafficLimits(**{"max_connections": 50, **values})  # type: ignore[arg-type]


GET_SMALL = b"GET /small HTTP/1.1\r\nHost: arena\r\n\r\n"


@pytest.mark.alone
def test_a_request_head_must_be_whole_within_the_header_timeout() -> None:
    with guarded(_limits(header_timeout=1.0)) as server:
        sock = _connect(server.listening.getsockname())
        sock.sendall(b"GET /small HTTP/1.1\r\nHost: arena\r\nX-Wait: ")
        took, said = _closed_within(sock, 5, trickle=b"a")  # a byte every 0.2 s changes nothing
        assert 0.9 <= took <= 2.5 and said == b""
        assert server.table.dropped[HEAD] == 1


@pytest.mark.alone
def test_a_slow_body_is_cut_off_and_a_steady_one_read() -> None:
    with guarded(_limits(body_timeout=1.0, body_rate=1024.0)) as server:
        address = server.listening.getsockname()
        head = b"POST /echo HTTP/1.1\r\nHost: arena\r\nContent-Length: 100000\r\n\r\n"
        steady = _connect(address)
        steady.sendall(head + b"b" * 100_000)
        assert _answer(steady).endswith(b"\r\n\r\n100000")
        slow = _connect(address)
        slow.sendall(head + b"b" * 1000)
        took, said = _closed_within(slow, 6, trickle=b"b" * 10)  # 50 bytes a second
        assert 1.0 <= took <= 4.0 and said == b""
        assert server.table.dropped[BODY] == 1


@pytest.mark.alone
def test_an_idle_connection_is_closed_after_the_keep_alive() -> None:
    with guarded(_limits(keep_alive=0.5)) as server:
        sock = _connect(server.listening.getsockname())
        sock.sendall(GET_SMALL)
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        took, said = _closed_within(sock, 5)
        assert 0.4 <= took <= 1.6 and said == b""


@pytest.mark.alone
def test_a_client_that_takes_no_answer_is_cut_off() -> None:
    """The slow read: a large answer to a client that reads nothing stops the server writing;
    after the send timeout the connection is dropped and the rest of the answer with it."""
    with guarded(_limits(send_timeout=1.0, keep_alive=30.0)) as server:
        sock = _connect(server.listening.getsockname(), rcvbuf=4096)
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: arena\r\n\r\n")
        time.sleep(3)
        assert server.table.dropped["send"] == 1
        _, said = _closed_within(sock, 10)
        assert 0 < len(said) < len(BIG)


@pytest.mark.alone
def test_a_slow_download_is_not_cut_by_the_keep_alive() -> None:
    """The idle clock starts once the last answer is all taken: a client taking a megabyte at
    512 KiB/s gets all of it though the keep-alive is 0.3 s."""
    with guarded(_limits(send_timeout=5.0, keep_alive=0.3)) as server:
        sock = _connect(server.listening.getsockname(), rcvbuf=4096)
        sock.sendall(b"GET /big?kib=1024 HTTP/1.1\r\nHost: arena\r\n\r\n")
        got = b""
        sock.settimeout(5)
        while b"\r\n\r\n" not in got or len(got.partition(b"\r\n\r\n")[2]) < 1024 * 1024:
            chunk = sock.recv(16384)
            assert chunk, f"cut off after {len(got)} bytes"
            got += chunk
            time.sleep(16384 / (512 * 1024))
        assert not server.table.dropped


def test_a_connection_answers_its_share_of_requests() -> None:
    limits = TrafficLimits(max_connections=50, requests_per_connection=3)
    with guarded(limits) as server:
        sock = _connect(server.listening.getsockname())
        sock.sendall(GET_SMALL * 5)  # pipelined
        _, said = _closed_within(sock, 10)
        assert said.count(b"HTTP/1.1 200") == 3


def test_a_request_head_too_large_is_refused() -> None:
    with guarded(_limits()) as server:
        sock = _connect(server.listening.getsockname())
        sock.sendall(
            b"GET /small HTTP/1.1\r\nHost: arena\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n"
        )
        _, said = _closed_within(sock, 10)
        assert said.startswith(b"HTTP/1.1 400")


def test_at_the_cap_a_whole_head_makes_room_and_half_a_head_does_not() -> None:
    """Four connections held (one from 127.0.0.1, then three from 127.0.0.2, all half a head):
    a request from 127.0.0.1 is answered, and the connection dropped for it is the oldest of
    127.0.0.2, the peer holding most; half a head from a third peer is refused at once."""
    with guarded(TrafficLimits(max_connections=4)) as server:
        address = server.listening.getsockname()
        held = [_connect(address, source) for source in ("127.0.0.1", *["127.0.0.2"] * 3)]
        for sock in held:
            sock.sendall(b"GET /small HTTP/1.1\r\nX-Wait: ")
            deadline = time.monotonic() + 5
            while len(server.table.open) < held.index(sock) + 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        visitor = _connect(address)
        visitor.sendall(GET_SMALL)
        assert _answer(visitor).startswith(b"HTTP/1.1 200")
        _closed_within(held[1], 2)
        for sock in (held[0], *held[2:]):
            sock.settimeout(0.3)
            with pytest.raises(TimeoutError):  # still open
                sock.recv(1)
        newcomer = _connect(address, "127.0.0.3")
        newcomer.sendall(b"GET /small HTTP/1.1\r\nX-Wait: ")
        _, said = _closed_within(newcomer, 2)
        assert said == b""
        assert server.table.dropped["evicted"] == 1 and server.table.dropped["refused"] == 1


def test_the_cap_leaves_room_for_the_server_and_for_connections_being_dropped() -> None:
    assert connection_room(1024) == 768  # 128 kept for the server, 2 batches of 64
    assert traffic_limits(open_files=1024).max_connections == 768
    assert traffic_limits(open_files=1 << 20).max_connections == 4096
    assert traffic_limits(max_connections=100, open_files=1024).max_connections == 100
    limits = traffic_limits(header_timeout=3, body_rate=2, open_files=1024)
    assert (limits.header_timeout, limits.body_rate) == (3, 2048)
    with pytest.raises(TrafficError, match="room for 768 connections"):
        traffic_limits(max_connections=800, open_files=1024)
    with pytest.raises(TrafficError, match="too few to serve"):
        traffic_limits(open_files=24)


def test_ten_thousand_failed_accepts_are_a_few_log_lines() -> None:
    """asyncio's line for each accept() that found no file (the issue's flood): one passes per
    10 s, and once the interval is over, one line says how many were held back."""
    now = [0.0]
    written: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record.getMessage())

    logger = logging.getLogger("test-traffic.asyncio")
    logger.propagate = False
    logger.addHandler(Keep())
    limit = RateLimitedLog(1, 10.0, report_to=logger.name, clock=lambda: now[0])
    logger.addFilter(limit)
    try:
        error = OSError(errno.EMFILE, "Too many open files")
        for _ in range(10_000):
            try:
                raise error
            except OSError:
                logger.error("socket.accept() out of system resource", exc_info=True)
            now[0] += 0.003  # 30 s in all
        limit.flush(float("inf"))
    finally:
        logger.removeFilter(limit)
    assert len(written) <= 8, written
    passed = [line for line in written if line.startswith("socket.accept()")]
    said = [line for line in written if "were not written" in line]
    held = sum(int(line.split()[0]) for line in said)
    assert len(passed) == 3 and passed[0] == "socket.accept() out of system resource"
    assert held == 10_000 - len(passed)
    assert said[0].endswith(
        "(at most 1 of a kind every 10 s): socket.accept() out of system resource"
    )


def test_other_kinds_pass_beside_a_flood() -> None:
    now = [0.0]
    limit = RateLimitedLog(1, 10.0, clock=lambda: now[0])

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("x", logging.WARNING, __file__, 1, message, (), None)

    assert limit.filter(record("flood %d")) and not limit.filter(record("flood %d"))
    assert limit.filter(record("another"))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--header-timeout", "0"], "--header-timeout"),
        (["--body-rate", "-1"], "--body-rate"),
        (["--keep-alive", "nan"], "--keep-alive must be a positive number, not nan"),
        (["--max-connections", "999999"], "--max-connections 999999 needs more files"),
    ],
)
def test_a_bad_traffic_option_is_one_line(
    options: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # were it taken, the server would start here, on its own
    monkeypatch.setenv("ARENA_DB", f"sqlite:///{tmp_path / 'arena.db'}")
    monkeypatch.setenv("ARENA_SUBMISSIONS", str(tmp_path / "submissions"))
    result = CliRunner().invoke(cli, ["serve", "--port", str(free_port()), *options])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("arena: error: ")
    assert said in result.output


@pytest.mark.alone
def test_accept_failing_for_want_of_files_pauses_and_writes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Where asyncio's accept loop wrote a line (with its traceback) for each failed accept(),
    up to its queue's length a pass, the server's acceptor tries again 0.1 s later, counting."""

    class NoFiles(socket.socket):
        tries = 0

        def accept(self) -> tuple[socket.socket, object]:
            NoFiles.tries += 1
            raise OSError(errno.EMFILE, "Too many open files")

    async def attempt() -> Connections:
        listening = NoFiles()
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        table = Connections(_limits())
        acceptor = Acceptor(listening, table, asyncio.Protocol)
        acceptor.start()
        with socket.create_connection(listening.getsockname()):  # always ready to accept
            await asyncio.sleep(0.55)
        acceptor.close()
        listening.close()
        return table

    with caplog.at_level(logging.DEBUG):
        table = asyncio.run(attempt())
    assert 4 <= NoFiles.tries <= 7
    assert table.dropped["no files"] == NoFiles.tries
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
