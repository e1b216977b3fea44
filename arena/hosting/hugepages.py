"""Huge pages for a fork server's memory: cheaper fresh processes.

A host's fork server (:mod:`arena.hosting.epochs`) starts a fresh process for every deck, and
the kernel's work for each is proportional to the pages the server has mapped: ``fork`` copies an
entry per page of its private memory into the child's page tables, and the child's exit removes
them again. A reference host holds some 66 MiB of it (numba and LLVM), which makes that copy and
removal about a third of a fresh process's cost. Collapsed into transparent huge pages
(``madvise(MADV_COLLAPSE)``, Linux 6.1), every 2 MiB costs one entry instead of 512; a child that
writes into one copies only the 4 KiB page it writes, as before (``arena bench``'s
``tournament_games_per_s``: docs/benchmarks.md).

Only what the process has already written is collapsed (its heap and its anonymous mappings),
once, after ``warm_up``; the holes filled on the way count towards the bot's memory (1.4 MiB for
a reference host). Where the kernel cannot (an older kernel, huge pages switched off, memory too
fragmented) nothing changes but the speed.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable

#: ``MADV_COLLAPSE`` (``<linux/mman.h>``).
MADV_COLLAPSE = 25
#: The size of a transparent huge page on x86-64 and arm64 with 4 KiB pages.
HUGE_PAGE = 2 << 20
#: Seconds a host may spend collapsing (the kernel copies about 0.4 GiB a second here: a bot
#: holding gigabytes after ``warm_up`` would otherwise add seconds to every start of its host).
COLLAPSE_SECONDS = 0.5
#: Bytes asked for in one call (about 80 ms of the kernel's copying), so that the time allowed is
#: overrun by no more than that.
CHUNK = 16 * HUGE_PAGE


def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's ``madvise`` (from the symbols the interpreter has loaded), or ``None`` where there
    is none to call."""
    try:
        function = ctypes.CDLL(None).madvise
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


def anonymous_ranges(maps: str) -> list[tuple[int, int]]:
    """The whole huge pages inside the private writable anonymous mappings (the heap included)
    of a ``/proc/PID/maps`` text, as ``(start, end)`` address pairs."""
    ranges = []
    for line in maps.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        start = (low + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE
        end = high // HUGE_PAGE * HUGE_PAGE
        if end > start:
            ranges.append((start, end))
    return ranges


def collapse_anonymous_memory(seconds: float = COLLAPSE_SECONDS) -> int:
    """Ask the kernel to back this process's anonymous memory with huge pages where whole ones
    fit, for at most about ``seconds``; returns how many bytes it collapsed (0 where it could
    not)."""
    if not hasattr(os, "sched_getaffinity"):  # not Linux
        return 0
    madvise = _madvise()
    if madvise is None:
        return 0
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            ranges = anonymous_ranges(f.read())
    except OSError:
        return 0
    deadline = time.monotonic() + seconds
    done = 0
    for start, end in ranges:
        for chunk in range(start, end, CHUNK):
            if time.monotonic() >= deadline:
                return done
            size = min(CHUNK, end - chunk)
            if madvise(chunk, size, MADV_COLLAPSE) == 0:
                done += size
    return done
