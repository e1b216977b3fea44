"""docs/writing-a-bot.md works as written: its walk-through, run by bash as a reader would run it.

The guide marks the shell blocks of its walk-through with ``<!-- guide-test -->`` on the line
before the block, and the output it promises with ``<!-- guide-test: output -->``. The marked
commands run in order in one ``bash`` (``set -euo pipefail``) in an empty directory, exactly as
written except for one substitution: the value of the guide's ``export ARENA=...`` line becomes
this checkout. Every line of an output block must then appear in what the commands since the
previous output block printed, numbers aside (a match's score is not the guide's).

It creates a virtual environment, installs the arena into it from this checkout (numba, numpy and
scipy from the package registry pip is configured with, usually its cache), writes and installs a
bot, and plays it against the reference field: a few minutes on a busy two-core machine, a minute
of it the install, hence ``slow``. The editable install refreshes the checkout's
``loveletter_arena.egg-info``, as every editable install of it does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "writing-a-bot.md"
COMMANDS = "<!-- guide-test -->"
OUTPUT = "<!-- guide-test: output -->"
#: The guide's line that says where the arena's checkout is; its value is the one substitution.
ARENA_LINE = re.compile(r"^export ARENA=(\S+)(.*)$")
#: What bash prints between blocks, so that output can be told apart by block.
BLOCK_END = "@@guide-test: end of block {}@@"
FAILED = re.compile(r"@@guide-test: failed at script line (\d+): (.*)@@")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
RULE = re.compile(r"-{3,}")
#: A content hash as a word of an output line, with what follows it (``ef648fd736086164),``).
HEX = re.compile(r"[0-9a-f]{16,64}(.*)")


@dataclass(frozen=True)
class Block:
    """A marked fenced block of the guide: ``commands`` (shell) or ``output``."""

    kind: str
    line: int
    """The guide's line number of the block's first line of text."""
    text: str


def marked_blocks(markdown: str) -> list[Block]:
    """The guide's fenced blocks marked for this test, in order."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    for number, line in enumerate(lines):
        kind = {COMMANDS: "commands", OUTPUT: "output"}.get(line.strip())
        if kind is None:
            continue
        fence = lines[number + 1] if number + 1 < len(lines) else ""
        assert fence.startswith("```"), f"guide line {number + 1}: {line} is not before a block"
        end = next(i for i in range(number + 2, len(lines)) if lines[i].startswith("```"))
        blocks.append(Block(kind, number + 3, "\n".join(lines[number + 2 : end])))
    return blocks


def script(blocks: list[Block], arena: Path) -> tuple[str, list[int]]:
    """The bash script of the command blocks, and for each of its lines the guide's line."""
    out = [
        "set -euo pipefail",
        "trap 'echo \"@@guide-test: failed at script line $LINENO: $BASH_COMMAND@@\"' ERR",
    ]
    where = [0, 0]
    substituted = 0
    for index, block in enumerate(blocks):
        if block.kind != "commands":
            continue
        for offset, line in enumerate(block.text.splitlines()):
            found = ARENA_LINE.match(line)
            if found:
                line = f"export ARENA={shlex.quote(str(arena))}{found.group(2)}"
                substituted += 1
            out.append(line)
            where.append(block.line + offset)
        out.append(f"echo '{BLOCK_END.format(index)}'")
        where.append(0)
    assert substituted == 1, f"the walk-through has {substituted} 'export ARENA=' lines, not 1"
    return "\n".join(out) + "\n", where


def line_pattern(expected: str) -> re.Pattern[str]:
    """A line of an output block as a pattern: any number where it has a number, any content
    hash where it has one (16 to 64 hex digits), any run of spaces where it has one, and a rule
    of any length where it has a rule (``-----``)."""
    words = []
    for w in expected.split():
        digest = HEX.fullmatch(w)
        if RULE.fullmatch(w):
            words.append("-+")
        elif digest:
            words.append(HEX.pattern.replace("(.*)", re.escape(digest.group(1))))
        else:
            words.append(NUMBER.pattern.join(map(re.escape, NUMBER.split(w))))
    return re.compile(r"\s+".join(words))


def clean_environment(tmp_path: Path) -> dict[str, str]:
    """The environment of a new user's shell: no arena on PATH, no virtual environment active,
    no arena settings, and ``python3`` the Python running these tests."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A script, not a link: the environment's python must lead to the real interpreter, which
    # the sandbox shows its hosts, not to a file in this test's directory, which it does not.
    python = bin_dir / "python3"
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(str(Path(sys.executable).resolve()))} "$@"\n')
    python.chmod(0o755)
    path = [str(bin_dir)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and not (Path(entry) / "arena").exists():
            path.append(entry)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PYTEST_"))}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
        env.pop(name, None)
    env["PATH"] = os.pathsep.join(path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # the reader's submissions, not this user's
    return env


def test_the_marked_blocks_are_a_walk_through() -> None:
    blocks = marked_blocks(GUIDE.read_text(encoding="utf-8"))
    commands = "\n".join(b.text for b in blocks if b.kind == "commands")
    assert blocks[0].kind == "commands" and ARENA_LINE.search(blocks[0].text.splitlines()[0])
    for step in ("python3 -m venv", ". .venv/bin/activate", 'pip install -e "$ARENA"'):
        assert step in commands
    for step in ("arena new-bot lowball", "arena bots", "arena play", "arena check lowball"):
        assert step in commands
    assert "arena match lowball" in commands and "arena tournament --gauntlet lowball" in commands
    # the editable install of section 1 is uninstalled before the submit, as the guide says
    uninstall = commands.index("pip uninstall --yes loveletter-lowball")
    assert uninstall < commands.index("arena submit ./loveletter-lowball")
    assert "python -m build" not in commands
    text, _ = script(blocks, Path("/some where/arena"))
    assert "export ARENA='/some where/arena'" in text and "~/src/loveletter-arena" not in text


def test_an_output_line_stands_for_any_numbers_but_the_same_words() -> None:
    pattern = line_pattern("match 1: lowball vs greedy: 20 games, Elo +34.9 [-153.4, +249.0]")
    assert pattern.fullmatch("match 3: lowball vs greedy: 200 games, Elo -7 [-50.5, 36.1]")
    assert not pattern.fullmatch("match 3: lowball vs random: 200 games, Elo -7 [-50.5, 36.1]")
    assert not pattern.fullmatch("match 3: lowball vs greedy: 200 games, Elo - [-50.5, 36.1]")
    row = line_pattern(" 9  lowball     1485  [1297, 1672]     40  17/0/23    42.5")
    assert row.fullmatch("10  lowball  1502  [1301, 1700]  40  20/1/19  51.2")
    assert line_pattern("-----").fullmatch("-" * 81)
    submitted = line_pattern("submitted x version 1 (0.1.0, sha256 6b1f0c3a52d41e8f) in 2 s")
    assert submitted.fullmatch("submitted x version 2 (0.1.0, sha256 ef648fd736086164) in 6.5 s")
    assert not submitted.fullmatch("submitted x version 2 (0.1.0, sha256 ef648fd) in 6.5 s")


@pytest.mark.parametrize(
    ("failing", "trapped"), [("false", True), ("false | cat", True), ("echo $UNSET_NAME", False)]
)
def test_a_failing_command_stops_the_walk_through(
    tmp_path: Path, failing: str, trapped: bool
) -> None:
    """A failing command, a failure inside a pipe or an unset variable ends the script there;
    a failing command is named with its guide line (bash does not trap an unset variable: its
    own message names the script's line)."""
    blocks = [Block("commands", 10, f"export ARENA=here\necho ran\n{failing}\necho never")]
    text, where = script(blocks, tmp_path)
    done = subprocess.run(
        ["bash", "-c", text], env={"PATH": os.defpath}, capture_output=True, text=True
    )
    assert done.returncode != 0 and "ran" in done.stdout and "never" not in done.stdout
    failed = FAILED.search(done.stdout)
    if trapped:
        assert failed and where[int(failed.group(1)) - 1] == 12
    else:
        assert "UNSET_NAME: unbound variable" in done.stderr


@pytest.mark.slow
def test_the_guide_works_as_written(tmp_path: Path, bubblewrap: None) -> None:
    """The guide's bot plays in the default sandbox (``bubblewrap``)."""
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    blocks = marked_blocks(GUIDE.read_text(encoding="utf-8"))
    text, where = script(blocks, ROOT)
    (tmp_path / "guide.sh").write_text(text)
    home = tmp_path / "reader"
    home.mkdir()
    done = subprocess.run(
        ["bash", str(tmp_path / "guide.sh")],
        cwd=home,
        env=clean_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1200,
    )
    output = done.stdout
    (tmp_path / "guide.log").write_text(output)
    if done.returncode != 0:
        failed = FAILED.search(output)
        at = f"guide line {where[int(failed.group(1)) - 1]}: {failed.group(2)}" if failed else ""
        if "No matching distribution found" in output:
            pytest.skip(f"pip cannot reach its package registry here ({at})")
        pytest.fail(f"the guide's command failed, {at}:\n{output[-6000:]}")
    segments = _segments(blocks, output)
    for block, printed in segments:
        lines = [line.strip() for line in printed.splitlines()]
        for expected in block.text.splitlines():
            if not expected.strip():
                continue
            pattern = line_pattern(expected)
            assert any(pattern.fullmatch(line) for line in lines), (
                f"guide line {block.line}: the commands before it never printed a line like\n"
                f"  {expected.strip()}\nThey printed:\n{printed[-4000:]}"
            )


def _segments(blocks: list[Block], output: str) -> list[tuple[Block, str]]:
    """Each output block with what the command blocks since the previous one printed."""
    ends = {i: output.find(BLOCK_END.format(i)) for i in range(len(blocks))}
    segments: list[tuple[Block, str]] = []
    start = 0
    last_end = 0
    for index, block in enumerate(blocks):
        if block.kind == "commands":
            position = ends[index]
            assert position >= 0, f"guide line {block.line}: the block did not run to its end"
            last_end = position
            continue
        segments.append((block, output[start:last_end]))
        start = last_end
    return segments
