"""The submissions store: strangers' bots, each version a read-only snapshot of its installed
files, outside the arena's environment (``docs/sandbox.md``, "Submissions").

``arena submit`` (:mod:`arena.hosting.build`) builds and installs a package inside the sandbox
into a directory of its own; this module keeps the result. The store is a directory
(:func:`root`: ``$ARENA_SUBMISSIONS``, else one per arena installation,
``$XDG_DATA_HOME/loveletter-arena/environments/<environment>/submissions``, so that one Python
environment's submissions are not another's; data the operator keeps, not a cache that may be
wiped, and never inside the Python environment, the checkout or anything a host is shown)
holding:

- ``snapshots/<sha256>/``: the installed files of one build, named by the hash of their names and
  bytes (:func:`content_hash`), made read-only and never changed after they are moved there;
- ``records/<distribution>/<n>.json``: one small record per version (distribution, version
  number ``n`` = 1, 2, ... per distribution, content hash, when, its plugins with what each
  registers, the build log, withdrawn or not), written atomically under a lock (``fcntl`` on
  ``lock``) so two submits never take the same number;
- ``logs/<distribution>-<n>.log``: the build's output.

Nothing here imports, or puts on any path, a submission's code, and nothing parses its metadata
but small strict readers of what the arena needs: the distribution and version from its
``*.dist-info`` directory's name (:func:`dist_info`), its ``arena.bots`` entry points from that
directory's ``entry_points.txt`` (:func:`read_entry_points`), its top-level names from the
snapshot's own entries (:func:`top_level_names`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, printable
from arena.hosting.names import canonical

#: The prefix of a plugin reference that names a submission: ``@<sha256>:<entry point>``. A
#: distribution's name never holds ``@`` or ``:``, so it cannot be mistaken for an installed one.
REF_PREFIX = "@"
#: Top-level names a submission may not ship: the arena's own packages.
ARENA_PACKAGES = ("arena", "bots", "solver", "leaderboard")
_HASH = re.compile(r"^[0-9a-f]{64}$")
#: The file of a snapshot naming the submission's own ``*.dist-info`` (written by the arena).
MAIN_FILE = ".arena-distribution"


class SubmissionError(ArenaError):
    """A submission that cannot be built, stored or found (one line); ``log`` is what its
    build wrote, where it got that far ('' otherwise)."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


def _data_home() -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return Path(base)


def environment_key(prefix: str | None = None) -> str:
    """The name of the arena installation whose Python environment is at ``prefix`` (default
    ``sys.prefix``): the environment directory's name and the first 12 hex digits of the
    sha256 of its real path, e.g. ``.venv-3f2a9c81d0e4``."""
    real = os.path.realpath(prefix if prefix is not None else sys.prefix)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real.rstrip("/")) or "root")
    return f"{name[:40]}-{digest}"


def root() -> Path:
    """The store's directory: ``$ARENA_SUBMISSIONS``, else one per arena installation (per
    Python environment): ``$XDG_DATA_HOME/loveletter-arena/environments/<key>/submissions``
    (``~/.local/share`` when unset; ``<key>`` is :func:`environment_key`). Never inside the
    environment itself, which the sandbox shows to every bot."""
    given = os.environ.get("ARENA_SUBMISSIONS")
    if given:
        return Path(given).absolute()
    return _data_home() / "loveletter-arena" / "environments" / environment_key() / "submissions"


def legacy_root() -> Path:
    """Where every environment of a user kept its submissions before the store was per
    installation: ``$XDG_DATA_HOME/loveletter-arena/submissions``."""
    return _data_home() / "loveletter-arena" / "submissions"


def legacy_note() -> str | None:
    """What to tell the operator of a store of the old per-user kind that holds submissions
    this installation no longer reads (``None`` when there is none, or it is the one in use):
    where it is and how to keep using it here."""
    old = legacy_root()
    if os.environ.get("ARENA_SUBMISSIONS") or not any((old / "records").glob("*/*.json")):
        return None
    return (
        f"submissions made before each arena installation had its own store are in {old}, "
        f"which this one no longer reads; to keep them here, move it: mv {old} {root()} "
        f"(or set ARENA_SUBMISSIONS={old})"
    )


def submission_ref(content: str, entry_point: str) -> str:
    """The plugin reference of entry point ``entry_point`` of the snapshot ``content``."""
    return f"{REF_PREFIX}{content}:{entry_point}"


def parse_ref(ref: str) -> tuple[str, str] | None:
    """``(content hash, entry point)`` of a submission's plugin reference, else ``None``."""
    if not ref.startswith(REF_PREFIX):
        return None
    content, colon, entry_point = ref[1:].partition(":")
    if not colon or not _HASH.match(content):
        raise SubmissionError(f"bad submission reference {ref!r}")
    return content, entry_point


def snapshot_dir(content: str, base: Path | None = None) -> Path:
    """Where the snapshot ``content`` lives."""
    if not _HASH.match(content):
        raise SubmissionError(f"bad content hash {content!r}")
    return (base or root()) / "snapshots" / content


def content_hash(directory: Path) -> str:
    """The sha256 of every file's relative name and bytes under ``directory`` (links by their
    target), in sorted order: what names a snapshot."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*"), key=lambda p: p.relative_to(directory).as_posix()):
        relative = path.relative_to(directory).as_posix()
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            digest.update(f"L\0{relative}\0{os.readlink(path)}\0".encode())
        elif stat.S_ISREG(info.st_mode):
            digest.update(f"F\0{relative}\0{info.st_size}\0".encode())
            with path.open("rb") as stream:
                for chunk in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(chunk)
        elif stat.S_ISDIR(info.st_mode):
            digest.update(f"D\0{relative}\0".encode())
    return digest.hexdigest()


def make_writable(directory: Path) -> None:
    """Give the owner write permission again (to remove a snapshot or a staging directory)."""
    if not directory.exists():
        return
    directory.chmod(stat.S_IMODE(directory.stat().st_mode) | 0o700)
    for path in directory.rglob("*"):
        if not path.is_symlink():
            path.chmod(stat.S_IMODE(path.lstat().st_mode) | 0o600 | (0o100 if path.is_dir() else 0))


#: A ``*.dist-info`` directory's name: the distribution's name (escaped as a wheel escapes it:
#: letters, digits, ``.`` and ``_``) and its version.
DIST_INFO = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._]{0,98}[A-Za-z0-9])?)"
    r"-(?P<version>[A-Za-z0-9](?:[A-Za-z0-9.!+_]{0,62}[A-Za-z0-9])?)\.dist-info"
)
#: A distribution's name as its metadata gives it (``Name:``).
DISTRIBUTION_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")
#: The most bytes of an ``entry_points.txt`` the arena reads.
ENTRY_POINTS_BYTES = 64 << 10
_IDENTIFIERS = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_ENTRY_POINT = re.compile(
    rf"(?P<name>[A-Za-z0-9_](?:[A-Za-z0-9_.+-]{{0,98}}[A-Za-z0-9_])?)\s*=\s*"
    rf"(?P<value>{_IDENTIFIERS}(?::{_IDENTIFIERS})?)"
)


def dist_info(name: str) -> tuple[str, str] | None:
    """``(distribution, version)`` named by the ``*.dist-info`` directory ``name``, else
    ``None``."""
    found = DIST_INFO.fullmatch(name)
    return (found["name"], found["version"]) if found else None


def read_entry_points(path: Path, group: str) -> dict[str, str]:
    """The entry points of ``group`` (name -> ``module[:object]``) in the ``entry_points.txt``
    at ``path``, read by a small strict parser (never a link, at most
    :data:`ENTRY_POINTS_BYTES`, UTF-8): in that group's section, every line that is not blank or
    a comment must be ``NAME = MODULE[:OBJECT]``, each name once; other sections are skipped.
    :class:`SubmissionError` (one line) for anything else. Nothing is imported."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SubmissionError(f"cannot read its entry_points.txt: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SubmissionError("its entry_points.txt is not a file")
        data = handle.read(ENTRY_POINTS_BYTES + 1)
    if len(data) > ENTRY_POINTS_BYTES:
        raise SubmissionError(f"its entry_points.txt is larger than {ENTRY_POINTS_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionError("its entry_points.txt is not UTF-8") from None
    found: dict[str, str] = {}
    section = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
            continue
        if section != group:
            continue
        entry = _ENTRY_POINT.fullmatch(stripped)
        if entry is None or line[0].isspace():
            raise SubmissionError(
                f"line {number} of its entry_points.txt ({printable(stripped, 80)}) is not "
                "NAME = MODULE[:OBJECT]"
            )
        if entry["name"] in found:
            raise SubmissionError(f"its entry_points.txt names {entry['name']!r} twice")
        found[entry["name"]] = entry["value"]
    return found


def main_dist_info(directory: Path) -> str:
    """The name of the submission's own ``*.dist-info`` in the snapshot ``directory`` (its
    dependencies' may be beside it): the one :data:`MAIN_FILE` names; :class:`SubmissionError`
    if it names none."""
    try:
        main = (directory / MAIN_FILE).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        main = ""
    if dist_info(main) is None or not (directory / main).is_dir():
        raise SubmissionError(f"the snapshot {directory.name} does not say which package it holds")
    return main


def top_level_names(directory: Path) -> set[str]:
    """The top-level modules and packages the snapshot ``directory`` holds, from its entries
    (metadata directories, scripts, hidden entries and ``__pycache__`` left out): a directory
    by its name, a module by the part of its name before the first dot."""
    names: set[str] = set()
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in ("bin", "__pycache__"):
                continue
            if entry.is_dir(follow_symlinks=False):
                if not name.endswith((".dist-info", ".data", ".egg-info")):
                    names.add(name)
            elif name.endswith((".py", ".so", ".pyd", ".pth")):
                names.add(name.split(".", 1)[0])
    return names


@dataclass
class Record:
    """One version of a submitted distribution (see the module docstring). ``plugins`` maps
    each ``arena.bots`` entry point to ``{"value": ..., "listing": ...}``: the listing its host
    sent when it was submitted (what it registers)."""

    distribution: str
    version: int
    content: str
    package_version: str
    created: str
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: str = ""
    withdrawn: bool = False

    @property
    def bots(self) -> list[str]:
        """The names of the bots it registers."""
        return [
            str(bot.get("name"))
            for plugin in self.plugins.values()
            for bot in (plugin.get("listing") or {}).get("bots") or []
            if isinstance(bot, dict)
        ]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (with the bots it registers)."""
        return {**asdict(self), "bots": self.bots}


class Store:
    """The submissions store at ``base`` (default :func:`root`)."""

    def __init__(self, base: Path | None = None) -> None:
        self.base = base if base is not None else root()

    def snapshot(self, content: str) -> Path:
        """Where snapshot ``content`` lives."""
        return snapshot_dir(content, self.base)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's lock (one writer at a time, across processes)."""
        self.base.mkdir(parents=True, exist_ok=True)
        with open(self.base / "lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _record_path(self, distribution: str, version: int) -> Path:
        return self.base / "records" / canonical(distribution) / f"{version}.json"

    def records(self, distribution: str | None = None) -> list[Record]:
        """Every stored version (of ``distribution``), by distribution then version."""
        top = self.base / "records"
        if distribution is not None:
            dirs = [top / canonical(distribution)]
        else:
            dirs = sorted(top.iterdir()) if top.is_dir() else []
        out = []
        for directory in dirs:
            for path in directory.glob("*.json") if directory.is_dir() else []:
                try:
                    data = json.loads(path.read_text())
                    out.append(Record(**data))
                except (OSError, ValueError, TypeError):
                    continue
        return sorted(out, key=lambda r: (canonical(r.distribution), r.version))

    def write(self, record: Record) -> None:
        """Write ``record`` atomically (hold :meth:`lock` when numbering a new one)."""
        path = self._record_path(record.distribution, record.version)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(asdict(record), out, indent=1, sort_keys=True)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def next_version(self, distribution: str) -> int:
        """The number the next version of ``distribution`` gets."""
        return max((r.version for r in self.records(distribution)), default=0) + 1

    def playing(self) -> list[Record]:
        """The version of each distribution that plays by default: its latest not withdrawn."""
        latest: dict[str, Record] = {}
        for record in self.records():
            if not record.withdrawn:
                latest[canonical(record.distribution)] = record
        return list(latest.values())

    def find(self, distribution: str, version: int) -> Record:
        """Version ``version`` of ``distribution``; :class:`SubmissionError` if there is none."""
        for record in self.records(distribution):
            if record.version == version:
                return record
        raise SubmissionError(f"no submission {distribution} version {version}")

    def withdraw(self, distribution: str, version: int) -> Record:
        """Take version ``version`` of ``distribution`` out of future play (its snapshot and the
        games it played stay)."""
        with self.lock():
            record = self.find(distribution, version)
            record.withdrawn = True
            self.write(record)
        return record
