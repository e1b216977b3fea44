"""Fresh processes for each deck: what keeps a bot from remembering a deck's other games.

A tournament plays every deck twice per pair (the seats swapped) and against every opponent, so
a bot that remembered a deck's cards would know its opponent's hand in the deck's next games. A
host therefore serves its bot from processes forked after ``warm_up`` (a *fork server*,
:mod:`arena.hosting.host`), and its :class:`~arena.hosting.hosted.HostHandle` asks for a fresh
one before any deck the serving process has played already (an *epoch* is the life of one served
process: each deck at most once).

Where the bot's control group can be frozen, the forking process is *held*: stopped whenever it
is not forking, so it never runs while its served processes play, and frozen with the bot's
group between requests. The referee stops it (``SIGSTOP``, :func:`stop`) once it has said hello;
after each fork it stops itself before it could read the pipe again, and the referee waits until
it has (:func:`wait_stopped`) before its new process is asked anything (were the referee to stop
it too, it could stop twice and swallow the continue of the next fork). Nothing of the bot can
continue it: the sandbox's system-call filter refuses to send ``SIGCONT`` and refuses
``setpgid`` (:mod:`arena.hosting.seccomp`), and the referee checks that it is still stopped
before it lets it fork. (A process stays in its control group, so the fork server is not held
in a frozen group of its own: every fresh process would then have to be moved out of it, which
costs a v1 hierarchy milliseconds per move.) It is checked from outside before each fork (this
module): a single thread, no signal handler, no blocked signal, no shared writable memory, no
mapping of a file removed since, and no open file or pipe but the protocol's, since any of those
could carry what a served process learned into the next one. The referee ends the served
processes itself, and puts back the bot's ``/tmp`` as it was after ``warm_up``
(:class:`ScratchSnapshot`). Elsewhere (no control group, no freezer, no
sandbox) the server is cooperative: a served process ends when asked, which holds for bots that
do not rewrite the host's own code (the arena's own bots, and bots run unsandboxed on purpose).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path


class EpochError(Exception):
    """The held process keeps something that would outlive a served process."""


def sandbox_pid(pid: int) -> int | None:
    """The pid of process ``pid`` in a PID namespace below this process's (a sandbox's), or
    ``None`` when it is in this process's own (a process that starts the sandbox: bubblewrap
    run by the arena, ``setpriv``) or gone."""
    found = _ns_pids(pid)
    return found[-1] if len(found) > 1 else None


def _ns_pids(pid: int) -> list[int]:
    """Process ``pid``'s pids from this process's PID namespace down to its own (``NSpid``)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        return []
    return []


def _state(pid: int) -> bytes:
    """Process ``pid``'s state letter (``/proc/PID/stat``); raises :class:`OSError` if it is
    gone."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rpartition(b")")[2].split(None, 1)[0]


def _pause(waited: float) -> None:
    """Sleep between two looks at a process: briefly at first, then a millisecond."""
    time.sleep(0.0001 if waited < 0.005 else 0.001)


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (by a stop signal); raises :class:`OSError` if it is
    gone."""
    return _state(pid) in (b"T", b"t")


def processor_time(pid: int) -> float:
    """Seconds of processor process ``pid`` has used (the scheduler's count, to the nanosecond,
    where the kernel keeps it; else to the clock tick); raises :class:`OSError` if it is gone."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            return int(f.read().split(None, 1)[0]) / 1e9
    except FileNotFoundError:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: Seconds of processor a fork server may use between being told to stop (sent ``SIGSTOP``, or
#: having forked) and being stopped: it stops the first time it runs, so more than this is its own
#: doing.
STOP_PROCESSOR = 0.5
#: Seconds a fork server may take to stop however little processor it used: on a loaded machine a
#: process that has to run to stop can wait for a core for over a second (seen with more
#: processes busy than cores), which is not the bot's doing.
STOP_TIME = 20.0


def stop(pid: int) -> None:
    """Stop process ``pid`` (``SIGSTOP``, which it can neither catch nor ignore) and wait until
    it is stopped (see :func:`wait_stopped`)."""
    ran = processor_time(pid)
    os.kill(pid, signal.SIGSTOP)
    wait_stopped(pid, ran)


def wait_stopped(pid: int, ran: float | None = None) -> None:
    """Wait until process ``pid``, sent ``SIGSTOP`` or stopping itself, is stopped: raises
    :class:`EpochError` if it uses :data:`STOP_PROCESSOR` seconds of processor (beyond ``ran``,
    the processor it had used when told to stop; default: now) or :data:`STOP_TIME` seconds
    first, :class:`OSError` if it is gone."""
    if ran is None:
        ran = processor_time(pid)
    start = time.monotonic()
    while not stopped(pid):
        waited = time.monotonic() - start
        used = processor_time(pid) - ran
        if used > STOP_PROCESSOR or waited > STOP_TIME:
            raise EpochError(
                f"its fork server did not stop within {waited:.1f} s"
                f" ({used:.2f} s of processor after being told to)"
            )
        _pause(waited)


def wait_exited(pids: set[int], limit: float) -> None:
    """Wait until every process of ``pids`` has exited (gone, or a zombie); raises
    :class:`EpochError` if one has not within ``limit`` seconds."""
    deadline = time.monotonic() + limit
    for pid in pids:
        if not _wait_exit(pid, deadline):
            waited = time.monotonic() - deadline + limit
            raise EpochError(f"process {pid} still runs {waited:.1f} s after being killed")


def _wait_exit(pid: int, deadline: float) -> bool:
    """Whether process ``pid`` exited by ``deadline`` (``time.monotonic()``): woken by a pidfd
    when it exits, or, where there are none, by looking at ``/proc`` between short sleeps."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # already reaped
    except OSError:  # no pidfds here
        start = time.monotonic()
        while True:
            try:
                if _state(pid) in (b"Z", b"X"):
                    return True
            except OSError:
                return True
            if time.monotonic() > deadline:
                return False
            _pause(time.monotonic() - start)
    try:
        ready = select.poll()
        ready.register(handle, select.POLLIN)
        return bool(ready.poll(max(0.0, deadline - time.monotonic()) * 1000.0))
    finally:
        os.close(handle)


def _status(pid: int) -> dict[str, str]:
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
        for line in f:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return fields


#: Descriptors the held process may keep besides the protocol's pipes.
_HARMLESS = {"/dev/null", "/dev/urandom"}
#: Shared mappings that are memory, not a read-only file: a channel between processes.
_SHARED_MEMORY = ("/dev/zero", "/memfd:", "/SYSV", "[anon_shmem]", "/dev/shm/")


def check_held(pid: int, pipes: set[int], scratch: str = "/tmp") -> None:
    """Raise :class:`EpochError` if the held process ``pid`` keeps what could carry memory from
    one served process into the next: another thread, a signal handler or blocked signal, an open
    descriptor other than the protocol's ``pipes`` (their inode numbers), ``/dev/null`` and
    ``/dev/urandom`` and read-only files outside ``scratch``, a shared mapping of memory or of
    a file in ``scratch``, or any mapping of a file removed since (private or not)."""
    status = _status(pid)
    if status.get("Threads", "1") != "1":
        raise EpochError(f"{status['Threads']} threads after warm_up (one may run, not more)")
    for name in ("SigCgt", "SigBlk"):
        if int(status.get(name, "0"), 16):
            what = "signal handlers" if name == "SigCgt" else "blocked signals"
            raise EpochError(f"{what} after warm_up ({name} {status[name]})")
    fd_dir = f"/proc/{pid}/fd"
    for name in os.listdir(fd_dir):
        try:
            target = os.readlink(f"{fd_dir}/{name}")
        except OSError:
            continue
        if target.startswith("pipe:["):
            if int(target[6:-1]) in pipes:
                continue
        elif target in _HARMLESS or (
            target.startswith("/") and not target.startswith(scratch) and "(deleted)" not in target
        ):
            continue
        raise EpochError(f"an open descriptor {name} ({target}) after warm_up")
    with open(f"/proc/{pid}/maps", "rb") as f:
        maps = f.read()
    for line in maps.split(b"\n"):
        perms = line.find(b" ") + 1  # a line: range, permissions, offset, device, inode, path
        shared = line[perms + 3 : perms + 4] == b"s"
        deleted = line.endswith(b"(deleted)")
        if not (shared or deleted):
            continue
        fields = line.split(None, 5)
        path = fields[5].decode("utf-8", "replace") if len(fields) > 5 else "[anon_shmem]"
        if shared and (path.startswith((*_SHARED_MEMORY, scratch)) or deleted):
            raise EpochError(f"shared memory after warm_up ({path})")
        if deleted:
            # a private mapping still shows what is written into its file until its pages are
            # copied: once the file was changed (and so removed, see ScratchSnapshot), a channel
            raise EpochError(f"a mapping of a file removed or changed after warm_up ({path})")


@dataclass
class ScratchSnapshot:
    """What a bot's ``/tmp`` held after ``warm_up`` (seen from outside at ``root``, for example
    ``/proc/PID/root/tmp``), to put it back after each epoch: whatever was added, replaced or
    changed since is removed (a file changed in place is removed, not restored). Symbolic links
    cannot change in place, so only directories and files are looked at again: cheap, however
    large the trusted kernel mirror."""

    root: Path
    dirs: dict[str, int] = field(default_factory=dict)  # relative path -> ctime_ns
    files: dict[str, tuple[int, int]] = field(default_factory=dict)  # -> (inode, ctime_ns)
    entries: dict[str, set[str]] = field(default_factory=dict)  # dir -> names
    links: dict[str, str] = field(default_factory=dict)  # relative path -> target

    @classmethod
    def take(cls, root: Path) -> ScratchSnapshot:
        """Record the tree at ``root``."""
        snap = cls(root)
        for top, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(top, root)
            snap.dirs[rel] = os.lstat(top).st_ctime_ns
            snap.entries[rel] = set(dirnames) | set(filenames)
            for name in filenames:
                info = os.lstat(os.path.join(top, name))
                if stat.S_ISLNK(info.st_mode):
                    snap.links[os.path.normpath(os.path.join(rel, name))] = os.readlink(
                        os.path.join(top, name)
                    )
                elif stat.S_ISREG(info.st_mode):
                    snap.files[os.path.normpath(os.path.join(rel, name))] = (
                        info.st_ino,
                        info.st_ctime_ns,
                    )
        return snap

    def restore(self) -> int:
        """Remove what changed since :meth:`take`; returns how many entries were removed."""
        removed = 0
        root = f"{self.root}/"
        for rel, (inode, ctime) in list(self.files.items()):
            try:
                info = os.lstat(root + rel)
            except FileNotFoundError:
                del self.files[rel]
                continue
            if info.st_ino != inode or info.st_ctime_ns != ctime:
                _remove(self.root / rel)
                del self.files[rel]
                removed += 1
        for rel, ctime in list(self.dirs.items()):
            try:
                info = os.lstat(root + rel)
            except FileNotFoundError:
                del self.dirs[rel]
                continue
            if info.st_ctime_ns == ctime:
                continue
            path = self.root / rel
            kept = self.entries.get(rel, set())
            with contextlib.suppress(OSError):
                for name in os.listdir(path):
                    key = os.path.normpath(os.path.join(rel, name))
                    if name not in kept or (
                        key in self.links and not _same_link(path / name, self.links[key])
                    ):
                        _remove(path / name)
                        removed += 1
            with contextlib.suppress(OSError):
                self.dirs[rel] = os.lstat(path).st_ctime_ns
        return removed


def _same_link(path: Path, target: str) -> bool:
    try:
        return os.readlink(path) == target
    except OSError:
        return False


def _remove(path: Path) -> None:
    def allow(function: object, where: str, _: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(where), 0o700)
            os.chmod(where, 0o700)
        with contextlib.suppress(OSError):
            if os.path.isdir(where) and not os.path.islink(where):
                os.rmdir(where)
            else:
                os.unlink(where)

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, onerror=allow)
    else:
        with contextlib.suppress(OSError):
            path.unlink()
