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

The agent is a small Python program run as the arena's user (root, where the sandbox runs as a
uid of its own) and never in the bot's control group. It enters the namespaces of the fork
server's process, so the paths it touches (``/tmp``, :data:`EPOCH_MOUNT`) are mount points on
the sandbox's read-only root, which nothing of the bot can replace; it reads nothing the bot
wrote. In the sandbox it is one process more, which the bot can neither signal nor trace.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time

from arena.errors import ArenaError

#: Where each served process's own file system is mounted in the sandbox (an empty directory
#: that bubblewrap makes on the sandbox's read-only root); the named pipes are in its ``p``.
EPOCH_MOUNT = "/run/arena"
#: The named pipes of the protocol in a served process's file system.
PIPES = ("in", "out", "log")
#: Seconds the agent may take to attach or to renew (milliseconds, normally).
AGENT_TIME = 10.0

#: The agent. Its first line of input is ``PID UID SCRATCH_MB``: the fork server's pid (in the
#: arena's PID namespace), the sandbox's kernel uid and the size of a served process's layer.
#: It answers ``ready`` once attached (the fork server's ``/tmp`` made read-only), then ``ok``
#: to each ``renew`` line (or ``error TEXT``), and exits at the end of its input.
AGENT = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def call(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_MOVE, MS_REC, MNT_DETACH = 4096, 8192, 16384, 2
line = sys.stdin.readline().split()
if not line:  # its host ended before its fork server was held
    sys.exit(0)
server, uid, scratch = int(line[0]), int(line[1]), int(line[2])
user = os.geteuid() != 0  # not root: the arena owns the sandbox's user namespace; enter it
names = (["user"] if user else []) + ["pid", "mnt"]
spaces = [os.open(f"/proc/{server}/ns/{name}", os.O_RDONLY) for name in names]
mode = os.stat(f"/proc/{server}/root/tmp").st_mode & 0o7777
for fd in spaces[:-1]:
    call(libc.setns(fd, 0), "setns")
if os.fork():  # the child is a member of the sandbox's PID namespace
    os._exit(0)
# the sandbox's /proc is read-only: the counter (of the writer's own PID namespace) is written
# through the arena's, opened before entering the sandbox's mount namespace
counter = os.open("/proc/sys/kernel/ns_last_pid", os.O_RDWR)
last = os.pread(counter, 32, 0).strip()
call(libc.setns(spaces[-1], 0), "setns")
for fd in spaces:
    os.close(fd)
os.chdir("/")
out = sys.stdout
# what is mounted inside /tmp (packages installed below it, shown at their own paths): shown
# again inside each layer, whose overlay of /tmp would hide them
inside = []
with open("/proc/self/mountinfo", "rb") as f:
    for row in f:
        point = row.split()[4].decode()
        if point.startswith("/tmp/") and not any(point.startswith(p + "/") for p in inside):
            inside = [p for p in inside if not p.startswith(point + "/")] + [point]
try:
    call(libc.mount(None, b"/tmp", None, MS_REMOUNT | MS_BIND | MS_RDONLY, None), "read-only /tmp")
except OSError as exc:
    print("error", exc, file=out, flush=True)
    sys.exit(1)
print("ready", file=out, flush=True)
owner = -1 if user else uid  # in the user namespace, the agent's files are the bot's uid's
epoch = b"/run/arena"
fresh = False
for command in sys.stdin:
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
        print("ok", file=out, flush=True)
    except OSError as exc:
        print("error", exc, file=out, flush=True)
"""


class RenewalError(ArenaError):
    """The agent could not attach to a sandbox or renew what a served process gets: the
    arena's own failure (a kernel without overlays, say), never the bot's."""


class Renewal:
    """The agent of one held fork server: started with its host (so that it starts while the
    host does), :meth:`attach` once the server is held, :meth:`renew` before each fresh
    process, :meth:`pipe` for the referee's end of that process's named pipes, :meth:`close`
    when the host ends."""

    def __init__(self) -> None:
        self.server = 0
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", AGENT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._buffer = b""

    def attach(self, server: int, uid: int, scratch_mb: int) -> None:
        """Enter the namespaces of the held fork server ``server`` (its pid here) of a sandbox
        whose processes run as kernel uid ``uid``, whose layers hold ``scratch_mb`` MiB, and
        make its ``/tmp`` read-only."""
        self.server = server
        self._say(f"{server} {uid} {scratch_mb}")
        self._answer("ready")

    def _say(self, line: str) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except OSError as exc:
            raise RenewalError(f"the sandbox's agent is gone ({exc})") from None

    def _answer(self, expected: str) -> None:
        """Wait (at most :data:`AGENT_TIME`) for the agent's next line, which must be
        ``expected``."""
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + AGENT_TIME
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RenewalError(f"the sandbox's agent did not answer within {AGENT_TIME:g} s")
            data = os.read(fd, 4096)
            if not data:
                errors = self._process.stderr.read() if self._process.stderr else b""
                said = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no reason"]
                raise RenewalError(f"the sandbox's agent ended: {said[0]}")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        text = line.decode(errors="replace")
        if text != expected:
            raise RenewalError(f"the sandbox's agent failed: {text.removeprefix('error ')}")

    def renew(self) -> None:
        """Give the next served process a ``/tmp`` as ``warm_up`` left it, new named pipes and
        the same next pid."""
        self._say("renew")
        self._answer("ok")

    def pipe(self, name: str) -> str:
        """The path, for the arena, of the named pipe ``name`` (:data:`PIPES`) of the served
        process about to start: through the fork server's root, on mount points of the
        sandbox's read-only root and the agent's own file system."""
        return f"/proc/{self.server}/root{EPOCH_MOUNT}/p/{name}"

    def close(self) -> None:
        """End the agent (it ends with the sandbox anyway)."""
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=AGENT_TIME)
