"""Kernel limits for a bot as a whole: one control group per bot host.

A host's group holds every process the bot starts, and the kernel enforces its limits on all of
them together: memory (its processes and the pages of its private ``/tmp``, which the kernel
charges to the group that writes them), the number of processes and threads, and CPU time (one
core's worth). Both kinds of hierarchy are supported: the unified one (cgroup v2, where the
arena's own group can delegate the ``memory``, ``pids`` and ``cpu`` controllers) and the v1
controllers mounted one per hierarchy. :func:`probe` says which works here, or why none does;
then the sandbox falls back to what a process can do for itself (see :mod:`arena.hosting.sandbox`).

Groups are made below the arena process's own group (``.../arena-PID/host-N``), so the limits
the machine already puts on the arena still hold, and removed when their host is gone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

#: The v1 controllers the arena needs.
V1_CONTROLLERS = ("memory", "pids", "cpu")
#: The v1 controller the arena uses where it is mounted: it stops a bot's processes between its
#: moves (cgroup v2 has this in every group: ``cgroup.freeze``).
V1_FREEZER = "freezer"


@dataclass(frozen=True)
class FreezerFile:
    """Where a group's freezer is set, and the words that freeze and thaw it."""

    name: str
    frozen: bytes
    thawed: bytes


#: The freezer's file per hierarchy version (v1: the freezer controller; v2: every group).
FREEZER_FILES = {
    1: FreezerFile("freezer.state", b"FROZEN", b"THAWED"),
    2: FreezerFile("cgroup.freeze", b"1", b"0"),
}


def _thaw_dir(path: Path) -> None:
    """Thaw the group at ``path`` whichever hierarchy it is in (nothing if it has no freezer)."""
    for file in FREEZER_FILES.values():
        with contextlib.suppress(OSError):
            (path / file.name).write_bytes(file.thawed)


_serial = itertools.count()


class CgroupError(OSError):
    """A control group could not be made or joined."""


@dataclass(frozen=True)
class Hierarchy:
    """Where the arena may make groups: ``version`` 1 or 2, and for each controller (v1) or for
    all of them (v2, key ``""``) the directory of this process's group."""

    version: int
    parents: dict[str, Path]

    @property
    def freezes(self) -> bool:
        """Whether a group can be frozen here (v2 always; v1 where the freezer is mounted)."""
        return self.version == 2 or V1_FREEZER in self.parents

    def describe(self) -> str:
        """One line: the kind of hierarchy and where groups go."""
        where = ", ".join(str(p) for p in dict.fromkeys(self.parents.values()))
        return f"cgroup v{self.version} ({where})"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fstype, super options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """This process's group per v1 controller, and ``""`` for the unified hierarchy."""
    groups: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                groups[name] = path
    return groups


def _inside(mount_root: str, mount_point: str, group: str) -> Path | None:
    if not group.startswith(mount_root):
        return None
    rel = group[len(mount_root) :].lstrip("/")
    return Path(mount_point) / rel


def _writable_dir(path: Path) -> bool:
    probe = path / f"arena-probe-{os.getpid()}-{next(_serial)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def _v2() -> Hierarchy | str:
    groups = _own_groups()
    for root, point, fstype, _ in _mounts():
        if fstype != "cgroup2" or "" not in groups:
            continue
        parent = _inside(root, point, groups[""])
        if parent is None or not parent.is_dir():
            continue
        try:
            available = set((parent / "cgroup.controllers").read_text().split())
        except OSError:
            continue
        missing = {"memory", "pids", "cpu"} - available
        if missing:
            return f"cgroup v2 at {point} lacks the {', '.join(sorted(missing))} controller"
        if not _writable_dir(parent):
            return f"cgroup v2 group {parent} is not writable"
        return Hierarchy(2, {"": parent})
    return "no cgroup v2 hierarchy"


def _v1() -> Hierarchy | str:
    groups = _own_groups()
    parents: dict[str, Path] = {}
    for root, point, fstype, options in _mounts():
        if fstype != "cgroup":
            continue
        for name in (*V1_CONTROLLERS, V1_FREEZER):
            if name in options and name in groups and name not in parents:
                parent = _inside(root, point, groups[name])
                if parent is not None and parent.is_dir():
                    parents[name] = parent
    missing = [n for n in V1_CONTROLLERS if n not in parents]
    if missing:
        return f"cgroup v1 lacks the {', '.join(missing)} controller"
    if V1_FREEZER in parents and not _writable_dir(parents[V1_FREEZER]):
        del parents[V1_FREEZER]
    for parent in dict.fromkeys(parents.values()):
        if not _writable_dir(parent):
            return f"cgroup v1 group {parent} is not writable"
    return Hierarchy(1, parents)


@lru_cache(maxsize=1)
def probe() -> Hierarchy | str:
    """The hierarchy where this process may make groups with memory, process and CPU limits,
    or a line saying why there is none."""
    if not os.path.isdir("/sys/fs/cgroup"):
        return "no /sys/fs/cgroup"
    reasons = []
    for attempt in (_v2, _v1):
        try:
            found = attempt()
        except OSError as exc:
            found = f"{attempt.__name__}: {exc}"
        if isinstance(found, Hierarchy):
            try:
                BotGroup(found, 64 << 20, 8, 1.0).close()
            except CgroupError as exc:
                found = f"cgroup v{found.version}: {exc}"
            else:
                return found
        reasons.append(found)
    return "; ".join(reasons)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot write {value!r} to {path}: {exc.strerror}") from None


def _enable_v2_controllers(parent: Path) -> Path:
    """The directory for this arena process's groups in the unified hierarchy, with the
    controllers delegated to it (``arena-PID`` holds no process, so it may)."""
    base = parent / f"arena-{os.getpid()}"
    base.mkdir(exist_ok=True)
    for level in (parent, base):
        enabled = set((level / "cgroup.subtree_control").read_text().split())
        wanted = {"memory", "pids", "cpu"} - enabled
        if wanted:
            _write(level / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted)))
    return base


class BotGroup:
    """The control group of one bot host, with its limits set; :meth:`join` puts a process in
    it (its children follow), :meth:`hit` says which limit the kernel enforced, :meth:`close`
    kills what is left in it and removes it."""

    def __init__(
        self, hierarchy: Hierarchy, memory_bytes: int, processes: int, cores: float
    ) -> None:
        self.hierarchy = hierarchy
        name = f"host-{next(_serial)}"
        self.dirs: dict[str, Path] = {}
        try:
            if hierarchy.version == 2:
                path = _enable_v2_controllers(hierarchy.parents[""]) / name
                path.mkdir()
                self.dirs = {"": path}
                _write(path / "memory.max", str(memory_bytes) if memory_bytes else "max")
                with contextlib.suppress(FileNotFoundError):
                    _write(path / "memory.swap.max", "0")
                _write(path / "pids.max", str(processes))
                _write(path / "cpu.max", f"{int(cores * 100_000)} 100000")
            else:
                for controller, parent in hierarchy.parents.items():
                    path = parent / f"arena-{os.getpid()}" / name
                    path.mkdir(parents=True, exist_ok=True)
                    self.dirs[controller] = path
                memory = self.dirs["memory"]
                if memory_bytes:
                    _write(memory / "memory.limit_in_bytes", str(memory_bytes))
                    with contextlib.suppress(FileNotFoundError, CgroupError):
                        _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(self.dirs["pids"] / "pids.max", str(processes))
                _write(self.dirs["cpu"] / "cpu.cfs_period_us", "100000")
                _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(int(cores * 100_000)))
        except (OSError, KeyError) as exc:
            self.close()
            raise CgroupError(getattr(exc, "errno", None) or 0, f"cgroup: {exc}") from None
        self._freezer: int | None = None
        self._bot_dir: Path | None = None
        self._frozen = False
        state = self._freezer_file()
        if state is not None:
            try:
                self._freezer = os.open(state, os.O_WRONLY | os.O_CLOEXEC)
            except OSError as exc:
                self.close()
                raise CgroupError(exc.errno or 0, f"cgroup: cannot open {state}") from None
        self._events: dict[str, tuple[int, bytes]] = {}  # what -> (open file, counter name)
        for what, path, key in self._event_files():
            with contextlib.suppress(OSError):
                self._events[what] = (os.open(path, os.O_RDONLY | os.O_CLOEXEC), key)
        self._baseline = self._counters()
        try:
            self._unchanged = self._raw()  # the files' text while no limit was hit
        except OSError:
            self._unchanged = []

    def _freezer_dir(self) -> Path | None:
        """The group's directory in the hierarchy that freezes (``None``: none does)."""
        return self.dirs.get("" if self.hierarchy.version == 2 else V1_FREEZER)

    def _freezer_file(self) -> Path | None:
        where = self._freezer_dir()
        return None if where is None else where / FREEZER_FILES[self.hierarchy.version].name

    @property
    def freezes(self) -> bool:
        """Whether :meth:`freeze` stops the group's processes (else it does nothing)."""
        return self._freezer is not None

    def narrow_freezer(self, pids: Iterable[int]) -> None:
        """Freeze only ``pids`` (the bot's own processes) from now on, and the processes they
        start: they move to a group ``bot`` inside this one, which :meth:`freeze` then freezes,
        leaving bubblewrap's own processes, which never compute, out of each freeze and thaw
        (half the processes to stop and wake at every move)."""
        where = self._freezer_dir()
        if self._freezer is None or where is None:
            return
        inner = where / "bot"
        try:
            inner.mkdir(exist_ok=True)
            name = FREEZER_FILES[self.hierarchy.version].name
            fd = os.open(inner / name, os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise CgroupError(exc.errno or 0, f"cgroup: cannot make {inner}: {exc}") from None
        for pid in pids:
            _write(inner / "cgroup.procs", str(pid))
        os.close(self._freezer)
        self._freezer = fd
        self._bot_dir = inner

    def freeze(self) -> None:
        """Stop every process of the group (they get no CPU until :meth:`thaw`): one write to
        an open file, a few microseconds."""
        if self._freezer is not None and not self._frozen:
            os.write(self._freezer, FREEZER_FILES[self.hierarchy.version].frozen)
            self._frozen = True

    def thaw(self) -> None:
        """Let the group's processes run again."""
        if self._freezer is not None and self._frozen:
            os.write(self._freezer, FREEZER_FILES[self.hierarchy.version].thawed)
            self._frozen = False

    def _event_files(self) -> list[tuple[str, Path, bytes]]:
        """The files that count how often each limit was hit, and the counter's name."""
        if self.hierarchy.version == 2:
            path = self.dirs[""]
            return [
                ("memory", path / "memory.events", b"oom_kill"),
                ("processes", path / "pids.events", b"max"),
            ]
        return [
            ("memory", self.dirs["memory"] / "memory.oom_control", b"oom_kill"),
            ("processes", self.dirs["pids"] / "pids.events", b"max"),
        ]

    def _files(self) -> Iterator[Path]:
        yield from dict.fromkeys(self.dirs.values())

    def join(self, pid: int) -> None:
        """Move process ``pid`` (and so every child it starts later) into the group."""
        for path in self._files():
            _write(path / "cgroup.procs", str(pid))

    def _counters(self) -> dict[str, int]:
        """How often each limit was hit so far (read from the open files: a few microseconds,
        cheap enough for every move)."""
        counts = {}
        for what, (fd, key) in self._events.items():
            counts[what] = _field(fd, key)
        return counts

    def _raw(self) -> list[bytes]:
        return [os.pread(fd, 4096, 0) for fd, _ in self._events.values()]

    def hit(self) -> str | None:
        """The limit the kernel enforced on this group since it was made (``"memory"`` when it
        killed a process for memory, ``"processes"`` when it refused a new one), or ``None``.
        Called after every move: the files are only parsed when their text has changed."""
        try:
            raw = self._raw()
        except OSError:
            raw = []
        if raw and raw == self._unchanged:
            return None
        now = self._counters()
        for what, count in now.items():
            if count > self._baseline.get(what, 0):
                return what
        return None

    def memory_bytes(self) -> int | None:
        """The memory the group's processes and their scratch pages use now."""
        name = "memory.current" if self.hierarchy.version == 2 else "memory.usage_in_bytes"
        path = self.dirs.get("" if self.hierarchy.version == 2 else "memory")
        try:
            return int((path / name).read_text()) if path else None
        except (OSError, ValueError):
            return None

    def _thaw_quietly(self) -> None:
        if getattr(self, "_freezer", None) is not None:
            self._frozen = True
            with contextlib.suppress(OSError):
                self.thaw()
            for path in self._files():
                _thaw_dir(path / "bot")

    def set_cpu_weight(self, low: bool) -> None:
        """Give the group the least CPU weight (``low``: its processes run when the core is
        otherwise idle) or the usual one."""
        if self.hierarchy.version == 2:
            _write(self.dirs[""] / "cpu.weight", "1" if low else "100")
        else:
            _write(self.dirs["cpu"] / "cpu.shares", "2" if low else "1024")

    def frozen_pids(self) -> list[int]:
        """The processes :meth:`freeze` stops (after :meth:`narrow_freezer`, the bot's own):
        one file read, for the referee's every fresh start."""
        where = self._bot_dir or self._freezer_dir()
        if where is None:
            return self.pids()
        try:
            return [int(x) for x in (where / "cgroup.procs").read_bytes().split()]
        except OSError:
            return []

    def pids(self) -> list[int]:
        """The processes in the group now (with those of its ``bot`` group)."""
        found: set[int] = set()
        for path in self._files():
            for where in (path, path / "bot"):
                with contextlib.suppress(OSError):
                    found.update(int(x) for x in (where / "cgroup.procs").read_text().split())
        return sorted(found)

    def close(self) -> None:
        """Kill every process left in the group and remove it (a frozen process dies only once
        thawed, so the group is thawed after the kill)."""
        _kill_until_empty(self.pids, self._thaw_quietly)
        freezer = getattr(self, "_freezer", None)
        if freezer is not None:
            with contextlib.suppress(OSError):
                os.close(freezer)
            self._freezer = None
        for fd, _ in getattr(self, "_events", {}).values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._events = {}
        for path in self._files():
            with contextlib.suppress(OSError):
                (path / "bot").rmdir()
            with contextlib.suppress(OSError):
                path.rmdir()
        self.dirs = {}


def _field(fd: int, key: bytes) -> int:
    """The value of counter ``key`` in the flat-keyed file open as ``fd``."""
    try:
        for line in os.pread(fd, 4096, 0).splitlines():
            name, _, value = line.partition(b" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def sweep(pids: Iterable[int] | None = None) -> int:
    """Remove the groups of arena processes that are gone (or of ``pids``): kill what is left
    in each ``arena-PID/host-N`` group, then remove it and its ``arena-PID`` directory. A worker
    killed outright (Ctrl-C, ``kill -9``) cannot remove its hosts' groups itself; the next
    sandbox chosen, or its coordinator, does. Returns how many groups were removed."""
    found = probe()
    if not isinstance(found, Hierarchy):
        return 0
    wanted = set(pids) if pids is not None else None
    removed = 0
    # the freezer's groups first: a frozen process dies only once thawed, so the other
    # hierarchies then find their processes gone instead of waiting for them
    first = [found.parents[V1_FREEZER]] if V1_FREEZER in found.parents else []
    for parent in dict.fromkeys([*first, *found.parents.values()]):
        try:
            owners = [p for p in parent.iterdir() if p.name.startswith("arena-")]
        except OSError:
            continue
        for owner in owners:
            try:
                pid = int(owner.name.split("-", 1)[1])
            except ValueError:
                continue
            if wanted is not None and pid not in wanted:
                continue
            if wanted is None and os.path.exists(f"/proc/{pid}"):
                continue
            try:  # another process's sweep may remove it first
                groups = [g for g in owner.iterdir() if g.is_dir()]
            except OSError:
                continue
            for group in groups:
                if (group / "bot").is_dir():
                    _empty_and_remove(group / "bot")
                _empty_and_remove(group)
                removed += 1
            with contextlib.suppress(OSError):
                owner.rmdir()
    return removed


def _empty_and_remove(group: Path) -> None:
    def members() -> list[int]:
        try:
            return [int(x) for x in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    _kill_until_empty(members, lambda: _thaw_dir(group))
    with contextlib.suppress(OSError):
        group.rmdir()


def descendants(root: int) -> list[int]:
    """The processes below ``root`` now (children, their children, ...), from every process's
    parent in ``/proc``: where there is no group to ask (:meth:`BotGroup.pids`)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                parent = int(f.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_until_empty(members: Callable[[], list[int]], thaw: Callable[[], None]) -> None:
    """Kill the processes ``members()`` lists until it lists none (half a second at most);
    ``thaw`` lets frozen ones run, so that they can die."""
    for _ in range(500):
        left = members()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        thaw()
        time.sleep(0.001)


# --- memory the arena may use, the hosts' common limit, and who the kernel kills first ------------

#: ``oom_score_adj`` of a bot host: the first the kernel kills when memory runs out.
HOST_OOM_SCORE = 1000
#: ``oom_score_adj`` of the arena's own processes (command, workers, referee): the last the
#: kernel kills. Not -1000, so a process started from them that fails to raise its own score
#: can still be killed rather than leaving the kernel with nothing to kill.
ARENA_OOM_SCORE = -900
#: A v1 limit at least this large means "no limit" (the kernel writes the largest page count).
_UNLIMITED = 1 << 60


def set_oom_score(score: int) -> bool:
    """Set this process's ``oom_score_adj`` (inherited by the processes it starts); False where
    the kernel does not allow it (lowering it needs ``CAP_SYS_RESOURCE``)."""
    try:
        Path("/proc/self/oom_score_adj").write_text(str(score))
    except OSError:
        return False
    return True


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _UNLIMITED else value


def memory_headroom() -> tuple[int, str] | None:
    """The memory this process's control groups leave it, and which group's limit that is:
    for each group from this process's own up to the root (v1 ``memory`` controller, or v2),
    its limit less what the group uses now; the smallest, or ``None`` where no group limits
    memory (or none can be read)."""
    groups = _own_groups()
    tightest: tuple[int, str] | None = None
    for root, point, fstype, options in _mounts():
        if fstype == "cgroup2" and "" in groups:
            group, names = groups[""], ("memory.max", "memory.current")
        elif fstype == "cgroup" and "memory" in options and "memory" in groups:
            group, names = groups["memory"], ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        path = _inside(root, point, group)
        while path is not None and path.is_dir():
            limit = _read_int(path / names[0])
            used = _read_int(path / names[1]) or 0
            if limit is not None and (tightest is None or limit - used < tightest[0]):
                where = "/" + str(path.relative_to(point)).removeprefix(".")
                tightest = (max(0, limit - used), f"control group {where.rstrip('/') or '/'}")
            if path == Path(point):
                break
            path = path.parent
    return tightest


def limit_hosts(hierarchy: Hierarchy, memory_bytes: int) -> None:
    """Limit the memory of every host this process starts, together, to ``memory_bytes``: the
    limit of the ``arena-PID`` group that holds their groups. The kernel then reclaims or kills
    among this process's hosts (never the arena's processes, which are not in it) before they
    take memory the arena needs. Raises :class:`CgroupError` when the limit cannot be set."""
    try:
        if hierarchy.version == 2:
            base = _enable_v2_controllers(hierarchy.parents[""])
            _write(base / "memory.max", str(memory_bytes))
        else:
            base = hierarchy.parents["memory"] / f"arena-{os.getpid()}"
            base.mkdir(exist_ok=True)
            _write(base / "memory.limit_in_bytes", str(memory_bytes))
    except (OSError, KeyError) as exc:
        raise CgroupError(getattr(exc, "errno", None) or 0, f"cgroup: {exc}") from None


#: How close to its own limit a v1 group's peak use must have come to count as reaching it (the
#: kernel charges pages in batches, and refuses a batch that would pass the limit).
_AT_LIMIT = 1 << 20


def _own_limit_reached(group: BotGroup) -> bool:
    """Whether ``group``'s memory ever reached its own limit: v1 keeps the group's peak use
    (``memory.max_usage_in_bytes``, and with swap accounting ``memory.memsw.*``), which
    reaches the limit only when that limit refused a page (``memory.failcnt`` is not counted
    by every kernel); v2 counts ``oom`` and ``max`` events of the group itself (a leaf: an
    ancestor's events do not reach it). Where none of it can be read: reached, as before."""
    if group.hierarchy.version == 2:
        path = group.dirs.get("")
        if path is None:
            return True
        try:
            with open(path / "memory.events", "rb") as f:
                events = dict(line.split(b" ", 1) for line in f.read().splitlines() if b" " in line)
        except OSError:
            return True
        return any(int(events.get(key, b"0")) > 0 for key in (b"oom", b"max"))
    path = group.dirs.get("memory")
    if path is None:
        return True
    known = False
    for prefix in ("memory.", "memory.memsw."):
        peak = _read_int(path / f"{prefix}max_usage_in_bytes")
        limit = _read_int(path / f"{prefix}limit_in_bytes")
        failed = _read_int(path / f"{prefix}failcnt")
        if failed:
            return True
        if peak is not None and limit is not None:
            known = True
            if peak + _AT_LIMIT >= limit:
                return True
    return not known


def memory_cause(group: BotGroup) -> str:
    """Why the kernel killed a process of ``group`` for memory: ``"memory"`` when the group
    had reached its own limit (the bot's doing), ``"shortage"`` when it was under it (the
    machine, or a group above it such as :func:`limit_hosts`'s, ran out)."""
    return "memory" if _own_limit_reached(group) else "shortage"
