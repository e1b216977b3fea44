"""The referee's side of a bot that runs in its own host process (:mod:`arena.hosting.host`).

:class:`HostHandle` starts the host (in the sandbox of :mod:`arena.hosting.sandbox`), speaks the
protocol of :mod:`arena.hosting.protocol` with it, never waits past a deadline, and turns every way
a host can fail into a :class:`~arena.errors.BotError`: a timeout, a crash reported by the host, the
process exiting, or a line that breaks the protocol (one that is not a message of the right shape,
or longer than :data:`~arena.hosting.protocol.MAX_LINE_BYTES`: the handle reads in bounded chunks
and never holds more of a line than that). After a fault the host is killed and a fresh one is
started for the next round. What the bot writes to stdout or stderr is kept in a bounded log.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any, NoReturn

from arena.errors import (
    ArenaError,
    BotCrashedError,
    BotError,
    BotExitedError,
    BotLimitError,
    BotProtocolError,
    BotTimeoutError,
    MemoryShortageError,
)
from arena.hosting import protocol as P
from arena.hosting.cgroups import BotGroup, CgroupError
from arena.hosting.epochs import (
    STOP_TIME,
    EpochError,
    FreshStart,
    Held,
    check_held,
    hold_state,
    sandbox_pids,
    stopped,
    wait_exited,
    wait_stopped,
)
from arena.hosting.renewal import Renewal, RenewalError, prestart
from arena.hosting.sandbox import HostProcess, Sandbox, choose_sandbox
from arena.hosting.submissions import parse_ref, snapshot_dir
from arena.referee.play import GRACE, BotHandle, Turn

#: Seconds a host may take to start (import its plugin, build and warm up its bot) before it is
#: a fault; compiling numba kernels into an empty cache takes most of it.
STARTUP_TIME = 120.0
#: Default address-space limit of a host, in MiB.
MEMORY_MB = 2048
#: Seconds a host's fork server may take to serve from a fresh process.
FRESH_TIME = 10.0
#: Bytes of a bot's output kept (the most recent ones).
LOG_BYTES = 64 * 1024
#: Most bytes read from a host's protocol pipe at once.
READ_CHUNK = 64 * 1024


#: How a host's exit reads for each question it was asked (``_receive``'s ``what``).
EXITED_WHILE = {
    "to start": "while starting",
    "to a move": "before answering its move",
    "to a fresh start": "while starting a fresh process",
}


class BotLog:
    """The last ``limit`` bytes a bot wrote to stdout or stderr, and how many were dropped."""

    def __init__(self, limit: int = LOG_BYTES) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.dropped = 0
        #: Every byte ever written, kept or not (a mark for :meth:`since`).
        self.written = 0
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        """Keep ``data``, dropping the oldest bytes past the limit."""
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            self.written += len(data)
            while self._size > self.limit and self._chunks:
                excess = self._size - self.limit
                head = self._chunks[0]
                if len(head) <= excess:
                    self._chunks.popleft()
                    self._size -= len(head)
                    self.dropped += len(head)
                else:
                    self._chunks[0] = head[excess:]
                    self._size -= excess
                    self.dropped += excess

    def _body(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    def text(self) -> str:
        """The kept output as text (with a note when older output was dropped)."""
        body = self._body()
        return (f"[{self.dropped} earlier bytes dropped]\n" if self.dropped else "") + body

    def since(self, mark: int, limit: int) -> tuple[str, int]:
        """What was written after ``mark`` (a former :attr:`written`), at most its last
        ``limit`` bytes (with a note of how many more there were), and the new mark."""
        with self._lock:
            written = self.written
            if written == mark:  # nothing new: the common case, after every block
                return "", written
            body = b"".join(self._chunks)
        fresh = min(written - mark, len(body))
        kept = body[len(body) - fresh :][-limit:] if fresh > 0 else b""
        lost = written - mark - len(kept)
        note = f"[{lost} earlier bytes dropped]\n" if lost > 0 and kept else ""
        return note + kept.decode("utf-8", "replace"), written

    def tail(self, lines: int = 5) -> str:
        """The last few lines, on one line, for a fault message."""
        kept = [x for x in self._body().splitlines() if x.strip()]
        return " | ".join(kept[-lines:])


def _pump(stream: Any, log: BotLog) -> None:
    """Copy what the host writes on ``stream`` into ``log`` until the host's end is closed;
    then close ``stream``."""
    try:
        while True:
            data = os.read(stream.fileno(), 65536)
            if not data:
                return
            log.write(data)
    except (OSError, ValueError):
        return
    finally:
        with contextlib.suppress(OSError):
            stream.close()


#: Path of the kernel's exit information of a pidfd (``PIDFD_GET_INFO``, Linux 6.15), its size.
_PIDFD_GET_INFO = (3 << 30) | (64 << 16) | (0xFF << 8) | 11
_PIDFD_INFO_EXIT = 1 << 3


def exit_status(pidfd: int, wait: float) -> tuple[bool, int | None]:
    """Whether the process ``pidfd`` refers to has ended (waiting at most ``wait`` seconds for
    it), and its exit status as ``os.waitstatus_to_exitcode`` gives it (negative for a signal),
    or ``None`` where the kernel does not say (before Linux 6.15) or it runs on."""
    ready = select.poll()
    ready.register(pidfd, select.POLLIN)
    if not ready.poll(wait * 1000.0):
        return False, None
    info = bytearray(64)
    struct.pack_into("Q", info, 0, _PIDFD_INFO_EXIT)
    try:
        fcntl.ioctl(pidfd, _PIDFD_GET_INFO, info)
    except OSError:
        return True, None
    if not struct.unpack_from("Q", info, 0)[0] & _PIDFD_INFO_EXIT:
        return True, None
    return True, os.waitstatus_to_exitcode(struct.unpack_from("i", info, 60)[0])


class _Epoch:
    """The referee's ends of one served process's named pipes (:mod:`arena.hosting.renewal`):
    requests go into ``requests`` (held open for reading too, so that opening it never waits),
    answers come from ``answers``, its output from ``output`` (copied into the bot's log by
    :meth:`drain` whenever the referee waits for it); and, once it has started, a pidfd of the
    process."""

    def __init__(self, renewal: Renewal) -> None:
        self.requests = os.open(renewal.pipe("in"), os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self.answers = os.open(renewal.pipe("out"), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self.output = os.open(renewal.pipe("log"), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self.pidfd: int | None = None

    def drain(self, log: BotLog) -> bool:
        """Copy what the process has written to its output so far into ``log``; whether its
        output has ended (every writer gone)."""
        try:
            while data := os.read(self.output, READ_CHUNK):
                log.write(data)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return True

    def close(self, log: BotLog) -> None:
        """Take the last output into ``log`` and close the referee's ends."""
        self.drain(log)
        for fd in (self.requests, self.answers, self.output, self.pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pidfd = None


class HostHandle(BotHandle):
    """A bot in its own host process, named by ``spec`` (``NAME[param=value,...]``) from the
    plugin ``plugin`` (``DISTRIBUTION:ENTRY_POINT``, or an entry-point name no other
    distribution uses: see :func:`~arena.hosting.plugins.plugin_ref`).

    The host starts lazily at the first round and after every fault. ``startup_time`` bounds its
    start; the move time limit comes from the referee. Use a handle from the thread that made it
    (or from one that outlives it): bubblewrap ends a sandboxed host when the *thread* that
    started it exits.
    """

    def __init__(
        self,
        spec: str,
        plugin: str,
        name: str | None = None,
        sandbox: Sandbox | None = None,
        memory_mb: int = MEMORY_MB,
        startup_time: float = STARTUP_TIME,
        log: BotLog | None = None,
    ) -> None:
        self.spec = spec
        self.plugin = plugin
        self.name = name or spec
        self.sandbox = sandbox if sandbox is not None else choose_sandbox()
        self.memory_mb = memory_mb
        self.startup_time = startup_time
        self.log = log or BotLog()
        self._proc: subprocess.Popen[bytes] | None = None
        self._host: HostProcess | None = None
        #: The kernel limit the last host process ran into (``"memory"``, ``"processes"``).
        self.limit_hit: str | None = None
        self._buffer = b""
        self._sent = 0  # events of the current round already sent
        self._pending = b""  # a queued "start" message
        self._poll = select.poll()
        self.starts = 0  # how many host processes were started
        self.fresh_starts = 0  # how many processes the hosts' fork servers started
        self._nonces = random.Random(os.urandom(16))
        self._decks: set[object] = set()  # the decks the serving process has played
        self._fresh_needed = True
        self._serving = False  # whether a forked process serves the bot
        self._held: int | None = None  # the outside pid of the stopped fork server
        self._hold_state: Held | None = None  # what it had when first held (epochs.Held)
        self._held_at = 0  # fresh_starts when it was held (it has not run since until more)
        self._renewal: Renewal | None = None  # the sandbox's agent
        self._epoch: _Epoch | None = None  # the pipes of the process it serves
        self._keep: set[int] = set()  # outside pids of bubblewrap, its init and the fork server
        self._early_failure: Exception | None = None  # of launch_early, for the next start
        self._launching = False  # its process started, its hello not read yet
        #: Whether the host starts at the least CPU weight, getting the core only when play
        #: leaves it idle (a start in the background, beside games being played).
        self.idle_start = False

    # --- process ------------------------------------------------------------------------------

    def terminate(self) -> None:
        """Kill the host's processes now; safe from any thread (the thread using the handle
        then sees the host gone)."""
        proc, host = self._proc, self._host
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if host is not None:
                with contextlib.suppress(OSError):
                    host.thaw()  # a frozen process dies only once it runs

    def memory_bytes(self) -> int | None:
        """The memory the bot's processes use now (``None``: not running, or not measured)."""
        return self._host.memory_bytes() if self._host is not None else None

    @property
    def running(self) -> bool:
        """Whether the host process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def launch(self) -> None:
        """Start the host now, if it is not running (a round's :meth:`start` then only queues
        its news); a start that fails raises the fault, as :meth:`start` does."""
        if self._proc is None:
            self._launch()
        elif self._launching:
            self._greet()

    def launch_early(self, wait: bool = True) -> None:
        """:meth:`launch`, keeping a failure for the next :meth:`start` to raise (so that the
        referee records it as that round's fault) instead of raising it here. With ``wait``
        false, only start the host's process (:meth:`launch` or :meth:`start` then waits for
        its hello): several hosts started so, then waited for, start in the time of one
        (:func:`arena.hosting.starts.launch_together`)."""
        if self._early_failure is not None:
            return  # its fault waits for the next start: not tried twice
        try:
            if self._proc is None:
                self._spawn()
            if wait:
                self.launch()
        except Exception as exc:  # raised again, as it was, by the next start
            self._early_failure = exc

    def _launch(self) -> None:
        self._spawn()
        self._greet()

    def _spawn(self) -> None:
        """Start the host's process (it sets itself up meanwhile; :meth:`_greet` waits)."""
        argv = [
            sys.executable,
            "-m",
            "arena.hosting.host",
            "--plugin",
            self.plugin,
            "--bot",
            self.spec,
        ]
        binds = self.sandbox.own(self.plugin) if self.sandbox.isolated else []
        parsed = parse_ref(self.plugin)
        if parsed is not None:  # a submission: its own snapshot, read-only, and no other
            snapshot = str(snapshot_dir(parsed[0]))
            argv += ["--submission", self.sandbox.submission_path(snapshot)]
            binds.append((snapshot, self.sandbox.submission_path(snapshot)))
        argv += ["--fork-server", self._fork_mode(), "--memory-mb", str(self.memory_mb)]
        if self.sandbox.isolated and self.sandbox.hierarchy is None:
            argv += ["--processes", str(self.sandbox.limits.processes)]
        self._buffer = b""
        self.limit_hit = None
        self._host = self.sandbox.launch(argv, binds)
        if self._fork_mode() == "held":  # the agents' server starts while the host does
            prestart()
        if self.idle_start:
            self._idle(True)
        self._proc = self._host.process
        self.starts += 1
        assert self._proc.stdout is not None
        os.set_blocking(self._proc.stdout.fileno(), False)
        self._poll = select.poll()
        self._poll.register(self._proc.stdout.fileno(), select.POLLIN | select.POLLHUP)
        threading.Thread(target=_pump, args=(self._proc.stderr, self.log), daemon=True).start()
        self._launching = True

    def _greet(self) -> None:
        """Wait for the hello of the host :meth:`_spawn` started, and hold its fork server."""
        self._launching = False
        hello = self._receive(self.startup_time, "to start")
        if hello["type"] == P.ERROR:
            self._kill()
            raise BotCrashedError(f"the bot could not be set up: {hello.get('message', '')}")
        if hello["type"] != P.HELLO:
            self._kill()
            raise BotProtocolError(f"expected hello, got {hello['type']!r}")
        if hello.get("protocol") != P.PROTOCOL_VERSION:
            self._kill()
            raise BotProtocolError(
                f"host speaks protocol {hello.get('protocol')!r}, not {P.PROTOCOL_VERSION}"
            )
        self._serving = False
        if self._fork_mode() == "held":
            self._hold(int(hello.get("pid", 0)))
        assert self._host is not None  # _receive raised if it was killed meanwhile
        self._host.freeze()
        if self.idle_start:
            self._idle(False)

    def _idle(self, low: bool) -> None:
        """Give the host the least CPU weight (``low``) or the usual one, where a control
        group holds it (see :meth:`~arena.hosting.cgroups.BotGroup.set_cpu_weight`)."""
        if self._host is not None and self._host.group is not None:
            with contextlib.suppress(OSError):
                self._host.group.set_cpu_weight(low)

    def _kill(self) -> None:
        self._launching = False
        proc, self._proc = self._proc, None
        host, self._host = self._host, None
        self._pending = b""
        self._serving = False
        self._decks = set()
        self._held = None
        if self._epoch is not None:
            self._epoch.close(self.log)
            self._epoch = None
        if self._renewal is not None:
            self._renewal.close()
            self._renewal = None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        if host is not None:
            with contextlib.suppress(OSError):
                host.thaw()  # a frozen process dies only once it runs
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # unsent data to a dead host
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if host is not None:
            self.limit_hit = host.limit_hit()
            host.close()

    # --- fresh processes per deck (arena.hosting.epochs) ---------------------------------------

    def _fork_mode(self) -> str:
        """How the host's fork server runs: ``held`` where the sandbox holds it
        (:attr:`~arena.hosting.sandbox.Sandbox.holds`), else ``cooperative`` (see
        :mod:`arena.hosting.epochs`)."""
        return "held" if self.sandbox.holds else "cooperative"

    def _hold(self, hello_pid: int) -> None:
        """Hold the process that said hello (``hello_pid`` in its namespace): wait until it has
        stopped itself (it stays stopped but while it forks, see :mod:`arena.hosting.epochs`),
        note what its children will inherit, and attach the sandbox's agent
        (:mod:`arena.hosting.renewal`), which makes its ``/tmp`` read-only."""
        assert self._host is not None and self._host.group is not None and self._proc is not None
        group = self._host.group
        zygote = None
        bubblewrap = {self._proc.pid}
        members = group.pids()
        inside = sandbox_pids(members)
        for pid in members:
            inner = inside.get(pid)
            if inner is None or inner == 1:  # what starts the sandbox, and bubblewrap's init
                bubblewrap.add(pid)
            elif inner == hello_pid:
                zygote = pid
        if zygote is None:
            self._fail(BotProtocolError(f"its hello names pid {hello_pid}, which is not its own"))
        self._keep = {*bubblewrap, zygote}
        try:
            group.narrow_freezer(p for p in members if p not in bubblewrap)
            wait_stopped(zygote)
            self._hold_state = hold_state(zygote)
            self._held_at = self.fresh_starts
            uid = self._host.uid if self._host.uid is not None else os.geteuid()
            self._renewal = Renewal(zygote, uid, self.sandbox.limits.scratch_mb)
        except (FileNotFoundError, ProcessLookupError) as exc:  # it died (or was killed) first
            self._fail(BotExitedError(f"its fork server is gone ({exc})"))
        except EpochError as exc:
            self._fail(BotProtocolError(f"{exc}: it could carry one deck's games into another's"))
        except (OSError, CgroupError, RenewalError) as exc:
            self._kill()
            raise ArenaError(f"cannot hold {self.name}'s fork server: {exc}") from None
        self._held = zygote

    def new_game(self, deck: object) -> None:
        """Say which deck the next round is played on (any hashable key, the same for the same
        deck): before a deck the serving process has played already, a fresh one takes over."""
        if deck in self._decks:
            self._fresh_needed = True
            self._decks = set()
        self._decks.add(deck)

    def _fresh(self) -> None:
        """Serve the bot from a fresh process forked from the host's fork server."""
        assert self._host is not None and self._proc is not None
        nonce = self._nonces.getrandbits(62)
        held, group = self._held, self._host.group
        if held is None or group is None:
            self._host.thaw()
            self._send(P.encode(P.FRESH, nonce=nonce))
            ready = self._receive(FRESH_TIME, "to a fresh start")
            self._host.freeze()
            self._check(ready, P.READY)
            self._serving = True
            self._fresh_needed = False
            self.fresh_starts += 1
            return
        if self._serving:
            self._end_served(group)  # and thaws the group
        else:
            group.thaw()  # a frozen process shows as waiting, not as stopped
        assert self._renewal is not None
        try:
            if not stopped(held):
                raise EpochError("its fork server ran while the bot played")
            if self.fresh_starts > self._held_at:  # it has run (forked) since it was held
                assert self._hold_state is not None
                check_held(held, self._hold_state)
        except EpochError as exc:
            self._fail(BotProtocolError(f"{exc}: it could carry one deck's games into another's"))
        except OSError as exc:
            self._fail(BotExitedError(f"its fork server is gone ({exc})"))
        try:
            self._renewal.renew()
            self._epoch = _Epoch(self._renewal)
        except (RenewalError, OSError) as exc:
            self._kill()
            raise ArenaError(f"cannot start a fresh process of {self.name}: {exc}") from None
        self._poll = select.poll()
        self._poll.register(self._epoch.answers, select.POLLIN | select.POLLHUP)
        self._poll.register(self._epoch.output, select.POLLIN)
        self._buffer = b""
        self._send(P.encode(P.FRESH, nonce=nonce))
        try:
            start = FreshStart(held)
            os.kill(held, signal.SIGCONT)
            ready = self._receive(FRESH_TIME, "to a fresh start", start)
            wait_stopped(held)  # it stops itself once it has forked: at once, normally
            served = start.find()
            if served is None:
                raise EpochError("its fork server stopped without a fresh process")
            self._epoch.pidfd = os.pidfd_open(served)
        except EpochError as exc:
            self._fail(BotProtocolError(str(exc)))
        except OSError as exc:
            self._fail(BotExitedError(f"its fork server is gone ({exc})"))
        self._host.freeze()
        self._check(ready, P.READY)
        if ready["nonce"] != nonce:
            self._fail(BotProtocolError("a 'ready' message that answers no request of the referee"))
        self._serving = True
        self._fresh_needed = False
        self.fresh_starts += 1

    def _end_served(self, group: BotGroup) -> None:
        """Kill every process of the bot but bubblewrap's and the held one while they are
        frozen, thaw them, and wait until they are gone; then close the referee's ends of their
        pipes."""
        killed: set[int] = set()
        for _ in range(100):
            left = [p for p in group.frozen_pids() if p not in self._keep and p not in killed]
            if not left:
                group.thaw()  # a frozen process dies only once it runs
                try:
                    wait_exited(killed, STOP_TIME)
                except EpochError as exc:
                    self._fail(BotExitedError(f"its processes could not be ended ({exc})"))
                if self._epoch is not None:
                    self._epoch.close(self.log)
                    self._epoch = None
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            killed.update(left)
        self._fail(BotExitedError("its processes could not be ended for a fresh start"))

    # --- lines with deadlines -----------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        fd = self._epoch.requests if self._epoch is not None else self._proc.stdin.fileno()
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:
            self._exited("while being sent a message")

    def _raise_limit(self, detail: str) -> None:
        """Raise :class:`BotLimitError` if the last host ran into a kernel limit."""
        if self.limit_hit is None:
            return
        if self.limit_hit == "shortage":
            raise MemoryShortageError(f"the machine ran short of memory{detail}")
        what = {"memory": "memory limit", "processes": "process limit"}.get(self.limit_hit)
        limits = self.sandbox.limits
        amount = (
            f"{limits.memory_mb} MiB with its scratch space"
            if self.limit_hit == "memory"
            else f"{limits.processes} processes and threads"
        )
        raise BotLimitError(f"the bot went over its {what} ({amount}){detail}")

    def _exited(self, when: str) -> None:
        proc, epoch = self._proc, self._epoch
        code: int | None
        ended = False
        if epoch is not None:  # a held server's served process (and what it started) is gone
            pidfd = epoch.pidfd
            ended, code = exit_status(pidfd, 2.0) if pidfd is not None else (False, None)
        else:
            try:
                code = proc.wait(timeout=2) if proc is not None else None
            except subprocess.TimeoutExpired:  # the bot closed the pipe but its process runs on
                code = None
        self._kill()
        time.sleep(0.01)  # let the log pump take the last output
        tail = self.log.tail()
        detail = f"; last output: {tail}" if tail else ""
        self._raise_limit(f" {when}{detail}")
        if code is None:
            reason = "exited (this kernel does not say how)" if ended else "closed its pipe"
        elif code < 0:
            reason = f"killed by signal {-code}"
        else:
            reason = f"exited with code {code}"
        raise BotExitedError(f"the bot's process {reason} {when}{detail}")

    def _reply_fd(self) -> int:
        """The (non-blocking) file descriptor the host's messages arrive on: the served
        process's own pipe where a held server serves it."""
        if self._epoch is not None:
            return self._epoch.answers
        assert self._proc is not None and self._proc.stdout is not None
        return self._proc.stdout.fileno()

    def _read_line(self, limit: float, what: str, watch: FreshStart | None = None) -> bytes:
        """The next line the host sends (without its newline), waiting at most ``limit`` s (and,
        with ``watch``, only while the fresh start it watches is not overdue).

        It reads in chunks of at most :data:`READ_CHUNK` bytes and never holds more than
        :data:`~arena.hosting.protocol.MAX_LINE_BYTES` + 1 bytes of a line: a longer line is a
        :class:`BotProtocolError` as soon as that much of it has come.
        """
        fd = self._reply_fd()
        deadline = time.monotonic() + limit
        searched = 0  # the buffer before this holds no newline
        while (end := self._buffer.find(b"\n", searched)) < 0:
            if len(self._buffer) > P.MAX_LINE_BYTES:
                self._fail(BotProtocolError(f"a line longer than {P.MAX_LINE_BYTES} bytes"))
            searched = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(BotTimeoutError(f"no answer {what} within {limit:g} s"))
            ready = self._poll.poll(min(remaining, 0.05 if watch else remaining) * 1000.0)
            if self._epoch is not None and any(fd == self._epoch.output for fd, _ in ready):
                if self._epoch.drain(self.log):  # its output, while it thinks; or its end
                    self._poll.unregister(self._epoch.output)
                if len(ready) == 1:
                    continue
            if not ready:
                try:
                    late = watch.overdue(f"did not answer {what}") if watch else None
                except EpochError as exc:
                    self._fail(BotProtocolError(str(exc)))
                except OSError as exc:
                    self._fail(BotExitedError(f"its fork server is gone ({exc})"))
                if late is not None:
                    self._fail(BotTimeoutError(late))
                continue
            try:
                data = os.read(fd, min(READ_CHUNK, P.MAX_LINE_BYTES + 1 - len(self._buffer)))
            except BlockingIOError:  # pragma: no cover - poll said it was readable
                continue
            except OSError:
                data = b""
            if not data:
                self._buffer = b""
                self._exited(EXITED_WHILE.get(what, what))
            self._buffer += data
        line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
        return line

    def _fail(self, error: BotError) -> NoReturn:
        """Kill the host, forget what it sent, and raise ``error`` (or, where the kernel had
        killed the bot for the machine's memory shortage, :class:`MemoryShortageError`: what
        followed from that is no bot's fault)."""
        self._kill()
        self._buffer = b""
        if self.limit_hit == "shortage":
            self._raise_limit(f" ({error})")
        raise error

    def _receive(self, limit: float, what: str, watch: FreshStart | None = None) -> dict[str, Any]:
        """The next message, waiting at most ``limit`` seconds (see :meth:`_read_line` for
        ``watch``); any line that is not a message of the protocol
        (:func:`arena.hosting.protocol.decode`) is a :class:`BotProtocolError`."""
        line = self._read_line(limit, what, watch)
        try:
            return P.decode(line)
        except P.ProtocolError as exc:
            self._fail(BotProtocolError(str(exc)))

    # --- BotHandle ----------------------------------------------------------------------------

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Start the host if needed and queue the news that a round begins.

        The ``start`` message goes out with the bot's first ``act`` of the round, in one write,
        so a round costs the host no extra wake-up; a bot whose ``reset`` fails answers that
        ``act`` with an error. A bot that never moves in a round is not told of it.
        """
        failure = self._early_failure
        if failure is not None:
            self._early_failure = None
            raise failure
        if self._proc is None:  # a host that dies between rounds shows up at the next act
            self._launch()
        elif self._launching:
            self._greet()
        if self._fresh_needed or not self._serving:
            self._fresh()
        self._sent = 0
        self._pending = P.encode(P.START, seat=seat, players=players, variant=variant, seed=seed)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Send the seat's view (with only the events new to it) and return its answer."""
        rows = turn.rows_since(self._sent)
        self._sent = len(turn.game.rows)
        nonce = self._nonces.getrandbits(62)
        message = P.encode(
            P.ACT,
            view=turn.view(),
            legal=turn.legal(),
            events=rows,
            tokens=list(turn.tokens),
            round=turn.round_number,
            nonce=nonce,
        )
        if self._host is not None:
            self._host.thaw()
        self._send(self._pending + message)
        self._pending = b""
        limit = 86400.0 if time_limit is None else time_limit + GRACE
        answer = self._receive(limit, "to a move")
        if self._host is not None:
            self._host.freeze()
        if self._host is not None and self._host.group is not None and self._host.limit_hit():
            self._kill()
            self._raise_limit(" while choosing a move")
        if answer.get("nonce") != nonce:
            self._fail(
                BotProtocolError(
                    f"a {P.describe(answer['type'])} message that answers no request of the "
                    "referee (written ahead, or left from an earlier one)"
                )
            )
        self._check(answer, P.ACTION)
        action: str = answer["action"]  # a string: decode checked the fields
        return action

    def output_mark(self) -> int:
        """How many bytes the bot has written to stdout and stderr so far (its :class:`BotLog`'s
        :attr:`~BotLog.written`)."""
        return self.log.written

    def output_since(self, mark: int, limit: int) -> str:
        """What the bot wrote after ``mark`` (its last ``limit`` bytes) as read so far: output
        still on its way when the answer came is read with the next move's."""
        return self.log.since(mark, limit)[0]

    def _check(self, answer: dict[str, Any], expected: str) -> None:
        """Return if ``answer`` (a decoded message) is of type ``expected``; else raise the
        fault it is: the bot's own error (a crash, or a protocol error the host saw), or a
        :class:`BotProtocolError` for a message of another type."""
        if answer["type"] == expected:
            return
        if answer["type"] == P.ERROR:
            if answer["kind"] == "protocol":
                self._fail(BotProtocolError(answer["message"]))
            raise BotCrashedError(answer["message"])
        self._fail(BotProtocolError(f"expected {expected!r}, got {P.describe(answer['type'])}"))

    def after_fault(self) -> None:
        """Kill the host; the next round starts a fresh one."""
        self._kill()

    def close(self) -> None:
        """Ask the host to quit, then make sure it is gone (a held fork server, stopped, cannot
        quit: its host is ended at once)."""
        if self.running and self._held is None:
            try:
                assert self._proc is not None and self._proc.stdin is not None
                if self._host is not None:
                    self._host.thaw()
                self._proc.stdin.write(P.encode(P.QUIT))
                self._proc.stdin.flush()
                self._proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._kill()
