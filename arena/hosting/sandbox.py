"""How bot hosts are started: in a bubblewrap sandbox with no privilege, an allow-listed file
system and kernel-enforced limits for the bot as a whole, or (only when asked, or for the arena's
own reference bots) as plain subprocesses. ``docs/sandbox.md`` is the threat model.

In the sandbox a host runs in its own user namespace as uid/gid 65534 with every capability
dropped and no way to make a new namespace, under a seccomp filter (:mod:`arena.hosting.seccomp`),
with no network, no other process in sight, a private ``/proc``, a private size-limited ``/tmp``,
and only ``/dev/null`` and ``/dev/urandom``. Of the machine's files it sees, read-only, the system's
shared libraries, the Python environment and the directories of the installed packages, and the
compiled kernels the arena built in a trusted step (:mod:`arena.hosting.kernels`): nothing else, so
no database, deck file, checkout, home directory or socket file. Its processes share one control
group (:mod:`arena.hosting.cgroups`) that limits their memory together with the ``/tmp`` pages,
their number, and their CPU time to one core; where no control group can be made, the host limits
itself (address space and processes per process, see :mod:`arena.hosting.host`) and is pinned to a
core.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata as md
import os
import shutil
import signal
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena.engine.jitcache import cache_dir
from arena.errors import ArenaError
from arena.hosting import cgroups, submissions
from arena.hosting.names import canonical, is_builtin
from arena.hosting.renewal import EPOCH_MOUNT

#: Environment variables a host inherits; everything else (``ARENA_DB`` with its password, tokens,
#: proxies) stays with the referee. A sandboxed host gets its own ``PATH`` (the interpreter's
#: directory: nothing else of the operator's is in its view) and ``HOME``; ``PYTHONPATH`` names
#: directories it is shown at their own paths (they are on its ``sys.path`` anyway).
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "PYTHONHASHSEED")

MODES = ("auto", "bwrap", "none")

#: The uid and gid a sandboxed host runs as inside its user namespace ("nobody").
SANDBOX_UID = 65534
#: Where the arena runs as root, every sandbox (a host, a build, a listing) runs as a kernel uid
#: of its own, none of them a user of the machine: this one and the next ones, a block of
#: :data:`UIDS_PER_PROCESS` per arena process (by its pid), so that no two live sandboxes of the
#: machine share one (``docs/sandbox.md``, "Least privilege").
SANDBOX_UIDS = 0x4000_0000
UIDS_PER_PROCESS = 512
#: The resource limits every sandboxed process starts with, whatever the arena's own parent set
#: (a service manager, a Ray worker, a shell): ``ulimit`` options of the shell that starts it
#: (``-c`` core files, ``-n`` open files, ``-s`` stack KiB, ``-l`` locked memory KiB, ``-r``
#: real-time priority, ``-f`` file size, ``-t`` processor seconds, ``-d`` data, ``-w`` locks).
#: Memory (address space) and processes are the bot's limits, set by the host itself.
START_RLIMITS = (
    ("-c", "0"), ("-n", "1024"), ("-s", "8192"), ("-l", "8192"), ("-r", "0"),
    ("-f", "unlimited"), ("-t", "unlimited"), ("-d", "unlimited"), ("-w", "unlimited"),
)  # fmt: skip

#: System directories holding shared libraries (links are recreated as links).
LIBRARY_DIRS = ("/lib", "/lib64", "/lib32", "/libx32", "/usr/lib", "/usr/lib64", "/usr/lib32")
#: Devices a host gets.
DEVICES = ("/dev/null", "/dev/urandom")
#: The machine-wide files of ``/proc`` in which a bot would watch the machine rather than itself:
#: the load and the CPU time of every process together (the opponent's thinking), memory, uptime,
#: and disk, interrupt, scheduler and memory-zone counters. Each is shown as ``/dev/null`` (empty);
#: those this kernel lacks are left out.
MASKED_PROC_FILES = (
    "loadavg", "stat", "meminfo", "uptime", "schedstat", "diskstats", "vmstat", "interrupts",
    "softirqs", "zoneinfo", "buddyinfo", "pagetypeinfo", "timer_list", "sched_debug", "locks",
    "swaps", "key-users",
)  # fmt: skip
#: Machine-wide directories of ``/proc`` shown empty: pressure stall information (the machine's
#: CPU, memory and I/O pressure).
MASKED_PROC_DIRS = ("pressure",)
#: Where a sandboxed host sees its submission's snapshot (whatever the store's real path).
SUBMISSION_MOUNT = "/submission"
#: Where a sandboxed host sees the arena's cache directory (compiled kernels, solver tables),
#: whatever its real path (the operator's home, usually): ``$XDG_CACHE_HOME/loveletter-arena``
#: with ``XDG_CACHE_HOME=/cache``.
KERNELS_MOUNT = "/cache/loveletter-arena"
#: Where a sandboxed host's numba cache lives (private, in its ``/tmp``).
PRIVATE_KERNELS = "/tmp/numba"


class SandboxError(ArenaError):
    """The sandbox asked for cannot be used here, or a bot may not run without it."""


@dataclass(frozen=True)
class Limits:
    """Limits of one bot as a whole: memory of all its processes together with its scratch
    space (MiB), processes and threads, scratch space (its ``/tmp``, MiB) and cores."""

    memory_mb: int = 2048
    processes: int = 64
    scratch_mb: int = 64
    cores: int = 1

    def __post_init__(self) -> None:
        if self.memory_mb < 0:
            raise SandboxError("the memory limit must be 0 (none) or more")
        for name in ("processes", "scratch_mb", "cores"):
            if getattr(self, name) < 1:
                raise SandboxError(f"the {name.replace('_', ' ')} limit must be at least 1")


class _UidPool:
    """This process's block of sandbox uids (:data:`SANDBOX_UIDS`): each live sandbox holds one
    until it is closed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[int] = set()
        self._owner = -1

    def acquire(self) -> int:
        """A uid no live sandbox of this process holds (the least free one)."""
        with self._lock:
            if self._owner != os.getpid():  # a forked child has a block of its own
                self._owner, self._held = os.getpid(), set()
            base = SANDBOX_UIDS + (os.getpid() % (1 << 22)) * UIDS_PER_PROCESS
            slot = next((i for i in range(UIDS_PER_PROCESS) if i not in self._held), None)
            if slot is None:  # every uid of the block is live: share the last one
                slot = UIDS_PER_PROCESS - 1
            self._held.add(slot)
            return base + slot

    def release(self, uid: int) -> None:
        """Give ``uid`` back once its sandbox's processes are gone."""
        with self._lock:
            if self._owner == os.getpid():
                self._held.discard((uid - SANDBOX_UIDS) % UIDS_PER_PROCESS)


_UIDS = _UidPool()


@dataclass(frozen=True)
class HostProcess:
    """A started host: its process and, where limits are enforced by a control group, the
    group (which :meth:`close` removes once the process is gone); ``uid`` is the kernel uid
    its processes run as where the arena gives each sandbox its own (:data:`SANDBOX_UIDS`)."""

    process: subprocess.Popen[bytes]
    group: cgroups.BotGroup | None = None
    uid: int | None = None

    def limit_hit(self) -> str | None:
        """Which kernel limit the bot ran into (``"memory"``, ``"processes"``), if any; or
        ``"shortage"`` when the kernel killed it for memory while it was under its own limit."""
        hit = self.group.hit() if self.group is not None else None
        return cgroups.memory_cause(self.group) if hit == "memory" and self.group else hit

    def memory_bytes(self) -> int | None:
        """What the bot's processes use now, where a control group counts it."""
        return self.group.memory_bytes() if self.group is not None else None

    def freeze(self) -> None:
        """Stop the bot's processes until :meth:`thaw` (where the group can be frozen)."""
        if self.group is not None:
            self.group.freeze()

    def thaw(self) -> None:
        """Let the bot's processes run again."""
        if self.group is not None:
            self.group.thaw()

    def close(self) -> None:
        """Kill whatever is left of the bot (its session, its group) and remove its group."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.thaw()  # a frozen process dies only once it runs
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        if self.group is not None:
            self.group.close()
        if self.uid is not None and self.process.poll() is not None:
            _UIDS.release(self.uid)


@dataclass(frozen=True)
class Sandbox:
    """A way to start bot hosts: ``kind`` is ``"bwrap"`` or ``"none"``.

    ``exposed`` are the directories a sandboxed host sees (read-only) besides the system's
    libraries; ``kernels`` the arena's cache directory (compiled kernels, solver tables), which
    it sees read-only; ``hierarchy`` the control
    groups that enforce :attr:`limits` (``None``: the fallback, ``cgroup_reason`` says why);
    ``seccomp`` whether the system-call filter is loaded; ``drops`` whether each sandbox runs as
    a kernel uid of its own (:data:`SANDBOX_UIDS`) rather than the arena's (``drop_reason`` says
    why not). ``fallback`` is set when ``auto`` found
    no working bubblewrap: then only the arena's own bots may run (:meth:`check`); ``warning``
    says why (``bubblewrap (bwrap) is not installed``). It is said only where it matters: when a
    bot that is not the arena's own is installed or asked to play (:meth:`refusal`, :meth:`check`).
    """

    kind: str
    limits: Limits = field(default_factory=Limits)
    warning: str | None = None
    exposed: tuple[str, ...] = field(default=(), repr=False)
    #: Places of an installed third-party distribution outside :attr:`exposed` (an editable
    #: checkout), by canonical distribution name: shown to that distribution's hosts only.
    own_places: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    kernels: str = ""
    hierarchy: cgroups.Hierarchy | None = None
    cgroup_reason: str = ""
    seccomp: bool = False
    fallback: bool = False
    drops: bool = False
    drop_reason: str = ""
    renewal_reason: str = ""

    @property
    def holds(self) -> bool:
        """Whether a host's fork server is held (:mod:`arena.hosting.epochs`): its bot's group
        can be frozen and each process it serves gets a fresh ``/tmp``, pipes and next pid
        (:mod:`arena.hosting.renewal`; ``renewal_reason`` says why not where the kernel
        lacks what that needs)."""
        return (
            self.isolated
            and self.hierarchy is not None
            and self.hierarchy.freezes
            and not self.renewal_reason
        )

    @property
    def isolated(self) -> bool:
        """Whether hosts run in the bubblewrap sandbox."""
        return self.kind == "bwrap"

    def check(self, bot: str, distribution: str) -> None:
        """Raise :class:`SandboxError` if the bot ``bot`` of ``distribution`` may not run here:
        a third-party bot never runs unsandboxed unless the user asked for ``--sandbox none``."""
        if self.fallback and not is_builtin(distribution):
            raise SandboxError(
                f"bot {bot!r} (from {distribution or 'an unknown distribution'}) would run "
                f"without a sandbox: {self.warning}; install bubblewrap, or pass --sandbox none "
                "to run it unsandboxed anyway (docs/sandbox.md)"
            )

    def refusal(self, distributions: Iterable[str]) -> str | None:
        """The one warning to give when bots of ``distributions`` (those installed) may not run
        here (see :meth:`check`): it names them and what to do; ``None`` when every one may (the
        arena's own always may, and every bot may in the sandbox or under ``--sandbox none``)."""
        if not self.fallback:
            return None
        refused = sorted(
            {d or "an unknown distribution" for d in distributions if not is_builtin(d)}
        )
        if not refused:
            return None
        return (
            f"{self.warning}, so the bots of {', '.join(refused)} cannot play here (only the "
            "arena's own bots run without a sandbox); install bubblewrap, or pass --sandbox none "
            "to run them unsandboxed (docs/sandbox.md)"
        )

    def enforcement(self) -> dict[str, Any]:
        """What is in force for a host, for ``arena bots``, provenance and reports."""
        limits = self.limits
        if self.isolated and self.hierarchy is not None:
            by = self.hierarchy.describe()
        elif self.isolated:
            by = f"rlimits per process, core pinning ({self.cgroup_reason})"
        else:
            by = "rlimits per process (no sandbox)"
        return {
            "sandbox": self.kind,
            "isolation": (
                f"user namespace as uid {SANDBOX_UID}, "
                + (
                    "a kernel uid of its own (not the arena's), "
                    if self.drops
                    else f"the arena's kernel uid ({self.drop_reason}), "
                )
                + "no capabilities, "
                + ("seccomp filter, " if self.seccomp else "no seccomp filter, ")
                + "no network, allow-listed read-only files, private /tmp and /proc"
            )
            if self.isolated
            else f"none ({self.warning}: only the arena's own bots run), each as this user"
            if self.fallback
            else "none: the bot runs as this user and can read and write what it can",
            "memory_mb": limits.memory_mb,
            "processes": limits.processes if self.isolated else None,
            "scratch_mb": limits.scratch_mb if self.isolated else None,
            "cores": limits.cores,
            "enforced_by": by,
            "between_moves": self.between_moves(),
            "fallback": self.fallback,
        }

    def between_moves(self) -> str:
        """What a bot's processes do between its requests, and how its processes are renewed
        between decks (``docs/sandbox.md``, "Fair play")."""
        if self.holds:
            return (
                "frozen (control group freezer); a fresh process per deck, forked from a held "
                "fork server checked from outside, with its own /tmp, pipes and next pid"
            )
        if self.isolated and self.hierarchy is not None and self.hierarchy.freezes:
            return (
                "frozen (control group freezer); a fresh process per deck, from a cooperative "
                f"fork server ({self.renewal_reason}: the processes of a bot share their /tmp, "
                "pipes and next pid)"
            )
        why = (
            "no sandbox"
            if not self.isolated
            else self.cgroup_reason or "the control groups here cannot freeze"
        )
        return (
            f"not frozen ({why}): a bot's other processes may run between its moves; a fresh "
            "process per deck, from a cooperative fork server"
        )

    def describe(self) -> str:
        """One line on how hosts run and which limits hold."""
        return describe_enforcement(self.enforcement())

    def environment(self) -> dict[str, str]:
        """The environment a host starts with."""
        env = {k: os.environ[k] for k in ENV_KEEP if k in os.environ}
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # one core per bot, and a fork server needs a single thread after warm_up: no thread
        # pools started by numpy's linear algebra libraries at import
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = "1"
        if self.kernels:
            # The trusted cache (read-only in the sandbox): solver tables through
            # XDG_CACHE_HOME, kernels through a private mirror (arena.engine.jitcache).
            env["XDG_CACHE_HOME"] = str(Path(self.kernels).parent)
            env["NUMBA_CACHE_DIR"] = str(Path(self.kernels) / "numba")
        if self.isolated:
            env["PATH"] = str(Path(sys.executable).parent)
            env["HOME"] = "/tmp"
            env["TMPDIR"] = "/tmp"
            env["XDG_CACHE_HOME"] = str(Path(KERNELS_MOUNT).parent)
            env["NUMBA_CACHE_DIR"] = PRIVATE_KERNELS
            env["ARENA_TRUSTED_KERNELS"] = f"{KERNELS_MOUNT}/numba"
        return env

    def command(
        self,
        argv: Sequence[str],
        seccomp_fd: int | None = None,
        binds: Sequence[tuple[str, str]] = (),
        uid: int | None = None,
    ) -> list[str]:
        """The command line that runs ``argv`` (a host command) under this sandbox; ``binds``
        are directories this host alone sees besides :attr:`exposed`, read-only, as ``(path,
        where it is seen)``: a submission's snapshot, at :data:`SUBMISSION_MOUNT`; ``uid`` the
        kernel uid it runs as (see :func:`bwrap_command`)."""
        if not self.isolated:
            return list(argv)
        shown = [(path, path) for path in self.exposed] + list(binds)
        if self.kernels:
            shown.append((self.kernels, KERNELS_MOUNT))
        return [
            *bwrap_command(
                self.limits.scratch_mb, shown, seccomp_fd=seccomp_fd, uid=uid, dirs=(EPOCH_MOUNT,)
            ),
            *argv,
        ]

    def own(self, plugin: str) -> list[tuple[str, str]]:
        """What a host of ``plugin`` (a :func:`~arena.hosting.plugins.plugin_ref`) sees besides
        :attr:`exposed`, as :meth:`launch`'s ``binds``: its own distribution's places outside the
        environment (an editable checkout), never another's."""
        distribution = plugin.partition(":")[0] if ":" in plugin else ""
        return [(p, p) for p in self.own_places.get(canonical(distribution), ())]

    def submission_path(self, snapshot: str) -> str:
        """Where a host sees the snapshot ``snapshot`` of its submission."""
        return SUBMISSION_MOUNT if self.isolated else snapshot

    def working_directory(self) -> str:
        """Where a host process starts (outside the sandbox: an empty temporary directory)."""
        return "/" if self.isolated else _scratch()

    def launch(self, argv: Sequence[str], binds: Sequence[tuple[str, str]] = ()) -> HostProcess:
        """Start ``argv`` (a host command) under this sandbox, with pipes for its standard
        streams, in its own session and (where possible) its own control group; ``binds`` are
        shown to this host alone, read-only (see :meth:`command`; ignored without a sandbox)."""
        group = None
        if self.isolated and self.hierarchy is not None:
            group = cgroups.BotGroup(
                self.hierarchy,
                self.limits.memory_mb << 20,
                self.limits.processes,
                self.limits.cores,
            )
        seccomp_fd = seccomp_pipe() if self.isolated else None
        pass_fds = [] if seccomp_fd is None else [seccomp_fd]
        uid = _UIDS.acquire() if self.isolated and self.drops else None
        command = starter(group) + self.command(argv, seccomp_fd, binds, uid)
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment(),
                cwd=self.working_directory(),
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except BaseException:
            if group is not None:
                group.close()
            if uid is not None:
                _UIDS.release(uid)
            raise
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        return HostProcess(process, group, uid)


def starter(group: cgroups.BotGroup | None) -> list[str]:
    """The shell that starts a sandbox's command (its arguments follow): it raises its
    ``oom_score_adj`` (the sandbox is the first the kernel kills when memory runs out, never
    the arena), sets the resource limits every sandbox starts with (:data:`START_RLIMITS`),
    joins ``group`` before anything of the sandbox runs, then becomes the command."""
    joins = dict.fromkeys(group.dirs.values()) if group is not None else {}
    targets = [str(p / "cgroup.procs") for p in joins]
    script = f"echo {cgroups.HOST_OOM_SCORE} > /proc/self/oom_score_adj 2>/dev/null; "
    script += "".join(f"ulimit {o} {v} 2>/dev/null; " for o, v in START_RLIMITS)
    script += 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; '
    script += 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *targets, "--"]


def bwrap_command(
    scratch_mb: int,
    shown: Sequence[tuple[str, str]],
    *,
    network: bool = False,
    seccomp_fd: int | None = None,
    uid: int | None = None,
    dirs: Sequence[str] = (),
) -> list[str]:
    """bubblewrap's command line (without the command it runs) for a process that runs as
    :data:`SANDBOX_UID` in its own user namespace with no capability, no other process in sight,
    a private size-limited ``/tmp`` of ``scratch_mb`` MiB as the only writable place, the
    system's libraries, ``/dev/null`` and ``/dev/urandom``, a read-only ``/proc`` whose
    machine-wide files are masked (:data:`MASKED_PROC_FILES`, :data:`MASKED_PROC_DIRS`), and the
    directories ``shown`` read-only, as ``(path, where it is seen)``. No network unless
    ``network`` (then the resolver's and the certificates' files are shown too);
    ``seccomp_fd`` is a descriptor holding the filter program to load; ``dirs`` are empty
    directories made on the read-only root (mount points for the arena). Hosts
    (:meth:`Sandbox.command`) and builds (:mod:`arena.hosting.build`) both start this way.

    With ``uid`` (the arena runs as root), the sandbox's processes run as that kernel uid, not
    the arena's: a first bubblewrap, as root, builds a view holding only what the sandbox is
    shown (at their own paths, whatever the rights of the directories above them, such as a
    ``/root`` only root may enter), then drops to ``uid`` with every capability gone
    (:func:`dropping_prefix`) and runs the sandbox's own bubblewrap in that view."""
    prefix = [] if uid is None else dropping_prefix(uid, [path for path, _ in shown], network)
    cmd = [
        *prefix,
        # found on this process's PATH: the sandboxed process's environment has its own
        shutil.which("bwrap") or "bwrap",
        "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--disable-userns", "--cap-drop", "ALL",
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--new-session", "--die-with-parent",
        # /tmp first: packages installed below /tmp are then mounted on top of it.
        "--size", str(scratch_mb << 20), "--tmpfs", "/tmp",
    ]  # fmt: skip
    if not network:
        cmd.append("--unshare-net")
    cmd += _system_view(network)
    for path, inside in shown:
        cmd += ["--ro-bind", path, inside]
    # /proc read-only: the process's kernel uid is root's when root runs the arena (mapped to
    # SANDBOX_UID inside, with no capability), so writable sysctls would be a hole.
    cmd += ["--proc", "/proc"]
    for name in MASKED_PROC_FILES:
        if os.path.isfile(f"/proc/{name}"):
            cmd += ["--dev-bind", "/dev/null", f"/proc/{name}"]
    for name in MASKED_PROC_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            masked = f"/proc/{name}"
            cmd += ["--size", "4096", "--tmpfs", masked, "--remount-ro", masked]
    cmd += ["--remount-ro", "/proc", "--dir", "/dev"]
    for device in DEVICES:
        cmd += ["--dev-bind", device, device]
    # the root (bubblewrap's own tmpfs, holding the mount points) read-only: the process writes
    # only its size-limited /tmp, never unlimited memory outside it
    for path in dirs:  # empty mount points (the arena's agent mounts there, renewal.py)
        cmd += ["--dir", path]
    cmd += ["--remount-ro", "/", "--chdir", "/tmp"]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return cmd


def _system_view(network: bool) -> list[str]:
    """bubblewrap's arguments showing the system's libraries (and, with ``network``, the
    resolver's and the certificates' files) read-only."""
    cmd: list[str] = []
    for path in LIBRARY_DIRS:
        if os.path.islink(path):
            cmd += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            cmd += ["--ro-bind", path, path]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    if network:
        for path in ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl"):
            cmd += ["--ro-bind-try", path, path]
    return cmd


def dropping_prefix(uid: int, sources: Sequence[str], network: bool = False) -> list[str]:
    """The command line (to be followed by a bubblewrap command) that leaves the arena's rights
    before a sandbox starts: a bubblewrap run as root makes a mount namespace holding the
    system's libraries, ``sources`` at their own paths (the directories above them made
    anew, readable by anyone), ``/proc``, the devices a sandbox gets and an empty ``/tmp``
    (what the inner bubblewrap needs), then ``setpriv`` becomes ``uid`` with no
    supplementary group, no capability (none inheritable, an empty bounding set) and
    ``no_new_privs``. Nothing of the machine is in that view but what is listed, so the inner
    bubblewrap, as ``uid``, can show only that; and whatever the sandbox reaches is checked
    against ``uid``'s rights."""
    bwrap, setpriv = shutil.which("bwrap") or "bwrap", shutil.which("setpriv") or "setpriv"
    # a PID namespace of its own: its processes then die with it when the arena dies (without
    # one, bubblewrap run by root leaves its command behind when its parent dies)
    cmd = [bwrap, "--die-with-parent", "--unshare-pid"]
    system = [p for p in LIBRARY_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    tools = [os.path.realpath(t) for t in (bwrap, setpriv)]
    bound: list[str] = []
    for source in sorted({*system, *sources, *tools}, key=lambda p: (p.count("/"), p)):
        if not _inside(source, bound):
            bound.append(source)
    made: set[str] = set()
    for source in bound:  # shallowest first: a bind never hides a directory made for another
        parts = Path(source).parts[1:-1]
        for depth in range(1, len(parts) + 1):
            parent = "/" + "/".join(parts[:depth])
            if parent not in made:
                made.add(parent)
                cmd += ["--perms", "0755", "--dir", parent]
        made.add(source)
    if "/etc" not in made:
        cmd += ["--perms", "0755", "--dir", "/etc"]
    cmd += [a for path in LIBRARY_DIRS if os.path.islink(path) for a in
            ("--symlink", os.readlink(path), path)]  # fmt: skip
    for source in bound:
        cmd += ["--ro-bind", source, source]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    if network:
        for path in ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl"):
            cmd += ["--ro-bind-try", path, path]
    # the inner bubblewrap mounts its own /proc only where a whole one is visible; it binds only
    # these devices
    cmd += ["--bind", "/proc", "/proc", "--dir", "/tmp", "--perms", "0755", "--dir", "/dev"]
    cmd += [a for device in DEVICES for a in ("--dev-bind", device, device)] + ["--"]
    cmd += [
        setpriv, "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--no-new-privs",
        "--inh-caps=-all", "--bounding-set=-all",
        # a change of uid clears the signal the outer bubblewrap asked for when its parent
        # dies: kept, the sandbox still dies with the arena
        "--pdeathsig", "keep", "--",
    ]  # fmt: skip
    return cmd


def seccomp_pipe() -> int | None:
    """A descriptor from which bubblewrap reads the system-call filter (:mod:`.seccomp`), to be
    passed to it and closed by the caller after the start; ``None`` where the filter cannot be
    built (no libseccomp)."""
    program = _seccomp_program()
    if program is None:
        return None
    read_end, write_end = os.pipe()
    os.write(write_end, program)  # a few hundred bytes: never blocks
    os.close(write_end)
    return read_end


def interpreter_places() -> set[str]:
    """The interpreter's directory and the library directories of its installation and of the
    arena's environment (what any Python process here needs to start)."""
    places = {os.path.dirname(os.path.realpath(sys.executable)), sys.prefix, sys.exec_prefix}
    for scheme in (sysconfig.get_paths(), sysconfig.get_paths(vars={"base": sys.base_prefix})):
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if key in scheme:
                places.add(scheme[key])
    return places


def describe_enforcement(facts: dict[str, Any]) -> str:
    """One line for :meth:`Sandbox.enforcement`'s ``facts`` (also as stored with a tournament)."""
    memory = facts.get("memory_mb") or "no limit"
    if facts.get("sandbox") != "bwrap":
        return f"no sandbox; memory {memory} MiB per process; {facts.get('isolation', '')}"
    return (
        f"bubblewrap sandbox ({facts.get('isolation', '')}); limits per bot: memory {memory} "
        f"MiB with scratch, {facts.get('processes')} processes, {facts.get('scratch_mb')} MiB "
        f"/tmp, {facts.get('cores')} core, enforced by {facts.get('enforced_by')}"
        + (f"; between moves: {facts['between_moves']}" if facts.get("between_moves") else "")
    )


@lru_cache(maxsize=1)
def _sweep_groups() -> None:
    """Once per process: remove the control groups of arena processes that were killed, and
    this process's own when it exits."""
    cgroups.sweep()
    atexit.register(cgroups.sweep, [os.getpid()])


@lru_cache(maxsize=1)
def _scratch() -> str:
    """This process's working directory for unsandboxed hosts, removed when it exits."""
    path = tempfile.mkdtemp(prefix="arena-host-")
    atexit.register(shutil.rmtree, path, True)
    return path


@lru_cache(maxsize=1)
def _seccomp_program() -> bytes | None:
    from arena.hosting.seccomp import filter_program

    try:
        return filter_program()
    except OSError:
        return None


def _trusted_kernels() -> str:
    """The arena's cache directory with its kernel cache, made if missing (see
    :mod:`arena.hosting.kernels`), readable by anyone (sandboxes read it as uids of their
    own, whatever the operator's umask)."""
    path = cache_dir()
    (path / "numba").mkdir(parents=True, exist_ok=True)
    for made in (path, path / "numba"):
        with contextlib.suppress(OSError):
            if made.stat().st_mode & 0o005 != 0o005:
                made.chmod(made.stat().st_mode | 0o755)
    return str(path)


def _inside(path: str, dirs: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _distribution_locations(dist: md.Distribution) -> set[str]:
    """Where ``dist``'s code lives, from its own installed files: the top-level directory or
    module of every file its ``RECORD`` (or ``SOURCES.txt``) lists, and, for a ``.pth`` file or
    setuptools' editable finder among them, the directories they point at. Nothing is found
    through ``sys.path`` (whose entries depend on who calls: a runner script's directory is on
    it), and nothing is imported."""
    from arena.hosting.listing_cache import editable_sources

    try:
        files = dist.files or []
        root = os.path.realpath(str(dist.locate_file("")))
    except Exception:  # a RECORD that cannot be read: nothing of it is shown
        return set()
    places: set[str] = set()
    pointers: list[Path] = []
    for entry in files:
        parts = entry.parts
        if not parts or parts[0] == "..":
            continue  # scripts in the environment's bin, shown with the environment
        places.add(os.path.join(root, parts[0]))
        name = parts[-1]
        if len(parts) == 1 and (
            name.endswith(".pth") or (name.startswith("__editable__") and name.endswith(".py"))
        ):
            pointers.append(Path(root, name))
    sources = editable_sources(root, pointers) if pointers else None
    places.update(os.path.join(root, s) for s in sources or [])
    return places


def _package_locations() -> tuple[set[str], dict[str, set[str]]]:
    """What a host needs to import: the interpreter's and the environment's library
    directories, every ``PYTHONPATH`` entry, and where every installed distribution's code
    lives, read from its own installed files (:func:`_distribution_locations`: editable installs
    live outside the environment); a submission is none of these: it is not installed here, and
    each of its hosts is shown its own snapshot alone (:meth:`Sandbox.command`).

    Returns the places every host sees, and, per third-party distribution (by its
    :func:`~arena.hosting.names.canonical` name), the places of its own outside those (an
    editable checkout): shown to its own hosts only (:meth:`Sandbox.own`)."""
    places = interpreter_places()
    places.update(site.getsitepackages())
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    places.update(pythonpath)
    # the distributions of the environment a host runs in, not of this process's sys.path
    # (which holds a runner script's directory, or the current one)
    environment = [*site.getsitepackages(), *pythonpath]
    environment += [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
    if site.ENABLE_USER_SITE:
        environment.append(site.getusersitepackages())
    found = sorted({p for p in environment if os.path.isdir(p)})
    common = {os.path.realpath(p) for p in places if p and os.path.exists(p)}
    located = _located_cached(found)
    own: dict[str, set[str]] = {}
    for name, paths in located:
        existing = {p for p in paths if os.path.exists(p)}
        if is_builtin(name) or not name:
            common.update(existing)
        else:
            outside = {p for p in existing if not _inside(p, common)}
            if outside:
                own.setdefault(canonical(name), set()).update(outside)
    return common, own


def _located(found: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each distribution installed in the directories ``found``: its name and where its code
    lives (:func:`_distribution_locations`, real paths)."""
    out = []
    for dist in md.distributions(path=list(found)):
        located = {os.path.realpath(p) for p in _distribution_locations(dist)}
        out.append((dist.metadata["Name"] or "", sorted(located)))
    return out


def _environment_stamp(found: Sequence[str]) -> str:
    """A hash of what :func:`_located` reads in the directories ``found``: each directory's
    modification time, and the name and modification time of every entry that describes a
    distribution or points elsewhere (``*.dist-info`` with its ``RECORD``, ``*.egg-info``,
    ``*.pth``, setuptools' editable finders). Installing, removing or reinstalling anything
    changes it; a few stat calls instead of reading every distribution's file list."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.executable}\0{sys.version}\0{sorted(found)}".encode())
    digest.update(Path(__file__).read_bytes())  # the code that reads them
    for where in found:
        try:
            digest.update(f"{where}\0{os.stat(where).st_mtime_ns}\0".encode())
            entries = sorted(os.scandir(where), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if not (
                name.endswith((".dist-info", ".egg-info", ".pth", ".egg-link"))
                or name.startswith("__editable__")
            ):
                continue
            parts = [name]
            for path in (entry.path, os.path.join(entry.path, "RECORD")):
                with contextlib.suppress(OSError):
                    info = os.stat(path)
                    parts.append(f"{info.st_mtime_ns}:{info.st_size}")
            digest.update("\0".join(parts).encode() + b"\n")
    return digest.hexdigest()


def _located_cached(found: Sequence[str]) -> list[tuple[str, list[str]]]:
    """:func:`_located`, remembered in the arena's cache directory under
    :func:`_environment_stamp` (half a second of reading every distribution's file list on
    every command that plays, otherwise). Written only by a trusted process: sandboxed hosts
    see the cache directory read-only."""
    import json

    path = cache_dir() / "places" / f"{_environment_stamp(found)}.json"
    try:
        data = json.loads(path.read_text())
        return [(str(name), [str(p) for p in paths]) for name, paths in data]
    except (OSError, ValueError, TypeError):
        pass
    located = _located(found)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(located, f)
        os.replace(temporary, path)
        for old in path.parent.glob("*.json"):  # one environment's answer is enough per stamp
            if old != path and old.stat().st_mtime < path.stat().st_mtime - 86400 * 7:
                old.unlink(missing_ok=True)
    return located


def _kept(paths: Iterable[str], outer: Sequence[str] = ()) -> tuple[str, ...]:
    """``paths`` without any inside another, inside ``outer`` or inside a library directory."""
    system = [p for p in LIBRARY_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    kept: list[str] = []
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if path in ("/", "/usr", "/tmp") or _inside(path, [*kept, *outer, *system]):
            continue
        kept.append(path)
    return tuple(sorted(kept))


def _exposed() -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The package locations every host sees, and those each third-party distribution's own
    hosts see besides (see :func:`_package_locations`)."""
    common, own = _package_locations()
    exposed = _kept(common)
    return exposed, {name: _kept(paths, exposed) for name, paths in own.items()}


@lru_cache(maxsize=8)
def _bwrap_error() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--uid",
             str(SANDBOX_UID), "--cap-drop", "ALL", "--die-with-parent", "true"],
            capture_output=True,
            timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if probe.returncode != 0:
        return "bwrap does not work here: " + probe.stderr.decode(errors="replace").strip()
    return None


@lru_cache(maxsize=8)
def _drop_error() -> str | None:
    """Why sandboxes cannot run as kernel uids of their own here (``None``: they can): the
    arena is not root, ``setpriv`` is missing, or the two bubblewraps do not run."""
    if os.geteuid() != 0:
        return "the arena is not root, so its sandboxes run as its own user"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    uid = _UIDS.acquire()
    try:
        true = os.path.realpath(shutil.which("true") or "/bin/true")
        inner = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                 "--cap-drop", "ALL", "--unshare-pid", "--proc", "/proc",
                 "--ro-bind", true, true, true]  # fmt: skip
        probe = subprocess.run(
            [*dropping_prefix(uid, [true]), shutil.which("bwrap") or "bwrap", *_system_view(False),
             *inner],
            capture_output=True,
            timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"a sandbox cannot drop to a uid of its own: {exc}"
    finally:
        _UIDS.release(uid)
    if probe.returncode != 0:
        said = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no reason"]
        return f"a sandbox cannot drop to a uid of its own: {said[0]}"
    return None


@lru_cache(maxsize=1)
def _renewal_error() -> str | None:
    """Why the arena's agent cannot give each served process a fresh ``/tmp`` and next pid
    here (``None``: it can): a kernel without the overlay file system, or without
    ``/proc/sys/kernel/ns_last_pid`` (``CONFIG_CHECKPOINT_RESTORE``)."""
    try:
        with open("/proc/filesystems", encoding="ascii") as f:
            known = {line.split()[-1] for line in f if line.strip()}
    except OSError:
        known = set()
    if (
        "overlay" not in known
        and not os.path.exists("/lib/modules")
        and not os.path.isdir("/sys/module/overlay")
    ):
        return "this kernel has no overlay file system"
    if not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        return "this kernel cannot set a PID namespace's next pid (ns_last_pid)"
    return None


def _unreadable(places: Iterable[str]) -> str | None:
    """The first of ``places`` (directories and files shown to sandboxes) that other users
    may not read, which a sandbox with a uid of its own could then not read either."""
    for place in places:
        try:
            mode = os.stat(place).st_mode
        except OSError:
            continue
        needed = 0o005 if stat.S_ISDIR(mode) else 0o004
        if mode & needed != needed:
            return place
    return None


def choose_sandbox(
    mode: str = "auto", limits: Limits | None = None, hide: Iterable[Any] = ()
) -> Sandbox:
    """The sandbox for ``mode``: ``auto`` (bubblewrap when it works; else only the arena's own
    bots may run, unsandboxed: a fallback, whose ``warning`` says why), ``bwrap`` (required;
    :class:`SandboxError` if it does not work) or ``none`` (every bot unsandboxed: the user asked
    for it).

    ``hide`` are files or directories bots must not see (the database, a deck file): the
    sandbox shows nothing it does not list, so this only checks that none of them lies inside a
    listed directory (a database inside the Python environment, say), and refuses if one does.
    """
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox {mode!r} (choose from {', '.join(MODES)})")
    limits = limits or Limits()
    kernels = _trusted_kernels()
    if mode == "none":
        return Sandbox("none", limits, kernels=kernels)
    error = _bwrap_error()
    if error is not None:
        if mode == "bwrap":
            raise SandboxError(error)
        return Sandbox("none", limits, warning=error, kernels=kernels, fallback=True)
    exposed, own = _exposed()
    # the submissions store: each host is shown its own snapshot, never the others
    for secret in (*hide, submissions.root()):
        path = os.path.realpath(os.fspath(secret))
        if _inside(path, exposed) or any(_inside(path, paths) for paths in own.values()):
            raise SandboxError(
                f"{path} is inside a directory the sandbox shows to bots; keep the database, "
                "deck files and submissions (ARENA_SUBMISSIONS) outside the Python environment "
                "and the installed packages"
            )
    found = cgroups.probe()
    hierarchy = found if isinstance(found, cgroups.Hierarchy) else None
    if hierarchy is not None:
        _sweep_groups()
    drop_error = _drop_error()
    if drop_error is None:
        shown = [*exposed, *(p for paths in own.values() for p in paths), kernels]
        unreadable = _unreadable(shown)
        if unreadable is not None:
            drop_error = (
                f"{unreadable} may not be read by other users, so sandboxes run as the "
                "arena's user (make it readable: chmod o+rX)"
            )
    return Sandbox(
        "bwrap",
        limits,
        exposed=exposed,
        own_places=own,
        kernels=kernels,
        hierarchy=hierarchy,
        cgroup_reason="" if hierarchy else str(found),
        seccomp=_seccomp_program() is not None,
        drops=drop_error is None,
        drop_reason=drop_error or "",
        renewal_reason=_renewal_error() or "",
    )
