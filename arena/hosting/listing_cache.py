"""What each plugin registers, remembered by the content of its package, so that asking a plugin
costs its time once and not on every command that lists bots.

The catalog (:mod:`arena.hosting.catalog`) asks each plugin in a host process of its own what it
registers. A register hook may be slow, or hang until the listing timeout; its answer, or the
one-line failure of asking, is kept here under a key (:func:`listing_key`) made of everything
it depends on:

- the content of the plugin's distribution: the name and bytes of every file its ``RECORD``
  lists inside the directory it is installed in (compiled ``__pycache__`` files left out), so
  installing another version, or editing an installed file, asks again;
- the plugin itself (entry-point name and object, distribution, version, where it is
  installed) and the Python interpreter;
- the arena: its version and the source of the modules that ask for, produce and read a
  listing;
- the settings of the asking: the sandbox kind, the listing timeout, the catalog's limits and
  ``PYTHONPATH`` (which the host keeps).

Not kept, so asked on every command as before:

- an **editable install** (its ``direct_url.json`` says ``"editable": true``): its ``RECORD``
  lists a path-hook or ``.pth`` file, not the source files its author changes as they go, and
  following each build backend's finder to the files it maps is guesswork; a package under
  development is asked afresh, which is what its author wants;
- a distribution without a ``RECORD`` (an ``.egg-info``, a system package), or whose recorded
  files hold more than :data:`MAX_HASHED_BYTES`.

The entries are files under ``listings/`` in the arena's cache directory
(:func:`arena.engine.jitcache.cache_dir`), written (atomically) only by the trusted process that
asked; a sandboxed host sees that directory read-only, and what a listing says is public anyway
(``arena bots`` prints it). An entry is checked again when it is read, like a fresh answer.
At most :data:`MAX_ENTRIES` are kept, the least recently used going first.
"""

from __future__ import annotations

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
from arena.hosting.plugins import PluginInfo

#: Bumped when what an entry holds changes shape.
FORMAT = 1
#: The most bytes of a distribution's files hashed for its key; a larger one is not kept.
MAX_HASHED_BYTES = 256 << 20
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


def content_stamp(dist: md.Distribution) -> str | None:
    """A hash of the names and bytes of the files ``dist``'s ``RECORD`` lists inside the
    directory it is installed in (``__pycache__`` left out; a file that is missing or not a
    regular file counts by its name alone); ``None`` when it cannot be hashed for a key: an
    editable install, no ``RECORD``, or more than :data:`MAX_HASHED_BYTES`."""
    try:
        if dist.read_text("RECORD") is None or is_editable(dist):
            return None
        files = dist.files or []
        root = os.path.realpath(str(dist.locate_file("")))
    except (OSError, ValueError):
        return None
    hashed: list[Path] = []
    absent: list[str] = []
    total = 0
    for entry in sorted(files, key=str):
        if "__pycache__" in entry.parts or entry.suffix == ".pyc":
            continue
        path = os.path.realpath(os.path.join(root, str(entry)))
        if not _inside(path, root):  # a script in ../../bin, or a link out of the package
            continue
        try:
            info = os.stat(path)
        except OSError:
            absent.append(str(entry))
            continue
        if not stat.S_ISREG(info.st_mode):  # never read a device or a pipe
            absent.append(str(entry))
            continue
        total += info.st_size
        if total > MAX_HASHED_BYTES:
            return None
        hashed.append(Path(path))
    try:
        stamp = files_stamp(hashed)
    except OSError:
        return None
    return f"{stamp}:{hashlib.blake2b(repr(absent).encode(), digest_size=8).hexdigest()}"


def listing_key(plugin: PluginInfo, settings: Mapping[str, Any]) -> str | None:
    """The key ``plugin``'s listing is kept under, asked with ``settings`` (the sandbox kind,
    the timeout, the limits: anything JSON can write); ``None`` when it is not kept (see the
    module docstring)."""
    if plugin.dist is None:
        return None
    stamp = content_stamp(plugin.dist)
    if stamp is None:
        return None
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
