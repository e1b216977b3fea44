"""What each plugin registers, remembered by the content of its package, so that asking a plugin
costs its time once and not on every command that lists bots.

The catalog (:mod:`arena.hosting.catalog`) asks each plugin in a host process of its own what it
registers. A register hook may be slow, or hang until the listing timeout; its answer, or the
one-line failure of asking, is kept here under a key (:func:`listing_key`) made of everything
it depends on:

- the content of the plugin's distribution (:func:`content_stamp`): the name and bytes of every
  file its ``RECORD`` lists inside the directory it is installed in (compiled ``__pycache__``
  files left out), so installing another version, or editing an installed file, asks again. An
  **editable install** (its ``direct_url.json`` says ``"editable": true``) records only a
  ``.pth`` file or a path finder, not the sources its author changes as they go: for it, the
  directories the ``.pth`` lines or setuptools' finder ``MAPPING`` point at are followed, and
  the name, size and modification time of every file under them (hidden directories and
  ``__pycache__`` left out) join the key, so an edit asks again;
- the plugin itself (entry-point name and object, distribution, version, where it is
  installed) and the Python interpreter;
- the arena: its version and the source of the modules that ask for, produce and read a
  listing;
- the settings of the asking: the sandbox kind, the listing timeout, the catalog's limits and
  ``PYTHONPATH`` (which the host keeps).

A third-party package whose files cannot be followed that way (no ``RECORD``, as an
``.egg-info``; an editable install of another kind, or of more than :data:`MAX_TREE_FILES`
files; more than :data:`MAX_RECORD_FILES` files or :data:`MAX_HASHED_BYTES` recorded) is
remembered by its metadata alone (name, version, entry points, ``RECORD``): asked again when
those change, or with ``arena bots --refresh``. A package cannot make itself asked, and its hook
waited for, on every command. The arena's own plugin, trusted, is remembered only by its
content, and asked every time where that cannot be followed (a checkout's ``.egg-info``).

The entries are files under ``listings/`` in the arena's cache directory
(:func:`arena.engine.jitcache.cache_dir`), written (atomically) only by the trusted process that
asked; a sandboxed host sees that directory read-only, and what a listing says is public anyway
(``arena bots`` prints it). An entry is checked again when it is read, like a fresh answer.
At most :data:`MAX_ENTRIES` are kept, the least recently used going first.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.metadata as md
import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

import arena
from arena.engine.jitcache import cache_dir, files_stamp
from arena.hosting.names import is_builtin
from arena.hosting.plugins import PluginInfo

#: Bumped when what an entry holds changes shape.
FORMAT = 1
#: The most files of a distribution's ``RECORD`` followed, and the most bytes of them hashed.
MAX_RECORD_FILES = 50_000
MAX_HASHED_BYTES = 256 << 20
#: The most files under an editable install's source directories followed.
MAX_TREE_FILES = 20_000
#: The most entries kept.
MAX_ENTRIES = 512

_HERE = Path(__file__).resolve().parent
#: The arena's modules that ask for, produce and read a listing: a change to any of them (a
#: checkout being worked on) asks every plugin again.
_LISTING_CODE = (
    _HERE / "catalog.py",
    _HERE / "host.py",
    _HERE / "listing_cache.py",
    _HERE / "names.py",
    _HERE / "plugins.py",
    _HERE / "protocol.py",
    _HERE.parent / "botspec.py",
    _HERE.parent / "errors.py",
    _HERE.parent / "hookspecs.py",
)


@dataclass(frozen=True)
class Remembered:
    """A plugin's remembered answer: its listing, or why asking for it failed (one line)."""

    listing: dict[str, Any] | None = None
    failure: str | None = None


def is_editable(dist: md.Distribution) -> bool:
    """Whether ``dist`` is an editable install (PEP 660: its ``direct_url.json`` says so)."""
    try:
        text = dist.read_text("direct_url.json")
        info = json.loads(text) if text else {}
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and bool((info.get("dir_info") or {}).get("editable"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _recorded(dist: md.Distribution) -> tuple[str, list[Path]] | None:
    """The directory ``dist`` is installed in and the regular files its ``RECORD`` lists inside
    it (``__pycache__`` left out), or ``None`` when there is no ``RECORD``, it cannot be read,
    or it lists more than :data:`MAX_RECORD_FILES` files or :data:`MAX_HASHED_BYTES`."""
    try:
        if dist.read_text("RECORD") is None:
            return None
        files = dist.files or []
        root = os.path.realpath(str(dist.locate_file("")))
    except Exception:  # a RECORD that cannot be read or parsed
        return None
    if len(files) > MAX_RECORD_FILES:
        return None
    found: list[Path] = []
    total = 0
    for entry in sorted(files, key=str):
        if "__pycache__" in entry.parts or entry.suffix == ".pyc":
            continue
        try:
            path = os.path.realpath(os.path.join(root, str(entry)))
            info = os.stat(path) if _inside(path, root) else None
        except (OSError, ValueError):  # missing, or a name no file can have
            continue
        # a script in ../../bin or a link out of the package is not the package; a device or a
        # pipe is never read
        if info is None or not stat.S_ISREG(info.st_mode):
            continue
        total += info.st_size
        if total > MAX_HASHED_BYTES:
            return None
        found.append(Path(path))
    return root, found


def _finder_mapping(path: Path) -> list[str] | None:
    """The directories of the ``MAPPING`` that setuptools writes into an editable install's
    finder module, read without importing it; ``None`` if there is none."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    targets: list[ast.expr]
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        if value is None or [t.id for t in targets if isinstance(t, ast.Name)] != ["MAPPING"]:
            continue
        try:
            mapping = ast.literal_eval(value)
        except ValueError:
            return None
        if isinstance(mapping, dict) and all(isinstance(v, str) for v in mapping.values()):
            return list(mapping.values())
        return None
    return None


def editable_sources(root: str, files: list[Path]) -> list[str] | None:
    """Where an editable install's code lives: the path lines of its ``.pth`` files (relative
    ones from ``root``) and its setuptools finder's ``MAPPING``; ``None`` if neither says."""
    sources: list[str] = []
    for path in files:
        if path.suffix == ".pth":
            try:
                lines = path.read_text(errors="replace").splitlines()
            except OSError:
                return None
            sources += [
                os.path.join(root, line.strip())
                for line in lines
                if line.strip() and not line.startswith(("#", "import ", "import\t"))
            ]
        elif path.name.startswith("__editable__") and path.name.endswith("_finder.py"):
            mapping = _finder_mapping(path)
            if mapping is None:
                return None
            sources += mapping
    return sources or None


def _tree_stamp(sources: list[str]) -> str | None:
    """A hash of the name, size and modification time of every file under ``sources``
    (hidden directories, ``__pycache__`` and compiled files left out; links to directories not
    followed), or ``None`` past :data:`MAX_TREE_FILES` files."""
    digest = hashlib.blake2b(digest_size=16)
    count = 0
    for top in sorted(set(sources)):
        digest.update(f"{top}\n".encode())
        walked = [(top, [], [""])] if os.path.isfile(top) else os.walk(top)
        for directory, subdirectories, names in walked:
            subdirectories[:] = sorted(
                d for d in subdirectories if not d.startswith(".") and d != "__pycache__"
            )
            for name in sorted(names):
                if name.endswith(".pyc"):
                    continue
                count += 1
                if count > MAX_TREE_FILES:
                    return None
                path = os.path.join(directory, name) if name else directory
                try:
                    info = os.stat(path)
                except (OSError, ValueError):
                    continue
                digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def content_stamp(dist: md.Distribution) -> str | None:
    """A hash of what ``dist`` holds: the names and bytes of the files its ``RECORD`` lists
    inside the directory it is installed in and, for an editable install, the name, size and
    modification time of every file under the directories it points at (see the module
    docstring); ``None`` when that cannot be followed."""
    recorded = _recorded(dist)
    if recorded is None:
        return None
    root, files = recorded
    try:
        stamp = f"record:{files_stamp(files)}"
    except OSError:
        return None
    if not is_editable(dist):
        return stamp
    sources = editable_sources(root, files)
    tree = _tree_stamp(sources) if sources is not None else None
    return None if tree is None else f"editable:{stamp}:{tree}"


def metadata_stamp(dist: md.Distribution) -> str:
    """A hash of ``dist``'s metadata alone (``METADATA``, entry points, ``RECORD``, how it was
    installed): what a package whose files cannot be followed is remembered by."""
    digest = hashlib.blake2b(digest_size=16)
    for name in ("METADATA", "PKG-INFO", "entry_points.txt", "RECORD", "direct_url.json"):
        try:
            text = dist.read_text(name)
        except Exception:  # unreadable: counts as missing
            text = None
        digest.update(f"{name}\0{text}\0".encode(errors="replace"))
    return f"metadata:{digest.hexdigest()}"


def listing_key(plugin: PluginInfo, settings: Mapping[str, Any]) -> str | None:
    """The key ``plugin``'s listing is kept under, asked with ``settings`` (the sandbox kind,
    the timeout, the limits: anything JSON can write); ``None`` when it is not kept: the
    plugin's distribution is unknown, or it is the arena's own and its content cannot be
    followed (see the module docstring)."""
    if plugin.dist is None:
        return None
    stamp = content_stamp(plugin.dist)
    if stamp is None and is_builtin(plugin.distribution):
        return None  # the arena's own plugin: asked again rather than remembered stale
    if stamp is None:
        stamp = metadata_stamp(plugin.dist)
    try:
        arena_code = files_stamp(_LISTING_CODE)
    except OSError:
        return None
    parts = {
        "format": FORMAT,
        "plugin": [plugin.name, plugin.value, plugin.distribution, plugin.version],
        "location": str(plugin.dist.locate_file("")),
        "content": stamp,
        "arena": [arena.__version__, arena_code],
        "python": [sys.version, sys.executable],
        "settings": dict(settings),
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


class ListingCache:
    """The remembered listings in ``directory`` (by default ``listings/`` in the arena's cache
    directory). Reading a missing, unreadable or malformed entry gives ``None``; failing to
    write one (a read-only home) is silent: the plugin is asked again next time."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else cache_dir() / "listings"

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> Remembered | None:
        """The answer kept under ``key``, or ``None``."""
        path = self._path(key)
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        listing, failure = data.get("listing"), data.get("failure")
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used
        if isinstance(failure, str):
            return Remembered(failure=failure)
        if isinstance(listing, dict):
            return Remembered(listing=listing)
        return None

    def put(self, key: str, plugin: PluginInfo, answer: Remembered) -> None:
        """Keep ``answer`` (of ``plugin``) under ``key``."""
        data = {
            "format": FORMAT,
            "plugin": plugin.ref,
            "listing": answer.listing,
            "failure": answer.failure,
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(orjson.dumps(data))
                os.replace(temporary, self._path(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            self._prune()
        except OSError:
            return

    def _prune(self) -> None:
        """Remove the least recently used entries past :data:`MAX_ENTRIES`."""
        entries = []
        for path in self.directory.glob("*.json"):
            with contextlib.suppress(OSError):
                entries.append((path.stat().st_mtime, path))
        entries.sort(reverse=True)
        for _, path in entries[MAX_ENTRIES:]:
            with contextlib.suppress(OSError):
                path.unlink()
