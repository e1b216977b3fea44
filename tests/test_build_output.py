"""What crosses back from a build (issue 36): the bounded copy of its output
(:mod:`arena.hosting.copyout`) and the strict readers of its metadata
(:mod:`arena.hosting.submissions`), on directories made here with every kind of entry a hostile
build could leave. No sandbox needed: ``tests/test_hostile_builds.py`` runs the same through
``arena submit``."""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

import pytest

from arena.hosting import copyout
from arena.hosting import submissions as S

LIMITS = copyout.CopyLimits(entries=100, bytes=1 << 20)


def copy(source: Path, target: Path, limits: copyout.CopyLimits = LIMITS) -> copyout.Copied:
    fd = copyout.open_below(str(source.parent), source.name)
    try:
        return copyout.copy_tree(fd, target, limits)
    finally:
        os.close(fd)


def refusal(source: Path, tmp_path: Path, limits: copyout.CopyLimits = LIMITS) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    with pytest.raises(copyout.CopyError) as refused:
        copy(source, tmp_path / "copy", limits)
    text = str(refused.value)
    assert "\n" not in text and text.startswith("the output ")
    return text


def test_files_and_directories_are_copied_as_the_arenas_own(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "pkg" / "empty").mkdir(parents=True)
    (out / "pkg" / "mod.py").write_text("x = 1\n")
    (out / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    (out / "pkg" / "run.sh").chmod(0o700)
    (out / "top.txt").write_bytes(b"\0" * 5000)
    (out / "top.txt").chmod(0o666)
    copied = copy(out, tmp_path / "copy")
    assert (copied.entries, copied.bytes) == (5, 6 + 10 + 5000)
    made = tmp_path / "copy"
    assert (made / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (made / "top.txt").read_bytes() == b"\0" * 5000
    modes = {
        p.relative_to(made).as_posix(): stat.S_IMODE(p.lstat().st_mode) for p in made.rglob("*")
    }
    assert modes == {
        "pkg": 0o555,
        "pkg/empty": 0o555,
        "pkg/mod.py": 0o444,
        "pkg/run.sh": 0o555,
        "top.txt": 0o444,
    }
    assert {p.lstat().st_uid for p in made.rglob("*")} == {os.geteuid()}


def test_links_fifos_sockets_and_devices_are_refused_by_name(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "pkg").mkdir(parents=True)
    (out / "pkg" / "escape").symlink_to("/")
    assert "holds a symbolic link: pkg/escape (only regular" in refusal(out, tmp_path)
    os.unlink(out / "pkg" / "escape")
    (out / "pkg" / "relative").symlink_to("../pkg")
    assert "holds a symbolic link: pkg/relative" in refusal(out, tmp_path / "2")
    os.unlink(out / "pkg" / "relative")
    os.mkfifo(out / "pkg" / "pipe")
    begun = time.monotonic()
    assert "holds a fifo: pkg/pipe" in refusal(out, tmp_path / "3")
    assert time.monotonic() - begun < 5  # never opened (it would wait for a writer)
    os.unlink(out / "pkg" / "pipe")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(out / "sock"))
        assert "holds a socket: sock" in refusal(out, tmp_path / "4")
    os.unlink(out / "sock")
    (out / "secret").write_text("outside")
    os.link(out / "secret", out / "pkg" / "hard")
    assert "holds a hard link: " in refusal(out, tmp_path / "5")
    os.unlink(out / "pkg" / "hard")
    if os.geteuid() == 0:
        os.mknod(out / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        assert "holds a character device: null" in refusal(out, tmp_path / "6")
        os.unlink(out / "null")
    (tmp_path / "7").mkdir()
    copy(out, tmp_path / "7" / "copy")  # what is left is plain


def test_an_output_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "out").symlink_to("/")
    with pytest.raises(copyout.CopyError, match=r"^/out is not a directory"):
        copyout.open_below(str(tmp_path), "out")


def test_the_limits_hold_without_reading_past_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with open(out / "sparse", "wb") as sparse:
        sparse.truncate(64 << 30)  # 64 GiB of nothing: refused by its size, never read
    begun = time.monotonic()
    assert refusal(out, tmp_path) == "the output holds more than 1 MiB"
    assert time.monotonic() - begun < 2
    os.unlink(out / "sparse")
    for i in range(101):
        (out / f"f{i}").write_text("")
    assert refusal(out, tmp_path / "2") == "the output holds more than 100 files"
    for i in range(101):
        os.unlink(out / f"f{i}")
    deep = out
    for _ in range(33):
        deep = deep / "d"
    deep.mkdir(parents=True)
    assert "nests directories more than 32 deep: d/d/d" in refusal(out, tmp_path / "3")
    os.rmdir(deep)
    long_name = out / ("n" * 200) / ("n" * 200)
    long_name.mkdir(parents=True)
    short = copyout.CopyLimits(entries=100, bytes=1 << 20, path_chars=300)
    assert "holds a path longer than 300 characters" in refusal(out, tmp_path / "4", short)


def test_names_that_are_not_printable_utf8_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "title\x1b]0;pwned\x07").write_text("")
    said = refusal(out, tmp_path)
    assert "holds a name that is not printable UTF-8: title\\x1b]0;pwned\\x07" in said
    os.unlink(out / "title\x1b]0;pwned\x07")
    os.close(os.open(os.path.join(os.fsencode(out), b"latin1-\xe9"), os.O_CREAT | os.O_WRONLY))
    assert "holds a name that is not printable UTF-8: latin1-" in refusal(out, tmp_path / "2")


def test_the_dist_info_name_gives_the_distribution_and_version() -> None:
    assert S.dist_info("sub_alpha-1.0.dist-info") == ("sub_alpha", "1.0")
    assert S.dist_info("Pkg.Name-2!1.0.post1+local.7.dist-info") == (
        "Pkg.Name",
        "2!1.0.post1+local.7",
    )
    bad = ("sub-alpha-1.0.dist-info", "-1.0.dist-info", "x-.dist-info", "x-1.0.egg-info")
    bad += ("x-1.0.dist-info/..", "../x-1.0.dist-info", "x y-1.0.dist-info", "x-1.0\n.dist-info")
    for name in bad:
        assert S.dist_info(name) is None, name


def test_entry_points_are_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "entry_points.txt"
    path.write_text(
        "[console_scripts]\nwhatever = anything goes here [x]\n\n"
        "[arena.bots]\n# a comment\nalpha = pkg.plugin\nbeta-2=pkg.other:Plugin.hook\n"
        "[numba_extensions]\ninit = pkg.ext:init\n"
    )
    assert S.read_entry_points(path, "arena.bots") == {
        "alpha": "pkg.plugin",
        "beta-2": "pkg.other:Plugin.hook",
    }
    assert S.read_entry_points(tmp_path / "missing.txt", "arena.bots") == {}
    for text, said in (
        ("[arena.bots]\nalpha = pkg.plugin [extra]\n", "is not NAME = MODULE"),
        ("[arena.bots]\nalpha = os; import x\n", "is not NAME = MODULE"),
        ("[arena.bots]\nalpha = pkg\n  continued\n", "line 3"),
        ("[arena.bots]\na = x\n[arena.bots]\na = y\n", "names 'a' twice"),
        ("[arena.bots]\n" + "# x\n" * 20_000, "larger than 65536 bytes"),
    ):
        path.write_text(text)
        with pytest.raises(S.SubmissionError, match=said):
            S.read_entry_points(path, "arena.bots")
    path.write_bytes(b"[arena.bots]\na = b\xff\n")
    with pytest.raises(S.SubmissionError, match="not UTF-8"):
        S.read_entry_points(path, "arena.bots")
    path.unlink()
    path.symlink_to("/etc/passwd")
    with pytest.raises(S.SubmissionError, match=r"cannot read its entry_points\.txt"):
        S.read_entry_points(path, "arena.bots")


def test_top_level_names_come_from_the_snapshots_entries(tmp_path: Path) -> None:
    for directory in ("pkg", "pkg-1.0.dist-info", "pkg-1.0.data", "bin", "__pycache__", ".hidden"):
        (tmp_path / directory).mkdir()
    for file in ("mod.py", "ext.cpython-311-x86_64-linux-gnu.so", "zz.pth", "README", ".x.py"):
        (tmp_path / file).write_text("")
    assert S.top_level_names(tmp_path) == {"pkg", "mod", "ext", "zz"}
