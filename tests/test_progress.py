"""The progress line: no estimate until games are being stored, then one from the games stored
since the first ones (host starts and compiling do not count)."""

from __future__ import annotations

import io

from arena.tournament.progress import ProgressLine


def test_no_estimate_until_games_are_being_played() -> None:
    line = ProgressLine(stream=io.StringIO())
    start = line._start
    assert "starting the bots" in line.text(0, 1000, 0, now=start + 30)
    assert "ETA" not in line.text(0, 1000, 0, now=start + 30)
    first = line.text(50, 1000, 0, now=start + 40)  # the first block, after 40 s of starting
    assert "ETA" not in first and "starting" not in first
    later = line.text(150, 1000, 0, now=start + 50)  # 100 more games in 10 s
    assert "10.0/s" in later and "ETA 1:25" in later


def test_a_resumed_run_counts_only_its_own_games() -> None:
    line = ProgressLine(stream=io.StringIO())
    start = line._start
    line.text(900, 1000, 0, now=start)
    assert "starting the bots" in line.text(900, 1000, 0, now=start + 5)
    line.text(910, 1000, 0, now=start + 10)
    assert "2.0/s" in line.text(920, 1000, 0, now=start + 15)


def test_the_last_line_has_no_estimate() -> None:
    line = ProgressLine(stream=io.StringIO())
    start = line._start
    line.text(0, 100, 0, now=start)
    line.text(50, 100, 0, now=start + 1)
    done = line.text(100, 100, 2, now=start + 2)
    assert "ETA" not in done and "faults 2" in done and "100/100" in done


def test_no_estimate_while_kernels_compile() -> None:
    compiling = [True]
    line = ProgressLine(
        stream=io.StringIO(), waiting=lambda: "compiling kernels" if compiling[0] else None
    )
    start = line._start
    line.text(0, 1000, 0, now=start)
    held = line.text(8, 1000, 0, now=start + 70)  # a few games while the bots compile
    assert "compiling kernels" in held and "ETA" not in held
    compiling[0] = False
    line.text(10, 1000, 0, now=start + 80)
    assert "20.0/s" in line.text(210, 1000, 0, now=start + 90)
