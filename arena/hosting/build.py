"""``arena submit``: build a stranger's package inside the sandbox and keep it as a read-only
snapshot in the submissions store (:mod:`arena.hosting.submissions`), without ever running its
code, or reading what it produced, with the arena's rights (``docs/sandbox.md``,
"Submissions").

The build runs in bubblewrap like a host: its own user namespace as uid 65534, no capability, no
other process in sight, a seccomp filter, and, where the arena is root, a kernel uid of its own
(:data:`~arena.hosting.sandbox.SANDBOX_UIDS`), so nothing of the machine it reaches is writable
by it. It sees, read-only, only the system's libraries, the interpreter and the arena's Python
environment (for ``pip`` and the build backend), and a project directory given (a wheel or a
source package comes as bytes on its standard input instead, so a file only the arena may read
still builds). Its only writable place is a private ``/tmp``. It runs in a control group of its
own (:class:`~arena.hosting.cgroups.BotGroup`: memory with its ``/tmp`` pages, processes, one
core) and is held to :class:`BuildLimits`:

1. a source package or project directory is built into a wheel with ``pip wheel --no-deps``,
   using the arena environment's setuptools without build isolation and without network (with
   ``--network``: build isolation, its build dependencies fetched as wheels only);
2. the wheel is installed with ``pip install --no-deps --no-compile --target /tmp/out``;
3. its declared dependencies that the arena's environment satisfies are left out; any other is
   fetched as a wheel only into the same directory with ``--network``, else the build fails
   naming it;
4. the builder prints one line of JSON on its standard output (which ``*.dist-info`` is the
   submission's own, and its name) and waits.

Its standard output and error are pipes the arena reads with bounds: at most
:data:`RESULT_BYTES` of result, and of its log at most ``log_mb`` MiB written (the last
``log_kept_bytes`` kept). Then the arena freezes the build's group and copies ``/tmp/out`` out of
the sandbox through ``/proc/PID/root`` with small bounded code (:mod:`arena.hosting.copyout`:
regular files and directories only, never following a link, a count and a size) into a staging
directory of its own; the build's processes are killed, its group removed and its uid given
back. No archive crosses, and nothing here unpacks one.

Then, without importing anything of it, the arena reads what it needs with strict readers of its
own (:mod:`arena.hosting.submissions`): the distribution and version from the ``*.dist-info``
directory's name, the ``arena.bots`` entry points from its ``entry_points.txt``, the top-level
names from the copy's own entries; refuses a clash with the arena's packages or modules, hashes
the copy, asks each plugin what it registers in a sandboxed host that sees only that copy, and
moves it to ``snapshots/<sha256>/`` (an atomic rename of a complete, checked copy); then, under
the store's lock, checks name ownership and writes the version's record (:func:`store_version`).

A failed or refused build leaves nothing: its staging directory is removed (and those of dead
arena processes at the next build), its group removed, no snapshot or record made.

``python -m arena.hosting.build PATH`` does everything but the record, in a process of its own,
and prints the result as one JSON object: what the competition server runs for each upload
(:mod:`arena.serve.pipeline`), which then stores the version under the lock itself.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import importlib.util
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.hosting import cgroups, copyout
from arena.hosting import submissions as S
from arena.hosting.epochs import sandbox_pids
from arena.hosting.names import canonical, is_builtin, skeleton
from arena.hosting.plugins import GROUP
from arena.hosting.sandbox import (
    _UIDS,
    LIBRARY_DIRS,
    HostProcess,
    Limits,
    Sandbox,
    _unreadable,
    bwrap_command,
    choose_sandbox,
    interpreter_places,
    seccomp_pipe,
    starter,
)

#: Seconds a submitted plugin may take to say what it registers.
LIST_TIME = 60.0
#: The most bytes of the builder's result line (its standard output).
RESULT_BYTES = 64 << 10
#: Bytes read from a pipe at a time.
_CHUNK = 1 << 16


@dataclass(frozen=True)
class BuildLimits:
    """What one build may take: ``time`` seconds until its result, ``memory_mb`` MiB of memory
    for all its processes together with its ``/tmp`` (which is also its scratch space's size),
    ``processes`` processes and threads, ``cores`` of CPU, an output (what is kept as the
    snapshot) of ``output_mb`` MiB and ``output_files`` files and directories, and a log of at
    most ``log_mb`` MiB written, of which the last ``log_kept_bytes`` are kept."""

    time: float = 300.0
    memory_mb: int = 1024
    processes: int = 256
    output_mb: int = 256
    output_files: int = 20_000
    log_mb: int = 64
    log_kept_bytes: int = 1 << 20
    cores: float = 1.0

    def __post_init__(self) -> None:
        if not self.time > 0:
            raise S.SubmissionError("a build's time limit must be more than 0 s")
        for name in ("memory_mb", "processes", "output_mb", "output_files", "log_mb"):
            if getattr(self, name) < 1:
                raise S.SubmissionError(f"a build's {name.replace('_', ' ')} must be at least 1")
        if self.memory_mb < 64:
            raise S.SubmissionError("a build needs at least 64 MiB of memory")
        if self.log_kept_bytes < 1 or not self.cores > 0:
            raise S.SubmissionError("a build must keep some of its log and have some CPU")

    def options(self) -> list[str]:
        """These limits as options of ``python -m arena.hosting.build`` (:func:`main`)."""
        return [f"--{name.replace('_', '-')}={getattr(self, name)}" for name in _OPTIONS]

    def line(self, limit: str) -> str:
        """The one line that says ``limit`` was reached (``time``, ``memory``, ``shortage``,
        ``processes``, ``log``, ``scratch``)."""
        return {
            "time": f"the build took longer than {self.time:g} s",
            "memory": f"the build went over its {self.memory_mb} MiB of memory",
            "shortage": "the build was killed because the machine ran out of memory (it was "
            f"under its own {self.memory_mb} MiB)",
            "processes": f"the build was refused a process: at most {self.processes}",
            "log": f"the build wrote more than {self.log_mb} MiB to its log",
            "scratch": f"the build went over its {self.memory_mb} MiB of scratch space",
        }[limit]


#: The limits ``python -m arena.hosting.build`` takes as options.
_OPTIONS = ("time", "memory_mb", "processes", "output_mb", "output_files", "log_mb")

#: What runs inside the build sandbox (argv: kind, network, the package's file name, its size).
_BUILDER = r"""
import glob, json, os, pathlib, shutil, subprocess, sys, threading
kind, network, name, size = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
py = [sys.executable, "-m", "pip", "--no-input", "--no-color", "--disable-pip-version-check"]
offline = [] if network else ["--no-index"]
def fail(text, code=3):
    print("build failed: " + text, file=sys.stderr, flush=True)
    sys.exit(code)
def run(*args):
    print("$ pip", " ".join(args), file=sys.stderr, flush=True)
    if subprocess.run([*py, *args], stdin=subprocess.DEVNULL, stdout=2).returncode:
        fail("pip " + args[0] + " failed")
os.makedirs("/tmp/wheels")
if kind == "directory":
    source = "/tmp/src"
    shutil.copytree("/in/src", source, symlinks=True)
else:  # its bytes come on standard input
    source = os.path.join("/tmp/wheels" if kind == "wheel" else "/tmp", name)
    with open(source, "wb") as out:
        left = size
        while left:
            chunk = sys.stdin.buffer.read(min(left, 1 << 20))
            if not chunk:
                fail("the package ended early")
            out.write(chunk)
            left -= len(chunk)
def arena_gone():  # the arena holds standard input open until it is done with the build
    sys.stdin.buffer.read()
    os._exit(70)  # it died: so does the build (its init ends with this process, and with it
                  # every process of the sandbox)
arena = threading.Thread(target=arena_gone, daemon=True)
arena.start()
if kind == "wheel":
    wheel = source
else:
    isolation = ["--only-binary", ":all:"] if network else ["--no-build-isolation"]
    run("wheel", "-v", "--no-deps", *offline, *isolation, "-w", "/tmp/wheels", source)
    built = glob.glob("/tmp/wheels/*.whl")
    if len(built) != 1:
        fail("expected one wheel, got " + repr(built))
    wheel = built[0]
run("install", "--no-deps", "--no-compile", "--no-index", "--target", "/tmp/out", wheel)
info = glob.glob("/tmp/out/*.dist-info")
if len(info) != 1:
    fail("expected one *.dist-info, got " + repr(info))
import importlib.metadata as md
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
dist = md.PathDistribution(pathlib.Path(info[0]))
missing = []
for text in dist.requires or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        have = md.version(req.name)
    except md.PackageNotFoundError:
        have = None
    if have is None or not req.specifier.contains(have, prereleases=True):
        missing.append(str(req))
if missing and not network:
    fail("dependencies not in the arena's environment: " + ", ".join(missing), 4)
if missing:
    run("install", "--only-binary", ":all:", "--no-compile", "--target", "/tmp/out", *missing)
result = {"main": os.path.basename(info[0]), "name": dist.metadata["Name"] or ""}
sys.stdout.write(json.dumps(result) + "\n")
sys.stdout.flush()
arena.join()  # until the arena has copied /tmp/out (it then ends the build)
"""


@dataclass(frozen=True)
class Built:
    """A build made into a snapshot (not yet a version): its distribution, the package's own
    version, the snapshot's content hash, what each plugin registers, the build's log, whether
    the snapshot was there already, and how its limits were enforced here."""

    distribution: str
    package_version: str
    content: str
    plugins: dict[str, Any]
    log: str
    reused: bool
    enforcement: str
    degraded: bool = False

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``python -m arena.hosting.build`` prints)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Built:
        """The :class:`Built` :meth:`to_json` gave."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Submitted:
    """What :func:`submit` stored, and how long it took."""

    record: S.Record
    seconds: float
    reused: bool  # the snapshot was there already (the same content was submitted before)
    enforcement: str = ""  # how the build ran and which of its limits held (:func:`enforcement`)
    degraded: bool = False  # less than everything held (no control group, or the arena's uid)


def _environment_dirs() -> list[str]:
    """The interpreter and the arena's Python environment: what a build needs to run pip."""
    places = interpreter_places()
    places.add(sys.base_prefix)
    system = [p for p in LIBRARY_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in places if os.path.exists(p)}, key=len):
        if path in ("/", "/usr") or any(
            path == k or path.startswith(k + "/") for k in [*kept, *system]
        ):
            continue
        kept.append(path)
    return kept


def _kind(path: Path) -> str:
    """``directory`` (a project), ``wheel`` or ``sdist``; :class:`SubmissionError` otherwise."""
    if path.is_dir():
        if not any((path / name).exists() for name in ("pyproject.toml", "setup.py", "setup.cfg")):
            raise S.SubmissionError(f"{path} has no pyproject.toml, setup.py or setup.cfg")
        return "directory"
    if path.suffix == ".whl":
        return "wheel"
    if path.name.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")):
        return "sdist"
    raise S.SubmissionError(f"{path} is not a wheel, a source package or a project directory")


#: What a failed offline build says to do about dependencies the arena's environment lacks.
MISSING_HINT = "arena submit --network fetches them as wheels"
#: The line of a failed build that names those dependencies.
_MISSING = "build failed: dependencies not in the arena's environment"


def _environment(network: bool) -> dict[str, str]:
    """The build's environment variables."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "SOURCE_DATE_EPOCH": "315532800",
    }
    if network:  # the operator's index and certificates (a TLS-inspecting proxy's CA), if any
        system_certs = "/etc/ssl/certs/ca-certificates.crt"
        if os.path.exists(system_certs):
            env["PIP_CERT"] = system_certs
        for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT"):
            if os.environ.get(key):
                env[key] = os.environ[key]
    return env


def enforcement(box: Sandbox, limits: BuildLimits) -> tuple[str, bool]:
    """One line on how a build runs here and which of its limits hold, and whether that is less
    than everything (no control group, or the arena's own kernel uid)."""
    drop_reason = _drop_reason(box)
    who = (
        "a kernel uid of its own"
        if drop_reason is None
        else f"the arena's kernel uid ({drop_reason})"
    )
    if box.hierarchy is not None:
        held = (
            f"memory {limits.memory_mb} MiB with its /tmp, {limits.processes} processes and "
            f"{limits.cores:g} core in a control group ({box.hierarchy.describe()})"
        )
        frozen = "frozen" if box.hierarchy.freezes else "not frozen (no freezer)"
    else:
        held = (
            f"{limits.memory_mb} MiB of address space per process and a {limits.memory_mb} "
            f"MiB /tmp, {limits.processes} processes by RLIMIT_NPROC (not for root), CPU not "
            f"limited (no control groups: {box.cgroup_reason})"
        )
        frozen = "not frozen (no control group)"
    return (
        f"build sandbox as {who}; {held}; {limits.time:g} s, output {limits.output_mb} MiB and "
        f"{limits.output_files} files, log {limits.log_mb} MiB; {frozen} while its output is "
        "copied",
        drop_reason is not None or box.hierarchy is None,
    )


def _drop_reason(box: Sandbox) -> str | None:
    """Why the build cannot run as a kernel uid of its own here (``None``: it can)."""
    if not box.drops:
        return box.drop_reason or "sandboxes cannot drop to a uid of their own here"
    unreadable = _unreadable(_environment_dirs())
    if unreadable is not None:
        return f"{unreadable} may not be read by other users (chmod o+rX)"
    return None


class _Log:
    """The build's log as it comes: how much was written, and the last ``keep`` bytes."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.written = 0
        self.kept = bytearray()

    def add(self, chunk: bytes) -> None:
        self.written += len(chunk)
        self.kept += chunk
        if len(self.kept) > 2 * self.keep:
            del self.kept[: len(self.kept) - self.keep]

    def text(self) -> str:
        data = bytes(self.kept[-self.keep :])
        cut = self.written - len(data)
        head = f"[the first {cut} bytes of the log are not kept]\n" if cut else ""
        return head + data.decode("utf-8", "replace")


def with_line(log: str, line: str) -> str:
    """``log`` with ``line`` (a refusal) as its last line."""
    return f"{log}{'' if not log or log.endswith(chr(10)) else chr(10)}{line}\n"


class _Build:
    """One sandboxed build of a package: started by the constructor, watched by
    :meth:`watch`, its output copied by :meth:`copy_output`, ended by :meth:`close`."""

    def __init__(
        self, given: Path, kind: str, network: bool, limits: BuildLimits, box: Sandbox
    ) -> None:
        self.limits = limits
        self.log = _Log(limits.log_kept_bytes)
        self.result = bytearray()
        self.package: int | None = None
        self.left = 0
        group = None
        uid = None
        seccomp_fd = None
        try:
            if box.hierarchy is not None:
                group = cgroups.BotGroup(
                    box.hierarchy, limits.memory_mb << 20, limits.processes, limits.cores
                )
            if _drop_reason(box) is None:
                uid = _UIDS.acquire()
            if kind == "directory":
                shown = [(str(given), "/in/src")]
            else:  # read by the arena, handed over as bytes: never a file of the machine
                self.package = os.open(given, os.O_RDONLY | os.O_CLOEXEC)
                self.left = os.fstat(self.package).st_size
                shown = []
            shown = [(path, path) for path in _environment_dirs()] + shown
            seccomp_fd = seccomp_pipe()
            # without a control group, each process is limited as a host limits itself
            fallback = [] if group is not None else [
                "/bin/sh", "-c",
                f"ulimit -v {limits.memory_mb << 10} 2>/dev/null; "
                f"ulimit -u {limits.processes} 2>/dev/null; exec \"$@\"",
                "sh",
            ]  # fmt: skip
            command = [
                *starter(group),
                *fallback,
                *bwrap_command(
                    limits.memory_mb, shown, network=network, seccomp_fd=seccomp_fd, uid=uid
                ),
                sys.executable, "-I", "-c", _BUILDER,
                kind, "1" if network else "0", given.name, str(self.left),
            ]  # fmt: skip
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=_environment(network), start_new_session=True, cwd="/",
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )  # fmt: skip
        except BaseException:
            if group is not None:
                group.close()
            if uid is not None:
                _UIDS.release(uid)
            if self.package is not None:
                os.close(self.package)
            raise
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        self.host = HostProcess(process, group, uid)

    def watch(self, deadline: float) -> tuple[dict[str, Any] | None, str | None, int | None]:
        """Feed the package, read the result and the log, and watch the limits until the
        builder says its result, ends, or goes over a limit: ``(result, limit, exit code)``,
        ``limit`` naming the limit reached (see :meth:`BuildLimits.line`), ``result`` the
        builder's parsed line (or ``{}`` when it was not one JSON object)."""
        process = self.host.process
        assert process.stdin and process.stdout and process.stderr
        selector = selectors.DefaultSelector()
        for stream, what in ((process.stdout, "out"), (process.stderr, "err")):
            os.set_blocking(stream.fileno(), False)
            selector.register(stream, selectors.EVENT_READ, what)
        feeding = b""
        if self.left:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin, selectors.EVENT_WRITE, "in")
        open_streams = 2
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    return None, "time", None
                for key, _ in selector.select(min(0.1, deadline - now)):
                    if key.data == "in":
                        if not feeding:
                            assert self.package is not None
                            feeding = os.read(self.package, min(_CHUNK, self.left))
                            if not feeding:  # the file shrank: the builder says it ended early
                                selector.unregister(key.fileobj)
                                process.stdin.close()
                                continue
                        try:
                            written = os.write(key.fd, feeding)
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # the builder ended: its exit says why
                            selector.unregister(key.fileobj)
                            continue
                        feeding, self.left = feeding[written:], self.left - written
                        if not self.left:
                            selector.unregister(key.fileobj)
                        continue
                    try:
                        chunk = os.read(key.fd, _CHUNK)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(key.fileobj)
                        open_streams -= 1
                    elif key.data == "out":
                        self.result += chunk
                    else:
                        self.log.add(chunk)
                hit = self.host.limit_hit()
                if hit is not None:
                    return None, hit, None
                if self.log.written > self.limits.log_mb << 20:
                    return None, "log", None
                if b"\n" in self.result:
                    return _parse_result(bytes(self.result.split(b"\n", 1)[0])), None, None
                if len(self.result) > RESULT_BYTES:
                    return {}, None, None
                if open_streams == 0 or process.poll() is not None:
                    return self._ended(deadline)
        finally:
            selector.close()

    def _ended(self, deadline: float) -> tuple[dict[str, Any] | None, str | None, int | None]:
        """The builder ended without a result: what it wrote last, and its exit code."""
        process = self.host.process
        try:
            code = process.wait(timeout=max(0.1, min(5.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            code = None
        assert process.stdout and process.stderr
        for stream, sink in ((process.stderr, self.log.add), (process.stdout, self.result.extend)):
            for _ in range(64):  # what is left in the pipe, bounded
                try:
                    chunk = os.read(stream.fileno(), _CHUNK)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                sink(chunk)
        hit = self.host.limit_hit()
        if hit is not None:
            return None, hit, code
        if self.log.written > self.limits.log_mb << 20:
            return None, "log", code
        return None, None, code

    def copy_output(self, target: Path) -> None:
        """Copy the sandbox's ``/tmp/out`` into ``target`` (:mod:`arena.hosting.copyout`), with
        the build frozen where its group can be."""
        self.host.freeze()
        ended = S.SubmissionError("the build ended before its output could be read")
        init = self._sandbox_init()
        if init is None:
            raise ended
        try:
            source = copyout.open_below(f"/proc/{init}/root", "tmp", "out")
        except FileNotFoundError:
            raise ended from None
        except copyout.CopyError as exc:  # a link or a file made in its place
            raise S.SubmissionError(f"the build's output {exc}") from None
        if self._sandbox_init() != init:  # it ended, and its pid went to another process
            os.close(source)
            raise ended
        try:
            copyout.copy_tree(
                source,
                target,
                copyout.CopyLimits(self.limits.output_files, self.limits.output_mb << 20),
                "the build's output",
            )
        finally:
            os.close(source)

    def _sandbox_init(self) -> int | None:
        """The first process of the build's sandbox (bubblewrap's init, pid 1 inside): its
        root is the sandbox's file system."""
        group = self.host.group
        found = group.pids() if group is not None else cgroups.descendants(self.host.process.pid)
        return next((pid for pid, inner in sandbox_pids(found).items() if inner == 1), None)

    def close(self) -> None:
        """Kill whatever is left of the build, remove its group, give its uid back."""
        self.host.close()
        for stream in (self.host.process.stdin, self.host.process.stdout,
                       self.host.process.stderr):  # fmt: skip
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self.package is not None:
            os.close(self.package)
            self.package = None


def _parse_result(line: bytes) -> dict[str, Any]:
    """The builder's result line as a dict of strings (``{}`` when it is not one)."""
    try:
        data = json.loads(line)
    except ValueError:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        return {}
    return data


def _failure(path: Path, log: str, code: int | None, limits: BuildLimits, hint: str) -> str:
    """The one line of a build that ended without a result."""
    lines = [x for x in log.splitlines() if x.strip()]
    failed = [x for x in lines if x.startswith("build failed:")]
    last = (failed or lines or [f"exit code {code}"])[-1]
    if "No space left on device" in log:
        return limits.line("scratch")
    if last.startswith(_MISSING):
        last = f"{last} ({hint})"
    return f"the build of {path.name} failed: {last}"


def _staging(store: S.Store) -> Path:
    """A new staging directory of this process (``staging/PID-RANDOM``), readable by the arena
    alone, after removing those of arena processes that are gone."""
    base = store.base / "staging"
    base.mkdir(parents=True, exist_ok=True)
    for entry in base.iterdir():
        pid = entry.name.partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            _remove(entry)
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))


def _remove(directory: Path) -> None:
    """Remove a staging directory (its copies are read-only)."""
    with contextlib.suppress(OSError):
        S.make_writable(directory)
    shutil.rmtree(directory, ignore_errors=True)


def _check(snapshot: Path, result: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
    """The build's distribution, its version and its ``arena.bots`` entry points (name ->
    object), read from its metadata with the strict readers of :mod:`.submissions`;
    :class:`SubmissionError` (one line) for none, a name the builder and the metadata directory
    disagree on, or a clash of its top-level names with the arena's packages or the modules of
    its environment."""
    main = result.get("main", "")
    parsed = S.dist_info(main)
    if parsed is None or not (snapshot / main).is_dir() or (snapshot / main).is_symlink():
        raise S.SubmissionError("the build did not say which package it built")
    name = result.get("name", "")
    if not S.DISTRIBUTION_NAME.fullmatch(name) or canonical(name) != canonical(parsed[0]):
        raise S.SubmissionError(
            f"the build's metadata names its distribution {name[:100]!r}, its directory {main!r}"
        )
    if is_builtin(name):
        raise S.SubmissionError(f"a submission may not call its distribution {name!r}")
    plugins = S.read_entry_points(snapshot / main / "entry_points.txt", GROUP)
    if not plugins:
        raise S.SubmissionError(f"{name} has no {GROUP!r} entry point: it registers no bot")
    clashes = sorted(
        n for n in S.top_level_names(snapshot)
        if n in S.ARENA_PACKAGES or n in sys.stdlib_module_names or _importable(n)
    )  # fmt: skip
    installed = [
        n for n in clashes if n not in S.ARENA_PACKAGES and n not in sys.stdlib_module_names
    ]
    if installed and len(installed) == len(clashes) and _installed(name):
        raise S.SubmissionError(
            f"{name} is installed in the arena's environment as well (its top-level name "
            f"{installed[0]!r} is taken by that copy): uninstall it first, `pip uninstall {name}`, "
            "then submit it again"
        )
    if clashes:
        raise S.SubmissionError(
            f"{name} is refused: its top-level name {clashes[0]!r} is a package of the arena or "
            "of its environment (rename it)"
        )
    if (snapshot / S.MAIN_FILE).exists() or (snapshot / S.MAIN_FILE).is_symlink():
        raise S.SubmissionError(f"the build's output may not hold {S.MAIN_FILE} (the arena's note)")
    return name, parsed[1], plugins


def _installed(distribution: str) -> bool:
    """Whether a distribution called ``distribution`` is installed in the arena's environment
    (an author's own ``pip install -e`` of the package submitted, say)."""
    try:
        importlib.metadata.distribution(distribution)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return True


def _importable(name: str) -> bool:
    """Whether ``name`` is a top-level module of the arena's environment (found, not run)."""
    if not name.isidentifier():
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return True


def _list_plugins(snapshot: Path, content: str, plugins: dict[str, str]) -> dict[str, Any]:
    """Ask each plugin of the snapshot (or of its checked copy, before it is one), in a
    sandboxed host that sees that directory and no other, what it registers (as the catalog
    asks an installed plugin)."""
    from arena.hosting.catalog import LIMITS, host_listing, listing_claims
    from arena.hosting.plugins import PluginInfo

    box = replace(choose_sandbox("bwrap"), limits=Limits())
    out: dict[str, Any] = {}
    earlier = (0, 0)  # the bots and deck sets its earlier plugins registered: one limit a package
    for entry_point, value in plugins.items():
        ref = S.submission_ref(content, entry_point)
        argv = [sys.executable, "-m", "arena.hosting.host", "--plugin", ref]
        inside = box.submission_path(str(snapshot))
        host = box.launch([*argv, "--submission", inside, "--list"], [(str(snapshot), inside)])
        try:
            listing, failure = host_listing(host.process, time.monotonic() + LIST_TIME, LIST_TIME)
        finally:
            host.close()
        if listing is None or listing.get("error"):
            problem = failure or str(listing.get("error") if listing else "")
            raise S.SubmissionError(f"plugin {entry_point!r} failed: {problem[: LIMITS.error]}")
        try:
            bots, decks = listing_claims(PluginInfo(ref, value, "", ""), listing, earlier)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise S.SubmissionError(f"plugin {entry_point!r}: {exc}") from None
        if not listing.get("bots"):
            raise S.SubmissionError(f"plugin {entry_point!r} registers no bot")
        out[entry_point] = {"value": value, "listing": listing}
        earlier = (earlier[0] + len(bots), earlier[1] + len(decks))
    return out


def _check_names(distribution: str, plugins: dict[str, Any], store: S.Store) -> None:
    """A bot name belongs to the distribution that claimed it first: refuse names the arena's
    own bots, an installed package or another submitted distribution already registers, and
    new names that look like one of theirs (:func:`~arena.hosting.names.skeleton`); a name the
    distribution registered in an earlier version stays its own."""
    from arena.hosting.catalog import load_catalog

    catalog = load_catalog(choose_sandbox("bwrap"), store=store)
    mine = canonical(distribution)
    taken = {canonical(n): (n, e.distribution) for n, e in catalog.bots.items()}
    kept: set[str] = set()
    for record in store.records():
        if canonical(record.distribution) != mine:
            taken.update({canonical(n): (n, record.distribution) for n in record.bots})
        else:
            kept.update(canonical(n) for n in record.bots)
    looks: dict[str, tuple[str, str]] = {}
    for other, owner in taken.values():
        if canonical(owner) != mine:
            looks.setdefault(skeleton(other), (other, owner))
    for plugin in plugins.values():
        for bot in plugin["listing"]["bots"]:
            name = str(bot["name"])
            found = taken.get(canonical(name))
            if found is not None and canonical(found[1]) != mine:
                raise S.SubmissionError(
                    f"bot {name!r} of {distribution} is refused: the name belongs to "
                    f"{found[1]} (choose another name)"
                )
            similar = None if canonical(name) in kept else looks.get(skeleton(name))
            if similar is not None:
                raise S.SubmissionError(
                    f"bot {name!r} of {distribution} is refused: it can be mistaken for "
                    f"{similar[0]!r} of {similar[1]} (choose another name)"
                )


def build(
    path: str | os.PathLike[str],
    store: S.Store | None = None,
    limits: BuildLimits | None = None,
    network: bool = False,
    missing_hint: str = MISSING_HINT,
) -> Built:
    """Build ``path`` (a wheel, a source package or a project directory) in the sandbox and
    keep it as a snapshot of ``store`` (see the module docstring), without storing a version;
    :class:`SubmissionError` (one line, with the build's log, whose last line it is) if it
    cannot be. ``missing_hint`` is what the error says to do about dependencies the arena's
    environment lacks (by default: submit with ``--network``)."""
    store = store or S.Store()
    limits = limits or BuildLimits()
    given = Path(path).absolute()
    if not given.exists():
        raise S.SubmissionError(f"no such file or directory: {given}")
    kind = _kind(given)
    box = choose_sandbox("bwrap")  # a submission is never built or run without the sandbox
    if network or importlib.util.find_spec("setuptools") is None:
        network = True  # no backend of our own: build isolation, wheels fetched
    staging = _staging(store)
    log = ""
    try:
        copy = staging / "out"
        job = _Build(given, kind, network, limits, box)
        try:
            result, limit, code = job.watch(time.monotonic() + limits.time)
            log = job.log.text()
            if limit is not None:
                raise S.SubmissionError(limits.line(limit))
            if result is None:
                raise S.SubmissionError(_failure(given, log, code, limits, missing_hint))
            if not result:
                raise S.SubmissionError("the build's result is not one line of JSON")
            job.copy_output(copy)
        except copyout.CopyError as exc:
            raise S.SubmissionError(str(exc)) from None
        finally:
            job.close()
        distribution, package_version, plugins = _check(copy, result)
        (copy / S.MAIN_FILE).write_text(str(result["main"]))
        os.chmod(copy / S.MAIN_FILE, 0o444)
        os.chmod(copy, 0o755)  # moved while its owner may write it (moving a directory needs that)
        content = S.content_hash(copy)
        listed = _list_plugins(copy, content, plugins)
        snapshot = store.snapshot(content)
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(copy, snapshot)
            reused = False
        except OSError:
            if not snapshot.is_dir():  # not the same content submitted before or at once
                raise
            reused = True
        if not reused:
            os.chmod(snapshot, 0o555)
    except S.SubmissionError as exc:
        exc.log = with_line(exc.log or log, str(exc))
        raise
    finally:
        _remove(staging)
    said, degraded = enforcement(box, limits)
    return Built(distribution, package_version, content, listed, log, reused, said, degraded)


def store_version(
    built: Built, store: S.Store | None = None, claim: Callable[[str], None] | None = None
) -> S.Record:
    """Store ``built`` as the next version of its distribution, under the store's lock: its
    bot names checked against every other distribution's, ``claim`` (if given) called with the
    canonical distribution name (whatever it raises stops it: a competition server's check that
    the distribution is the submitter's), the log and the record written.
    :class:`SubmissionError` (one line, with the build's log) if it is refused."""
    store = store or S.Store()
    try:
        with store.lock():
            _check_names(built.distribution, built.plugins, store)
            if claim is not None:
                claim(canonical(built.distribution))
            version = store.next_version(built.distribution)
            logs = store.base / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            log_path = logs / f"{canonical(built.distribution)}-{version}.log"
            log_path.write_text(built.log)
            record = S.Record(
                distribution=built.distribution,
                version=version,
                content=built.content,
                package_version=built.package_version,
                created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                plugins=built.plugins,
                log=str(log_path),
            )
            store.write(record)
    except ArenaError as exc:  # the names, or the claim, refused it
        raise S.SubmissionError(str(exc), log=with_line(built.log, str(exc))) from exc
    return record


def submit(
    path: str | os.PathLike[str],
    store: S.Store | None = None,
    network: bool = False,
    limits: BuildLimits | None = None,
    claim: Callable[[str], None] | None = None,
    missing_hint: str = MISSING_HINT,
) -> Submitted:
    """Build ``path`` (:func:`build`) and store it as the next version of its distribution
    (:func:`store_version`); :class:`SubmissionError` (one line) if it cannot be."""
    begun = time.perf_counter()
    store = store or S.Store()
    built = build(path, store, limits, network, missing_hint)
    record = store_version(built, store, claim)
    seconds = time.perf_counter() - begun
    return Submitted(record, seconds, built.reused, built.enforcement, built.degraded)


def read_log(record: S.Record) -> str:
    """The build log of ``record`` ('' when it is gone)."""
    try:
        return open(record.log, encoding="utf-8", errors="replace").read()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.hosting.build PATH [options]``: :func:`build` in a process of its own
    (the competition server's builds), printing one JSON object: ``{"built": ...}``
    (:meth:`Built.to_json`) or ``{"error": LINE, "log": LOG}``. The version is not stored: the
    caller does that (:func:`store_version`)."""
    parser = argparse.ArgumentParser(prog="python -m arena.hosting.build")
    parser.add_argument("path")
    defaults = BuildLimits()
    for name in _OPTIONS:
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=float if name == "time" else int,
            default=getattr(defaults, name),
        )
    parser.add_argument("--network", action="store_true")
    parser.add_argument("--missing-hint", default=MISSING_HINT)
    args = parser.parse_args(argv)
    # stopped (the server stops, or its time is up): end the build and leave nothing behind
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        limits = BuildLimits(**{name: getattr(args, name) for name in _OPTIONS})
        answer: dict[str, Any] = {
            "built": build(args.path, S.Store(), limits, args.network, args.missing_hint).to_json()
        }
    except S.SubmissionError as exc:
        answer = {"error": str(exc), "log": exc.log}
    except ArenaError as exc:
        answer = {"error": str(exc), "log": ""}
    sys.stdout.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
