"""What crosses back from a sandboxed build: its output directory, copied by the arena (which may
be root) out of the sandbox with small, bounded code that trusts nothing it reads
(``docs/sandbox.md``, "Submissions").

The source is a directory of the sandbox's own file system, reached through ``/proc/PID/root``
of the sandbox's first process. Every step is relative to an open directory descriptor and never
follows a link (``O_NOFOLLOW``): an absolute link made by the build would otherwise resolve
against the arena's root, not the sandbox's. Each entry's type is read before it is opened and
checked again on the open descriptor, so that nothing but a regular file or a directory is ever
opened (never a device, a fifo or a socket). Only regular files with one link and directories are
copied; anything else refuses the whole output in one line naming it. The copy is held to a count
of entries, a number of bytes actually read (a sparse file's size counts in full, so a huge one is
refused before it is read), a depth, and names that are printable UTF-8 of at most 255 bytes.
What is written is the arena's own: owned by the arena's user, files ``0444`` (``0555`` where the
build's file could be run), directories ``0555``, no extended attribute, no timestamps kept.

No archive format is read or written, and nothing here depends on the interpreter's ``tarfile``
(whose ``data`` filter can be walked out of on some Python versions: CVE-2025-4517).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError, printable

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: Bytes read at a time.
_CHUNK = 1 << 20
#: What each kind of entry that is not copied is called in a refusal.
_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a fifo",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class CopyError(ArenaError):
    """The output holds something that is not copied, or goes over a limit (one line)."""


@dataclass(frozen=True)
class CopyLimits:
    """What a copy may hold: ``entries`` files and directories together, ``bytes`` of files
    (their sizes, read or not), directories ``depth`` deep, paths of ``path_chars`` characters
    below the copied directory."""

    entries: int
    bytes: int
    depth: int = 32
    path_chars: int = 1024


@dataclass
class Copied:
    """How much was copied: files and directories, and bytes."""

    entries: int = 0
    bytes: int = 0


def open_below(root: str, *names: str) -> int:
    """An open descriptor of the directory ``root/names...``, each of ``names`` opened without
    following a link (``root`` itself may be a link, such as ``/proc/PID/root``);
    :class:`CopyError` when one is not a directory."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate(names):
            try:
                inner = os.open(name, _DIRECTORY, dir_fd=fd)
            except OSError as exc:
                shown = "/" + "/".join(names[: depth + 1])
                raise CopyError(f"{shown} is not a directory ({exc.strerror})") from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def copy_tree(source: int, target: Path, limits: CopyLimits, what: str = "the output") -> Copied:
    """Copy the directory open as ``source`` into the new directory ``target`` (see the module
    docstring); :class:`CopyError` naming the first entry or limit that stops it (``what``
    names the source in it). ``target`` itself is left writable by its owner (the caller adds
    to it, then makes it read-only), and for the caller to remove on a refusal."""
    os.mkdir(target, 0o700)
    copied = Copied()
    destination = os.open(target, _DIRECTORY)
    try:
        _copy_directory(source, destination, "", 0, limits, copied, what)
    finally:
        os.close(destination)
    return copied


def _copy_directory(
    source: int,
    destination: int,
    where: str,
    depth: int,
    limits: CopyLimits,
    copied: Copied,
    what: str,
) -> None:
    with os.scandir(source) as entries:  # read a block at a time: a huge directory stops early
        for entry in entries:
            name = entry.name
            path = f"{where}/{name}" if where else name
            _check_name(name, path, limits, what)
            copied.entries += 1
            if copied.entries > limits.entries:
                raise CopyError(f"{what} holds more than {limits.entries} files")
            try:
                info = os.stat(name, dir_fd=source, follow_symlinks=False)
            except OSError as exc:
                raise CopyError(f"{what} changed while it was copied: {printable(path, 200)} "
                                  f"({exc.strerror})") from None  # fmt: skip
            kind = stat.S_IFMT(info.st_mode)
            if kind == stat.S_IFDIR:
                if depth + 1 > limits.depth:
                    raise CopyError(
                        f"{what} nests directories more than {limits.depth} deep: "
                        f"{printable(path, 200)}"
                    )
                inner = _open_same(name, source, info, _DIRECTORY, path, what)
                try:
                    os.mkdir(name, 0o700, dir_fd=destination)
                    made = os.open(name, _DIRECTORY, dir_fd=destination)
                    try:
                        _copy_directory(inner, made, path, depth + 1, limits, copied, what)
                        os.fchmod(made, 0o555)
                    finally:
                        os.close(made)
                finally:
                    os.close(inner)
            elif kind == stat.S_IFREG:
                _copy_file(name, source, destination, info, path, limits, copied, what)
            else:
                kind_name = _KINDS.get(kind, "a file of an unknown kind")
                raise CopyError(
                    f"{what} holds {kind_name}: {printable(path, 200)} (only regular files and "
                    "directories are kept)"
                )


def _check_name(name: str, path: str, limits: CopyLimits, what: str) -> None:
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        size = -1
    if size < 0 or not name.isprintable() or name in (".", "..") or size > 255:
        raise CopyError(f"{what} holds a name that is not printable UTF-8: {printable(path, 200)}")
    if len(path) > limits.path_chars:
        raise CopyError(
            f"{what} holds a path longer than {limits.path_chars} characters: "
            f"{printable(path, 200)}"
        )


def _open_same(
    name: str, directory: int, info: os.stat_result, flags: int, path: str, what: str
) -> int:
    """Open ``name`` (in ``directory``) without following a link and check that it is the entry
    ``info`` describes (it was not swapped in between)."""
    try:
        fd = os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        raise CopyError(f"{what} changed while it was copied: {printable(path, 200)} "
                          f"({exc.strerror})") from None  # fmt: skip
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino, stat.S_IFMT(opened.st_mode)) != (
        info.st_dev,
        info.st_ino,
        stat.S_IFMT(info.st_mode),
    ):
        os.close(fd)
        raise CopyError(f"{what} changed while it was copied: {printable(path, 200)}")
    return fd


def _copy_file(
    name: str,
    source: int,
    destination: int,
    info: os.stat_result,
    path: str,
    limits: CopyLimits,
    copied: Copied,
    what: str,
) -> None:
    if info.st_nlink != 1:
        raise CopyError(
            f"{what} holds a hard link: {printable(path, 200)} (only regular files and "
            "directories are kept)"
        )
    budget = limits.bytes - copied.bytes
    too_big = f"{what} holds more than {limits.bytes >> 20} MiB"
    if info.st_size > budget:
        raise CopyError(too_big)  # a sparse file's size counts: it is refused unread
    fd = _open_same(name, source, info, _FILE, path, what)
    try:
        if os.fstat(fd).st_nlink != 1:
            raise CopyError(f"{what} holds a hard link: {printable(path, 200)}")
        mode = 0o555 if info.st_mode & 0o111 else 0o444
        out = os.open(name, _NEW_FILE, mode, dir_fd=destination)
        try:
            while True:
                chunk = os.read(fd, min(_CHUNK, budget + 1))
                if not chunk:
                    break
                budget -= len(chunk)
                if budget < 0:
                    raise CopyError(too_big)  # it grew while it was read
                copied.bytes += len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
        finally:
            os.close(out)
    finally:
        os.close(fd)
