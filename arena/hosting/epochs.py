"""Fresh processes for each deck: what keeps a bot from remembering a deck's other games.

A tournament plays every deck twice per pair (the seats swapped) and against every opponent, so
a bot that remembered a deck's cards would know its opponent's hand in the deck's next games. A
host therefore serves its bot from processes forked after ``warm_up`` (a *fork server*,
:mod:`arena.hosting.host`), and its :class:`~arena.hosting.hosted.HostHandle` asks for a fresh
one before any deck the serving process has played already (an *epoch* is the life of one served
process: each deck at most once).

Where the bot's control group can be frozen, the forking process is *held*: once it has said
hello it closes every descriptor of its own and stops itself, and it is continued only to fork:
it forks once and stops again, and the referee waits until it has (:func:`wait_stopped`). It is
frozen with the bot's group between requests, so it never runs while its served processes
play. Nothing of the bot can continue it: the sandbox's system-call filter refuses to send
``SIGCONT`` and refuses ``setpgid`` (:mod:`arena.hosting.seccomp`), and the referee checks that
it is still stopped before it lets it fork. (A process stays in its control group, so the fork
server is not held in a frozen group of its own: every fresh process would then have to be moved
out of it, which costs a v1 hierarchy milliseconds per move.) It is checked from outside before
each fork (:func:`check_held`): a single thread, no signal handler, no blocked signal, no open
descriptor, no shared writable memory, no mapping of a file removed since, and the scheduling
and resource limits it had when first held, since any of those could carry what a served
process learned into the next one. Each process it serves gets, from the sandbox's agent
(:mod:`arena.hosting.renewal`), a ``/tmp`` as ``warm_up`` left it, pipes of its own and the
same next pid; the referee ends the served processes itself. Each part of a fresh start must be
done within a short, fixed time (:class:`Watch`): a process that sleeps or computes there
instead is faulted. Elsewhere (no control group, no freezer, no sandbox) the server is
cooperative: a served process ends when asked, which holds for bots that do not rewrite the
host's own code (the arena's own bots, and bots run unsandboxed on purpose).
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable
from dataclasses import dataclass


class EpochError(Exception):
    """The held process keeps something that would outlive a served process."""


def sandbox_pids(pids: Iterable[int]) -> dict[int, int]:
    """Of the processes ``pids`` (a sandbox's control group), those in the sandbox's own PID
    namespace, the deepest below this process's, each with its pid there: what starts the
    sandbox (bubblewrap run by the arena, ``setpriv``, the first bubblewrap's own namespace)
    is left out, as are processes that are gone."""
    found = {pid: _ns_pids(pid) for pid in pids}
    depth = max((len(levels) for levels in found.values()), default=0)
    if depth < 2:
        return {}
    return {pid: levels[-1] for pid, levels in found.items() if len(levels) == depth}


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


#: Seconds of processor a process may use doing its part of a fresh start (a fork server between
#: being continued and stopping again, a served process between being forked and saying it is
#: ready): it needs milliseconds, so more than this is its own doing.
STOP_PROCESSOR = 0.5
#: Seconds a process may sleep (be neither running nor waiting for a core) while doing its part
#: of a fresh start: it has nothing to wait for, so a process that sleeps (in a hook of the bot,
#: say) stalls the fresh start, and is faulted for it.
IDLE_TIME = 1.0
#: Seconds a process may take to do its part however little it slept or ran: on a loaded machine
#: a process can wait for a core for over a second (seen with more processes busy than cores),
#: which is not the bot's doing.
STOP_TIME = 20.0


def _schedstat(pid: int) -> tuple[float, float] | None:
    """Seconds process ``pid`` has run and has waited for a core (``/proc/PID/schedstat``), or
    ``None`` where the kernel does not keep them; raises :class:`OSError` if it is gone."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            ran, waited = f.read().split()[:2]
    except FileNotFoundError:
        if not os.path.exists(f"/proc/{pid}"):
            raise
        return None
    return int(ran) / 1e9, int(waited) / 1e9


class Watch:
    """What process ``pid`` does from now on: the processor it uses and the time it sleeps
    (the time that passes while it neither runs nor waits for a core)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.begun = time.monotonic()
        self._start = _schedstat(pid)
        self._ran = processor_time(pid) if self._start is None else self._start[0]

    def elapsed(self) -> float:
        """Seconds since the watch began."""
        return time.monotonic() - self.begun

    def used(self) -> float:
        """Seconds of processor used since the watch began."""
        now = _schedstat(self.pid)
        return (now[0] if now is not None else processor_time(self.pid)) - self._ran

    def slept(self) -> float:
        """Seconds slept since the watch began (0 where the kernel does not say how long the
        process waited for a core: then only :data:`STOP_TIME` bounds it)."""
        now = _schedstat(self.pid)
        if now is None or self._start is None:
            return 0.0
        return self.elapsed() - (now[0] - self._start[0]) - (now[1] - self._start[1])

    def overdue(self, what: str) -> str | None:
        """Why the process has taken too long to ``what`` (past :data:`STOP_PROCESSOR` of
        processor, :data:`IDLE_TIME` asleep or :data:`STOP_TIME` in all), else ``None``."""
        waited = self.elapsed()
        now = _schedstat(self.pid)  # one read for both
        if now is None or self._start is None:
            used, slept = self.used(), 0.0
        else:
            used = now[0] - self._start[0]
            slept = waited - used - (now[1] - self._start[1])
        if used > STOP_PROCESSOR or slept > IDLE_TIME or waited > STOP_TIME:
            return f"{what} within {waited:.1f} s ({used:.2f} s of processor, {slept:.2f} s asleep)"
        return None


def wait_stopped(pid: int, watch: Watch | None = None) -> None:
    """Wait until process ``pid``, stopping itself, is stopped: raises :class:`EpochError` if
    it takes too long (:meth:`Watch.overdue`, from ``watch``, default now), :class:`OSError`
    if it is gone."""
    watch = watch or Watch(pid)
    while not stopped(pid):
        waited = watch.elapsed()
        late = watch.overdue("did not stop") if waited > 0.01 else None  # milliseconds, usually
        if late is not None:
            raise EpochError(f"its fork server {late}")
        _pause(waited)


class FreshStart:
    """A fresh start as it goes (see :class:`Watch`): the fork server ``server``, continued,
    until it has forked and stopped again, then the process it forked, until it says it is
    ready. ``served`` is that process once the server has stopped (``None`` before)."""

    def __init__(self, server: int) -> None:
        self.server = server
        self._before = set(children(server))  # what its warm_up started, until the first end
        self._watch = Watch(server)
        self.served: int | None = None

    def find(self) -> int | None:
        """The process the server forked, once it has stopped (raises :class:`EpochError` if it
        forked more or fewer than one, :class:`OSError` if it is gone)."""
        if self.served is None and stopped(self.server):
            new = [pid for pid in children(self.server) if pid not in self._before]
            if len(new) != 1:
                raise EpochError(f"its fork server started {len(new)} processes, not one")
            self.served = new[0]
            self._watch = Watch(new[0])
        return self.served

    def overdue(self, what: str) -> str | None:
        """Why the fresh start has taken too long (:meth:`Watch.overdue` of whichever process
        is doing its part; ``what``: what the served process has not done yet)."""
        if self.find() is None:
            late = self._watch.overdue("did not stop")
            return None if late is None else f"its fork server {late}"
        late = self._watch.overdue(what)
        return None if late is None else f"its fresh process {late}"


def children(pid: int) -> list[int]:
    """The children of process ``pid`` (of its main thread); raises :class:`OSError` if it is
    gone."""
    with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
        return [int(x) for x in f.read().split()]


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


#: Shared mappings that are memory, not a read-only file: a channel between processes.
_SHARED_MEMORY = ("/dev/zero", "/memfd:", "/SYSV", "[anon_shmem]", "/dev/shm/")
#: Fields of ``/proc/PID/stat`` (after the command's closing parenthesis, counted from 0) that a
#: fork server's children inherit and another process could change: priority, nice value,
#: real-time priority and scheduling policy.
_INHERITED_STAT = (15, 16, 37, 38)


def attributes(pid: int) -> tuple[str, ...]:
    """What every process forked from process ``pid`` inherits that is not its memory: its
    scheduling (priority, nice value, policy) and resource limits (``/proc/PID/limits``)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rpartition(b")")[2].split()
    with open(f"/proc/{pid}/limits", encoding="ascii", errors="replace") as f:
        limits = f.read()
    return (*(fields[i].decode() for i in _INHERITED_STAT), limits)


def _places(pid: int) -> tuple[tuple[int, int], ...]:
    """The working and root directories of process ``pid`` (device and inode of each)."""
    found = (os.stat(f"/proc/{pid}/{which}") for which in ("cwd", "root"))
    return tuple((info.st_dev, info.st_ino) for info in found)


@dataclass(frozen=True)
class Held:
    """What a held fork server had once it stopped after its ``warm_up``, and must keep
    (:func:`check_held`): its mappings (``/proc/PID/maps``, byte for byte), its working and
    root directories, and what its children inherit (:func:`attributes`)."""

    maps: bytes
    places: tuple[tuple[int, int], ...]
    inherited: tuple[str, ...]


def _check_kept(pid: int) -> None:
    """Raise :class:`EpochError` if process ``pid`` has another thread, a signal handler or a
    blocked signal, or an open descriptor."""
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
        raise EpochError(f"an open descriptor {name} ({target}) after warm_up")


def hold_state(pid: int, scratch: str = "/tmp") -> Held:
    """What the held process ``pid`` has now; raises :class:`EpochError` if it could already
    carry one served process's memory into the next: another thread, a signal handler or a
    blocked signal, an open descriptor (:func:`check_held`), a shared mapping of memory or of a
    file in ``scratch``, or a mapping of a file removed since it was mapped."""
    _check_kept(pid)
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
            raise EpochError(f"a mapping of a file removed after warm_up ({path})")
    return Held(maps, _places(pid), attributes(pid))


def check_held(pid: int, held: Held) -> None:
    """Raise :class:`EpochError` if the held process ``pid`` keeps what could carry memory from
    one served process into the next: another thread, a signal handler or blocked signal, any
    open descriptor (an open file description is shared with every process forked from it: its
    offset and flags carry whatever a served process writes there), or anything else than what
    it had when first held (``held``): a mapping (of a file a served process wrote, say), a
    working directory (in a served process's ``/tmp``, which it would keep for the next), its
    priority, scheduling or resource limits. It runs nothing but its fork between two checks,
    so any change is code of the bot's in the arena's fork path."""
    _check_kept(pid)
    if attributes(pid) != held.inherited:
        raise EpochError("its priority, scheduling or resource limits changed after warm_up")
    if _places(pid) != held.places:
        raise EpochError("its working or root directory changed after warm_up")
    with open(f"/proc/{pid}/maps", "rb") as f:
        maps = f.read()
    if maps != held.maps:
        before = set(held.maps.split(b"\n"))
        new = next((x for x in maps.split(b"\n") if x not in before), b"")
        shown = new.decode("utf-8", "replace").split(None, 5)[-1] if new.strip() else "one fewer"
        raise EpochError(f"its memory mappings changed after warm_up ({shown})")
