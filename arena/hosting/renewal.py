"""What makes each process a held fork server serves fresh in what the kernel keeps for its
sandbox: an *agent* of the arena inside the sandbox's mount and PID namespaces
(``docs/sandbox.md``, "What a fresh process shares").

The processes of one bot share a mount namespace (its ``/tmp``) and a PID namespace (the next
pid). Before each fresh process, the agent makes both as they were after ``warm_up``:

- ``/tmp``: once the fork server has said hello, the ``/tmp`` its ``warm_up`` wrote is made
  read-only; each fresh process gets an overlay of it under a writable layer on a new file
  system made for that process alone (:data:`EPOCH_MOUNT`), so nothing a served process does to
  ``/tmp`` (files, their contents, times, modes, extended attributes, the file system's inode
  numbers and free space) reaches the next one: the layer is discarded whole;
- the protocol's pipes: three new named pipes on that file system (``in``, ``out``, ``log``),
  owned by the sandbox's uid, so that no open file description (its flags, its owner, its pipe
  size, bytes left in it) is shared between two served processes;
- the next pid: set back to the same number (``/proc/sys/kernel/ns_last_pid``, which only a
  member of the namespace may write), so that no process learns how many were started before
  it.

The agents are small processes of the arena, run as the arena's user (root, where the sandbox
runs as a uid of its own) and never in a bot's control group: one *agent server* per arena
process that holds fork servers (started with its first held host, so that its interpreter
starts while that host does), which forks one agent per sandbox into the sandbox's PID
namespace (a fork of a small process: a millisecond and a few hundred KiB, where an interpreter
of its own would take 25 ms and 9 MiB). An agent enters the namespaces of its fork server, so the
paths it touches (``/tmp``, :data:`EPOCH_MOUNT`) are mount points on the sandbox's read-only
root, which nothing of the bot can replace; it reads nothing the bot wrote. In the sandbox it is
one process more, which the bot can neither signal nor trace.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import threading
import time

from arena.errors import ArenaError

#: Where each served process's own file system is mounted in the sandbox (an empty directory
#: that bubblewrap makes on the sandbox's read-only root); the named pipes are in its ``p``.
EPOCH_MOUNT = "/run/arena"
#: The named pipes of the protocol in a served process's file system.
PIPES = ("in", "out", "log")
#: Seconds an agent may take to attach or to renew (milliseconds, normally).
AGENT_TIME = 10.0

#: The agent server. Its standard input is a Unix socket on which the arena sends, for each
#: sandbox, a line ``PID UID SCRATCH_MB`` (the fork server's pid in the arena's PID namespace,
#: the sandbox's kernel uid, the size of a served process's layer) with a socket of its own for
#: that sandbox's agent. The agent answers ``ready`` on it once attached (the fork server's
#: ``/tmp`` made read-only), then ``ok`` to each ``renew`` line (or ``error TEXT``), and ends at
#: the end of its input.
SERVER = r"""
import contextlib, ctypes, os, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # its agents end with their sandboxes
def call(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_MOVE, MS_REC, MNT_DETACH = 4096, 8192, 16384, 2

def agent(mnt, uid, scratch, mode, channel):
    # the sandbox's /proc is read-only: the counter (of the writer's own PID namespace) is
    # written through the arena's, opened before entering the sandbox's mount namespace
    counter = os.open("/proc/sys/kernel/ns_last_pid", os.O_RDWR)
    last = os.pread(counter, 32, 0).strip()
    call(libc.setns(mnt, 0), "setns")
    os.close(mnt)
    os.chdir("/")
    talk = os.fdopen(channel, "rb+", buffering=0)
    def say(text):
        talk.write(text.encode() + b"\n")
    # what is mounted inside /tmp (packages installed below it, shown at their own paths):
    # shown again inside each layer, whose overlay of /tmp would hide them
    inside = []
    with open("/proc/self/mountinfo", "rb") as f:
        for row in f:
            point = row.split()[4].decode()
            if point.startswith("/tmp/") and not any(point.startswith(p + "/") for p in inside):
                inside = [p for p in inside if not p.startswith(point + "/")] + [point]
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    call(libc.mount(None, b"/tmp", None, flags, None), "read-only /tmp")
    say("ready")
    owner = -1 if os.geteuid() != 0 else uid  # in the user namespace: the bot's uid already
    epoch = b"/run/arena"
    fresh = False
    for command in talk:
        try:
            if fresh:
                call(libc.umount2(b"/tmp", MNT_DETACH), "unmount the layer")
                call(libc.umount2(epoch, MNT_DETACH), "unmount the epoch")
            options = f"size={scratch}m,mode=0755".encode()
            call(libc.mount(b"arena", epoch, b"tmpfs", MS_NOSUID | MS_NODEV, options), "epoch")
            fresh = True
            os.mkdir("/run/arena/p", 0o755)
            for name in ("in", "out", "log"):
                os.mkfifo(f"/run/arena/p/{name}", 0o600)
                os.chown(f"/run/arena/p/{name}", owner, owner)
            os.mkdir("/run/arena/s", 0o700)
            os.mkdir("/run/arena/s/upper", mode)
            os.chmod("/run/arena/s/upper", mode)
            os.chown("/run/arena/s/upper", owner, owner)
            os.mkdir("/run/arena/s/work", 0o700)
            os.mkdir("/run/arena/s/merged", 0o755)
            layers = b"lowerdir=/tmp,upperdir=/run/arena/s/upper,workdir=/run/arena/s/work"
            merged = b"/run/arena/s/merged"
            call(libc.mount(b"arena", merged, b"overlay", MS_NOSUID | MS_NODEV, layers), "overlay")
            for point in inside:
                there = merged + point[4:].encode()
                call(libc.mount(point.encode(), there, None, MS_BIND | MS_REC, None), "bind")
                flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
                call(libc.mount(None, there, None, flags, None), "read-only bind")
            call(libc.mount(merged, b"/tmp", None, MS_MOVE, None), "move the layer to /tmp")
            os.pwrite(counter, last, 0)
            say("ok")
        except OSError as exc:
            say(f"error {exc}")

control = socket.socket(fileno=0)
while True:
    try:
        data, fds, _, _ = socket.recv_fds(control, 256, 1)
    except OSError:
        break
    if not data:
        break
    if not fds:
        continue
    channel = fds[0]
    try:
        server, uid, scratch = (int(x) for x in data.split())
        user = os.geteuid() != 0  # not root: the arena owns the sandbox's user namespace
        names = (["user"] if user else []) + ["pid", "mnt"]
        spaces = [os.open(f"/proc/{server}/ns/{name}", os.O_RDONLY) for name in names]
        mode = os.stat(f"/proc/{server}/root/tmp").st_mode & 0o7777
    except (OSError, ValueError) as exc:
        os.write(channel, f"error {exc}\n".encode())
        os.close(channel)
        continue
    try:
        if user:  # a user namespace cannot be left: entered by a process forked for it
            middle = os.fork()
            if middle:
                with contextlib.suppress(ChildProcessError):  # reaped by the kernel
                    os.waitpid(middle, 0)
                for fd in [*spaces, channel]:
                    os.close(fd)
                continue
            control.close()
            for fd in spaces[:-1]:
                call(libc.setns(fd, 0), "setns")
        else:  # root: this process's next children go into the sandbox's PID namespace
            call(libc.setns(spaces[-2], 0), "setns")
        if os.fork() == 0:  # a member of the sandbox's PID namespace
            code = 1
            try:
                control.close()
                agent(spaces[-1], uid, scratch, mode, channel)
                code = 0
            except BaseException as exc:
                with contextlib.suppress(OSError):
                    os.write(channel, f"error {exc}\n".encode())
            finally:
                os._exit(code)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.write(channel, f"error {exc}\n".encode())
    if user:
        os._exit(0)
    for fd in [*spaces, channel]:
        os.close(fd)
"""


class RenewalError(ArenaError):
    """The agent could not attach to a sandbox or renew what a served process gets: the
    arena's own failure (a kernel without overlays, say), never the bot's."""


class _AgentServer:
    """This process's agent server (see the module docstring), started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._owner = -1

    def start(self) -> None:
        """Start the server now, if it is not running (so that its interpreter starts while a
        host does)."""
        with self._lock:
            self._started()

    def _started(self) -> socket.socket:
        if (
            self._owner == os.getpid()
            and self._process is not None
            and self._process.poll() is None
            and self._control is not None
        ):
            return self._control
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", SERVER],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            theirs.close()
        self._control, self._owner = ours, os.getpid()
        return ours

    def attach(self, server: int, uid: int, scratch_mb: int) -> socket.socket:
        """A new agent for the fork server ``server``; the socket the arena speaks to it on."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                control = self._started()
                socket.send_fds(
                    control, [f"{server} {uid} {scratch_mb}".encode()], [theirs.fileno()]
                )
        except OSError as exc:
            ours.close()
            raise RenewalError(f"the arena's agent server is gone ({exc})") from None
        finally:
            theirs.close()
        return ours


_SERVER = _AgentServer()


def prestart() -> None:
    """Start this process's agent server now, while a host starts."""
    _SERVER.start()


class Renewal:
    """The agent of one held fork server (outside pid ``server``, sandbox uid ``uid``, layers
    of ``scratch_mb`` MiB), attached as it is made: :meth:`renew` before each fresh process,
    :meth:`pipe` for the referee's end of that process's named pipes, :meth:`close` when the
    host ends."""

    def __init__(self, server: int, uid: int, scratch_mb: int) -> None:
        self.server = server
        self._channel = _SERVER.attach(server, uid, scratch_mb)
        self._buffer = b""
        try:
            self._answer("ready")
        except BaseException:
            self.close()
            raise

    def _answer(self, expected: str) -> None:
        """Wait (at most :data:`AGENT_TIME`) for the agent's next line, which must be
        ``expected``."""
        fd = self._channel.fileno()
        deadline = time.monotonic() + AGENT_TIME
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RenewalError(f"the sandbox's agent did not answer within {AGENT_TIME:g} s")
            data = os.read(fd, 4096)
            if not data:
                raise RenewalError("the sandbox's agent ended")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        text = line.decode(errors="replace")
        if text != expected:
            raise RenewalError(f"the sandbox's agent failed: {text.removeprefix('error ')}")

    def renew(self) -> None:
        """Give the next served process a ``/tmp`` as ``warm_up`` left it, new named pipes and
        the same next pid."""
        try:
            self._channel.sendall(b"renew\n")
        except OSError as exc:
            raise RenewalError(f"the sandbox's agent is gone ({exc})") from None
        self._answer("ok")

    def pipe(self, name: str) -> str:
        """The path, for the arena, of the named pipe ``name`` (:data:`PIPES`) of the served
        process about to start: through the fork server's root, on mount points of the
        sandbox's read-only root and the agent's own file system."""
        return f"/proc/{self.server}/root{EPOCH_MOUNT}/p/{name}"

    def close(self) -> None:
        """End the agent (it ends with the sandbox anyway)."""
        with contextlib.suppress(OSError):
            self._channel.close()
