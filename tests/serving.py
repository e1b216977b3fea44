"""The real ``arena serve`` for tests: :class:`Server` starts it as a process of its own on a
free loopback port over the test directory's database and submissions store, its output in
``server.log`` there, and talks to it over HTTP; :func:`add_participant` adds a participant
with the command and gives its token. :func:`guarded` serves a :func:`tiny_app` in this
process the way ``arena serve`` serves its own (held to its traffic limits)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.serve.background import ARENA

if TYPE_CHECKING:
    from arena.serve.server import GuardedServer
    from arena.serve.traffic import TrafficLimits


def free_port() -> int:
    """A loopback port free now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """An ``arena serve`` process over the test directory's database and store; with
    ``open_files``, the process may hold no more files than that (its RLIMIT_NOFILE, soft and
    hard, as a service manager sets it)."""

    def __init__(self, where: Path, *options: str, open_files: int | None = None) -> None:
        self.where = where
        self.options = options
        self.open_files = open_files
        self.env = {
            **os.environ,
            "ARENA_DB": f"sqlite:///{where / 'arena.db'}",
            "ARENA_SUBMISSIONS": str(where / "submissions"),
        }
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def arena(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ARENA, *args],
            env=self.env,
            cwd=self.where,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def start(self) -> None:
        log = open(self.where / "server.log", "ab")  # noqa: SIM115 - the process keeps it
        self.process = subprocess.Popen(
            [*ARENA, "serve", "--port", str(self.port), *self.options],
            env=self.env,
            cwd=self.where,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=None if self.open_files is None else self._limit_files,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/api/health", timeout=1).read()
                return
            except OSError:
                assert self.process.poll() is None, (self.where / "server.log").read_text()
                time.sleep(0.2)
        raise AssertionError("the server did not answer within 60 s")

    def _limit_files(self) -> None:
        assert self.open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        """Stop the server as Ctrl-C does (its children are interrupted and their leases
        given back)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        """``arena ARGS`` running beside the server, on its database and store; what it
        prints goes to ``spawned.log`` (:meth:`spawned_output`)."""
        log = open(self.where / "spawned.log", "ab")  # noqa: SIM115 - the process keeps it
        return subprocess.Popen(
            [*ARENA, *args], env=self.env, cwd=self.where, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def spawned_output(self) -> str:
        """What the commands of :meth:`spawn` printed so far."""
        path = self.where / "spawned.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def get(self, path: str, token: str | None) -> tuple[int, Any]:
        request = urllib.request.Request(f"{self.url}{path}")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        return json_answer(request)

    def put_json(self, path: str, token: str, body: Any) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), method="PUT"
        )
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "application/json")
        return json_answer(request)

    def delete(self, path: str, token: str) -> tuple[int, Any]:
        request = urllib.request.Request(f"{self.url}{path}", method="DELETE")
        request.add_header("Authorization", f"Bearer {token}")
        return json_answer(request)

    def page(self, path: str) -> str:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as answer:
            assert answer.status == 200 and "text/html" in answer.headers["content-type"]
            return str(answer.read().decode("utf-8"))

    def form(self, path: str) -> tuple[str, str]:
        """A form page's CSRF cookie (as a Cookie header) and the hidden field's value."""
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as answer:
            cookie = answer.headers["set-cookie"].split(";")[0]
            page = answer.read().decode("utf-8")
        field = page.split('name="csrf" value="')[1].split('"')[0]
        return cookie, field

    def post_form(
        self, path: str, fields: dict[str, str], file: Path | None, cookie: str
    ) -> tuple[int, str]:
        """Post a multipart form as a browser would (with ``cookie``); status and page."""
        parts = [
            f'--b0undary\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
            for k, v in fields.items()
        ]
        if file is not None:
            parts.append(
                f'--b0undary\r\nContent-Disposition: form-data; name="file"; '
                f'filename="{file.name}"\r\n\r\n'.encode()
                + file.read_bytes()
                + b"\r\n"
            )
        request = urllib.request.Request(
            f"{self.url}{path}", data=b"".join(parts) + b"--b0undary--\r\n"
        )
        request.add_header("Content-Type", "multipart/form-data; boundary=b0undary")
        request.add_header("Cookie", cookie)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8")

    def post_file(self, token: str, name: str, data: bytes) -> tuple[int, Any]:
        body = (
            b'--b0undary\r\nContent-Disposition: form-data; name="file"; filename="'
            + name.encode()
            + b'"\r\n\r\n'
            + data
            + b"\r\n--b0undary--\r\n"
        )
        request = urllib.request.Request(f"{self.url}/api/submissions", data=body)
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "multipart/form-data; boundary=b0undary")
        return json_answer(request)

    def wait_final(self, token: str, upload_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            code, state = self.get(f"/api/submissions/{upload_id}", token)
            assert code == 200, state
            if state["status"] in ("ranked", "failed"):
                return dict(state)
            time.sleep(0.3)
        raise AssertionError(f"upload {upload_id} still {state['status']} after 180 s")

    def board(self, games: int) -> dict[str, Any]:
        """The leaderboard once its standings hold at least ``games`` games (they are refit in
        the background as games arrive)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            code, board = self.get("/api/leaderboard", None)
            assert code == 200, board
            if board["games"] >= games:
                return dict(board)
            time.sleep(0.3)
        raise AssertionError(f"the leaderboard holds {board['games']} games after 120 s")


def json_answer(request: urllib.request.Request) -> tuple[int, Any]:
    """The status and JSON body of the answer to ``request``, an error's too."""
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def add_participant(server: Server, name: str) -> str:
    """Add participant ``name`` with ``arena serve participants add``; its token."""
    added = server.arena("serve", "participants", "add", name)
    assert added.returncode == 0, added.stderr
    return added.stdout.split()[-1]


#: The answer of :func:`tiny_app`'s ``/big``: more than a client's socket and the server's
#: kernel buffer hold, so that a client that reads nothing leaves some unwritten.
BIG = b"x" * (8 * 1024 * 1024)


def upload(server: Server, token: str, wheel: Path) -> int:
    """Upload ``wheel`` over plain HTTP with ``token``; the upload's id (202 expected)."""
    code, answered = server.post_file(token, wheel.name, wheel.read_bytes())
    assert code == 202, answered
    return int(answered["id"])


def wait_until(what: str, check: Callable[[], Any], seconds: float = 180) -> Any:
    """``check()``'s first true answer, asked every 0.2 s for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {seconds:g} s")


def tiny_app() -> Any:
    """A Starlette application for the traffic tests: ``GET /small`` ("ok"), ``GET /big``
    (:data:`BIG`, or its first ``?kib=N`` KiB) and ``POST /echo`` (the length of the body
    read)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    def small(request: Request) -> Response:
        return PlainTextResponse("ok")

    def big(request: Request) -> Response:
        size = int(request.query_params.get("kib", len(BIG) // 1024)) * 1024
        return Response(BIG[:size], media_type="application/octet-stream")

    async def echo(request: Request) -> Response:
        return PlainTextResponse(str(len(await request.body())))

    routes = [Route("/small", small), Route("/big", big), Route("/echo", echo, methods=["POST"])]
    return Starlette(routes=routes)


@contextlib.contextmanager
def guarded(limits: TrafficLimits, app: Any = None) -> Iterator[GuardedServer]:
    """:func:`tiny_app` (or ``app``) served in a thread of this process by
    :func:`arena.serve.server.guarded_server` under ``limits`` on a free loopback port (the
    server's ``listening.getsockname()``), as long as the block runs; no logs."""
    from arena.serve.server import guarded_server

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    server = guarded_server(
        app or tiny_app(), limits, listening, log_config=None, log_level="critical"
    )
    thread = threading.Thread(target=server.run, name="guarded", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        thread.join(30)
        listening.close()
