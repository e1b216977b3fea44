"""The ``arena`` command: help everywhere, play, bench, and one-line errors for bad input."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from arena.cli.main import cli


def run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(all_commands(command, (*prefix, name)))
    return found


@pytest.mark.parametrize("path", all_commands(cli))
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = run(*path, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    assert command.help, f"{' '.join(path)} has no docstring"


def test_play_prints_a_numbered_public_log() -> None:
    result = run("play", "uniform", "uniform", "--seed", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].lstrip().startswith("1. ")
    assert "round over" in lines[-1]
    assert "dealt" not in result.output and "draws Guard" not in result.output


def test_play_reveal_shows_hidden_cards() -> None:
    result = run("play", "uniform", "uniform", "--seed", "3", "--reveal")
    assert result.exit_code == 0
    assert "deck (top first):" in result.output
    assert "is dealt" in result.output


def test_play_json_is_the_whole_record() -> None:
    result = run("play", "uniform", "uniform", "uniform", "--seed", "8", "--json")
    assert result.exit_code == 0
    record = json.loads(result.stdout)
    assert record["players"] == 3
    assert record["seats"] == ["uniform"] * 3
    assert sorted(record["deck"]) == [1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8]
    assert record["winners"]


def test_play_with_a_given_deck() -> None:
    deck = "3,1,1,1,3,8,1,1,2,2,4,4,5,5,6,7"  # seat 0: Baron; seat 1: Princess; seat 0 draws Guard
    result = run("play", "uniform", "uniform", "--variant", "huibers", "--deck", deck, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["deck"] == [int(c) for c in deck.split(",")]


def test_play_match() -> None:
    result = run("play", "uniform", "uniform", "--match", "--seed", "2")
    assert result.exit_code == 0
    assert "== round 1 ==" in result.output
    assert "match won by seat" in result.output


#: A classic deck, top card first: seat 0 is dealt a Guard and draws a Priest.
DECK = "8,1,1,1,1,1,2,2,3,3,4,4,5,5,6,7"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("play", "uniform", "nosuchbot"), "unknown bot 'nosuchbot'"),
        (("play", "uniform", "uniform", "--deck", "1,2,3"), "not a deck"),
        (
            ("play", "uniform", "uniform", "--deck", "1,1,1,1,1,1,2,3,3,4,4,5,5,6,7,8"),
            "too many Guard",
        ),
        (("play", "uniform", "uniform", "--deck", "1,1,1,1,1,2,2,3,3,4,4,5,5,6,7,9"), "no card"),
        (("play", "uniform", "uniform", "uniform", "--variant", "huibers"), "2 players"),
        (("play", "uniform"), "not 1"),
        (("play", "uniform", "uniform", "--variant", "nope"), "nope"),
        (("play", "uniform", "uniform", "--bogus"), "--bogus"),
        (("play", "uniform[depth=3]", "uniform"), "no parameter 'depth'"),
        (("play", "uniform[", "uniform"), "bad bot name"),
        (("bench", "--only", "nothing"), "unknown benchmark"),
        (("play", "uniform", "uniform", "--deck", DECK, "--moves", "Guard->1:Guard"), "Guard"),
        (("play", "uniform", "uniform", "--deck", DECK, "--moves", "Gard->1:King"), "cannot parse"),
        (("play", "uniform", "uniform", "--deck", DECK, "--moves", "Baron->1"), "is not legal"),
        (("play", "uniform", "uniform", "--moves", "Guard->1:King"), "--moves needs --deck"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], needle: str) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("arena: error:")
    assert needle in lines[0]
    assert "Traceback" not in result.output


def test_bench_json_of_two_quick_real_benchmarks() -> None:
    """The slow benchmarks are left out: tests/test_bench_goals.py checks the goals' marks."""
    args = ["--only", "engine_rounds_per_s", "--only", "referee_moves_per_s"]
    result = run("bench", *args, "--json", "--seconds", "0.05")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    figures = report["figures"]
    assert list(figures) == ["engine_rounds_per_s", "referee_moves_per_s"]
    assert figures["engine_rounds_per_s"]["value"] > 0
    assert figures["engine_rounds_per_s"]["status"] in ("met", "missed")
    assert figures["referee_moves_per_s"]["value"] > 0
    assert figures["referee_moves_per_s"]["status"] == "no goal"
    assert report["machine"]["cores"] >= 1
