"""How bot hosts are started: inside a bubblewrap sandbox where the platform has one, else as plain
subprocesses (see ``docs/sandbox.md`` for what each protects against).

In the sandbox a host has no network, sees no other process, gets a private ``/tmp``, sees the
whole file system read-only, and does not see the working directory, the home directory or the
database's directory at all: only the Python environment and the installed packages' own
directories inside them are put back (read-only). The one writable place shared between hosts is
numba's compilation cache (shared with the referee), so compiled bots start fast.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from arena.errors import ArenaError

#: Environment variables a host inherits; everything else (``ARENA_DB`` with its password, tokens,
#: proxies) stays with the referee.
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "PYTHONHASHSEED")

MODES = ("auto", "bwrap", "none")


class SandboxError(ArenaError):
    """The sandbox asked for cannot be used here."""


def cache_dir() -> Path:
    """The arena's per-user cache directory (``$XDG_CACHE_HOME/loveletter-arena``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loveletter-arena"


@dataclass(frozen=True)
class Sandbox:
    """A way to start bot hosts: ``kind`` is ``"bwrap"`` or ``"none"``.

    ``hidden`` are directories a sandboxed host must not see (the working directory, the home
    directory, the database's directory); ``warning`` says why a weaker sandbox was chosen.
    """

    kind: str
    hidden: tuple[str, ...] = ()
    warning: str | None = None
    exposed: tuple[str, ...] = field(default=(), repr=False)

    @property
    def isolated(self) -> bool:
        """Whether hosts run in the bubblewrap sandbox."""
        return self.kind == "bwrap"

    def environment(self) -> dict[str, str]:
        """The environment a host starts with."""
        env = {k: os.environ[k] for k in ENV_KEEP if k in os.environ}
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if self.isolated:
            env["HOME"] = "/tmp"
            env["NUMBA_CACHE_DIR"] = str(_numba_cache())
        return env

    def command(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` (a host command) under this sandbox."""
        if not self.isolated:
            return list(argv)
        cmd = [
            "bwrap",
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--unshare-all",
            "--new-session",
            "--die-with-parent",
        ]  # fmt: skip
        for path in self.hidden:
            cmd += ["--tmpfs", path]
        for path in self.exposed:
            cmd += ["--ro-bind", path, path]
        cache = str(_numba_cache())
        cmd += ["--bind", cache, cache, "--chdir", "/tmp", *argv]
        return cmd

    def working_directory(self) -> str:
        """Where a host process starts (an empty temporary directory outside the sandbox)."""
        return "/" if self.isolated else _scratch()


@lru_cache(maxsize=1)
def _scratch() -> str:
    return tempfile.mkdtemp(prefix="arena-host-")


def _numba_cache() -> Path:
    """numba's cache, shared with the referee's process (see :mod:`arena.engine.jitcache`)."""
    from arena.engine.jitcache import cache_base

    path = cache_base()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _inside(path: str, dirs: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _package_locations() -> set[str]:
    """Directories of every installed top-level package and module (found, not imported), the
    site-packages directories, and the interpreter's prefixes: what a host needs to import."""
    places = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    places.add(os.path.dirname(os.path.realpath(sys.executable)))
    places.update(site.getsitepackages())
    places.update(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    names: set[str] = set()
    for dist in md.distributions():
        text = dist.read_text("top_level.txt")
        if text:
            names.update(line.strip() for line in text.splitlines() if line.strip())
    for name in sorted(names):
        if not name.isidentifier():
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            places.update(spec.submodule_search_locations)
        elif spec.origin and os.path.isabs(spec.origin):
            places.add(spec.origin)
    return {os.path.realpath(p) if os.path.exists(p) else p for p in places if p}


def _hidden_dirs(extra: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    dirs = {os.path.realpath(os.getcwd()), os.path.realpath(os.path.expanduser("~"))}
    dirs.update(os.path.realpath(os.fspath(p)) for p in extra)
    return tuple(sorted(d for d in dirs if d not in ("/", "/tmp") and os.path.isdir(d)))


@lru_cache(maxsize=8)
def _bwrap_error() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if probe.returncode != 0:
        return "bwrap does not work here: " + probe.stderr.decode(errors="replace").strip()
    return None


def choose_sandbox(mode: str = "auto", hide: Iterable[str | os.PathLike[str]] = ()) -> Sandbox:
    """The sandbox for ``mode``: ``auto`` (bubblewrap when it works, else plain subprocesses with
    a warning), ``bwrap`` (required; :class:`SandboxError` if it does not work) or ``none``.

    ``hide`` adds directories the hosts must not see (the database's directory).
    """
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox {mode!r} (choose from {', '.join(MODES)})")
    if mode == "none":
        return Sandbox("none")
    error = _bwrap_error()
    if error is not None:
        if mode == "bwrap":
            raise SandboxError(error)
        return Sandbox(
            "none",
            warning=f"{error}; bots run as plain subprocesses without a sandbox "
            "(see docs/sandbox.md)",
        )
    hidden = _hidden_dirs(hide)
    covered = (*hidden, "/tmp")  # /tmp is replaced by a private one
    exposed: list[str] = []
    for path in sorted(p for p in _package_locations() if _inside(p, covered)):
        if not _inside(path, exposed):
            exposed.append(path)
    return Sandbox("bwrap", hidden, exposed=tuple(exposed))
