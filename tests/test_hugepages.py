"""A fork server's memory in huge pages (arena.hosting.hugepages): fewer page-table entries to
copy into each fresh process."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.hosting.hosted import HostHandle
from arena.hosting.hugepages import HUGE_PAGE, anonymous_ranges
from arena.hosting.sandbox import choose_sandbox
from arena.referee.play import Referee

MAPS = """\
00400000-00401000 r--p 00000000 fe:00 123  /usr/bin/python3.11
55d0a0000000-55d0a0700000 rw-p 00000000 00:00 0  [heap]
7f0000100000-7f0000500000 rw-p 00000000 00:00 0
7f0000600000-7f0000700000 rw-p 00000000 00:00 0
7f0000800000-7f0000c00000 rw-s 00000000 00:01 9  /memfd:x (deleted)
7f0000c00000-7f0001000000 rw-p 00001000 fe:00 77 /usr/lib/libfoo.so
7ffc00000000-7ffc00400000 rw-p 00000000 00:00 0  [stack]
"""


def test_only_whole_huge_pages_of_private_anonymous_memory_are_named() -> None:
    assert anonymous_ranges(MAPS) == [
        (0x55D0A0000000, 0x55D0A0600000),  # the heap: three whole huge pages of 3.5
        (0x7F0000200000, 0x7F0000400000),  # 4 MiB unaligned: the one whole page inside
    ]  # 1 MiB is no whole page; shared, file-backed and the stack are left alone


def _collapses_here() -> str | None:
    """Why this kernel cannot collapse memory into huge pages (``None``: it can)."""
    try:
        enabled = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "no transparent huge pages here"
    if "[never]" in enabled:
        return "transparent huge pages are switched off here"
    release = tuple(int(x) for x in re.findall(r"\d+", platform.release())[:2])
    if release < (6, 1):
        return f"Linux {platform.release()} has no MADV_COLLAPSE (6.1)"
    return None


@pytest.fixture
def collapsing() -> None:
    """For a test that needs the kernel to collapse memory into huge pages (skipped, saying
    why, where it cannot)."""
    why = _collapses_here()
    if why is not None:
        pytest.skip(why)


def _holding(pages: int, then: str) -> list[int]:
    """What a fresh process prints (integers) after writing a private anonymous mapping of
    ``pages`` huge pages and running the statement ``then`` (``collapse_anonymous_memory`` and
    ``huge()``, its AnonHugePages in bytes, at hand)."""
    probe = (
        "import mmap\n"
        "from arena.hosting.hugepages import collapse_anonymous_memory\n"
        "def huge():\n"
        "    for line in open('/proc/self/smaps_rollup'):\n"
        "        if line.startswith('AnonHugePages:'):\n"
        "            return int(line.split()[1]) * 1024\n"
        f"m = mmap.mmap(-1, {pages * HUGE_PAGE}, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)\n"
        f"m.write(b'x' * {pages * HUGE_PAGE})\n"
        f"{then}\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return [int(x) for x in result.stdout.split()]


def test_anonymous_memory_is_collapsed_into_huge_pages(collapsing: None) -> None:
    done, huge = _holding(4, "print(collapse_anonymous_memory(), huge())")
    assert done >= 3 * HUGE_PAGE  # the mapping holds at least three whole huge pages
    assert huge >= 3 * HUGE_PAGE


def test_collapsing_stops_when_its_time_is_up(collapsing: None) -> None:
    none, some = _holding(
        64, "print(collapse_anonymous_memory(seconds=0.0), collapse_anonymous_memory())"
    )
    assert none == 0
    assert some >= 60 * HUGE_PAGE


def _huge_kib(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0


def test_a_reference_hosts_fork_server_holds_its_memory_in_huge_pages(
    collapsing: None, bubblewrap: None
) -> None:
    box = choose_sandbox("bwrap")
    if box.hierarchy is None or not box.hierarchy.freezes:
        pytest.skip(f"no held fork server here ({box.cgroup_reason or 'no freezer'})")
    greedy = HostHandle("greedy", "reference", sandbox=box)
    uniform = HostHandle("random", "reference", sandbox=box)
    try:
        referee = Referee("classic", move_time=None)
        for deck in range(3):  # the same deck again: a fresh process forked each time
            for handle in (greedy, uniform):
                handle.new_game(0)
            record = referee.play_round([greedy, uniform], seed=deck)
            assert not record.faults
        assert greedy.fresh_starts == 3
        assert greedy._held is not None
        # numba's and LLVM's tens of MiB: some of it in 2 MiB pages, and still so after forks
        assert _huge_kib(greedy._held) >= 8 * 1024
    finally:
        greedy.close()
        uniform.close()
