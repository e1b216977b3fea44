"""``arena check``: the conformance run passes the reference bot, and fails misbehaving bots
with a report that names what went wrong. The misbehaving bots are a tiny package written and
pip-installed here, so their hosts load them through entry points like any third-party bot."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.errors import UnknownBotError
from arena.hosting.catalog import BotEntry, Catalog, load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.kit.conformance import CheckReport, run_checks

PLAIN = choose_sandbox("none")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "arena-conformance-test-bots"
version = "0.0.1"

[project.entry-points."arena.bots"]
conformance_test_bots = "cc_test_bots.plugin"

[tool.setuptools]
packages = ["cc_test_bots"]
"""

PLUGIN = '''\
"""Bots that break the conformance checks on purpose, each in one way."""

import random
import time

import numpy

from arena.bot import Bot
from arena.game import Action
from arena.hookspecs import hookimpl


class Liar(Bot):
    """Plays a Guard at its own seat: well formed, never legal."""

    def act(self, observation):
        return Action.from_str(f"Guard->{observation.seat}:Princess")


class Crasher(Bot):
    """Raises when it is to play a Guard."""

    def act(self, observation):
        if any(a.card == 1 for a in observation.legal_actions):
            raise ValueError("out of ideas")
        return observation.legal_actions[0]


class Sleeper(Bot):
    """Thinks for far too long about every move."""

    def act(self, observation):
        time.sleep(5)
        return observation.legal_actions[0]


class Dice(Bot):
    """Ignores the seed it is given: a different game every time."""

    def act(self, observation):
        return random.SystemRandom().choice(observation.legal_actions)


class Legacy(Bot):
    """Draws from the global generators, as much published code does."""

    def act(self, observation):
        legal = observation.legal_actions
        return legal[(random.randrange(len(legal)) + numpy.random.randint(len(legal))) % len(legal)]


class Ponderer(Bot):
    """Legal and in time, but its first move of each round takes a while."""

    def reset(self, seed):
        super().reset(seed)
        self.first = True

    def act(self, observation):
        if self.first:
            self.first = False
            time.sleep(0.12)
        return self.rng.choice(observation.legal_actions)


@hookimpl
def arena_register_bots(register):
    two = {"variants": ["classic"], "players": [2]}
    register("cc_liar", Liar, "illegal answers", {}, **two)
    register("cc_crasher", Crasher, "raises when it could play a Guard", {}, **two)
    register("cc_sleeper", Sleeper, "too slow", {}, **two)
    register("cc_dice", Dice, "not reproducible", {}, **two)
    register("cc_legacy", Legacy, "global random and numpy.random", {}, **two)
    register("cc_ponderer", Ponderer, "slow first moves", {}, **two)
    register("cc_nowhere", Liar, "claims nothing playable", {}, variants=["huibers"], players=[3])
'''


@pytest.fixture(scope="module")
def bad_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    """The catalog with the misbehaving bots installed into a temporary directory."""
    source = tmp_path_factory.mktemp("cc-src")
    (source / "cc_test_bots").mkdir()
    (source / "cc_test_bots" / "__init__.py").write_text("")
    (source / "cc_test_bots" / "plugin.py").write_text(textwrap.dedent(PLUGIN))
    (source / "pyproject.toml").write_text(PYPROJECT)
    target = tmp_path_factory.mktemp("cc-site")
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
            "--no-build-isolation", "--target", str(target), str(source),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(target))
        patch.setenv("PYTHONPATH", str(target))
        catalog = load_catalog(PLAIN)
        assert "cc_liar" in catalog.bots, catalog.errors
        yield catalog


def check(report: CheckReport, name: str) -> dict[str, object]:
    """The JSON of the check called ``name``."""
    for result in report.to_json()["checks"]:
        if result["name"] == name:
            return dict(result)
    raise AssertionError(f"no check {name!r} in {report.lines()}")


# --- the reference bot passes ---------------------------------------------------------------


def test_uniform_passes_every_check() -> None:
    stages: list[str] = []
    report = run_checks("uniform", load_catalog(PLAIN), PLAIN, rounds=20, progress=stages.append)
    assert report.passed, "\n".join(report.lines())
    names = [c.name for c in report.checks]
    assert names == [
        "claims",
        "play classic, 2 players",
        "play classic, 3 players",
        "play classic, 4 players",
        "play huibers, 2 players",
        "determinism",
        "whole match (classic, 2 players)",
        "time per move",
    ]
    assert "huibers with 3 players" in check(report, "claims")["detail"]  # type: ignore[operator]
    play = check(report, "play classic, 3 players")
    assert play["data"]["rounds"] == 20  # type: ignore[index]
    assert check(report, "determinism")["data"]["rounds"] == 12  # type: ignore[index]
    assert len(stages) == 6 and all(s.startswith("checking uniform") for s in stages)
    lines = report.lines()
    assert lines[0].startswith("arena check uniform")
    assert lines[-1].startswith("passed: all 8 checks")
    data = json.loads(json.dumps(report.to_json()))
    assert data["passed"] is True and data["bot"] == "uniform"


def test_uniform_passes_in_the_default_sandbox() -> None:
    sandbox = choose_sandbox()
    report = run_checks("uniform", load_catalog(sandbox), sandbox, rounds=4, seed=7)
    assert report.passed, "\n".join(report.lines())
    assert report.settings["sandbox"] == sandbox.kind


def test_unknown_bot_raises() -> None:
    with pytest.raises(UnknownBotError, match="nosuchbot"):
        run_checks("nosuchbot", Catalog(), PLAIN)
    with pytest.raises(UnknownBotError, match="no parameter"):
        run_checks("uniform[depth=3]", load_catalog(PLAIN), PLAIN)


def test_cli_check_uniform_exits_0() -> None:
    result = CliRunner().invoke(cli, ["check", "uniform", "--rounds", "10", "--sandbox", "none"])
    assert result.exit_code == 0, result.output
    assert "PASS  determinism" in result.stdout
    assert "passed: all" in result.stdout
    assert "checking uniform: classic, 2 players" in result.stderr


def test_cli_check_unknown_bot_is_a_one_line_error() -> None:
    result = CliRunner().invoke(cli, ["check", "nosuchbot", "--sandbox", "none"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error:"), result.stderr
    assert "nosuchbot" in lines[0]
    assert "Traceback" not in result.output


# --- misbehaving bots fail, and the report says how -------------------------------------------


def test_illegal_answers_fail_the_play_check(bad_catalog: Catalog) -> None:
    report = run_checks("cc_liar", bad_catalog, PLAIN, rounds=10, seed=3)
    assert not report.passed
    play = check(report, "play classic, 2 players")
    assert play["passed"] is False
    detail = str(play["detail"])
    assert detail.startswith("faults (illegal) in 5 of 5 rounds (stopped after 5")
    assert "Guard->0:Princess is not among the legal actions" in detail
    assert "bot in seat 1 of 2" in detail
    assert "replay: arena play uniform cc_liar --variant classic --seed" in detail
    faulty = play["data"]["faulty_rounds"]  # type: ignore[index]
    assert [f["faults"][0]["kind"] for f in faulty] == ["illegal"] * 5
    assert check(report, "whole match (classic, 2 players)")["status"] == "skip"
    assert check(report, "determinism")["status"] == "skip"
    text = "\n".join(report.lines())
    assert "FAIL  play classic, 2 players" in text
    assert text.splitlines()[-1].startswith("FAILED: 1 of 5 checks")


def test_a_crash_is_reported_with_its_message(bad_catalog: Catalog) -> None:
    report = run_checks("cc_crasher", bad_catalog, PLAIN, rounds=3)
    assert not report.passed
    detail = str(check(report, "play classic, 2 players")["detail"])
    assert "faults (crash)" in detail
    assert "ValueError: out of ideas" in detail


def test_a_slow_bot_times_out(bad_catalog: Catalog) -> None:
    report = run_checks("cc_sleeper", bad_catalog, PLAIN, rounds=2, move_time=0.1)
    assert not report.passed
    detail = str(check(report, "play classic, 2 players")["detail"])
    assert "faults (timeout) in 2 of 2 rounds" in detail
    assert "--move-time 0.1" in detail


def test_unseeded_randomness_fails_determinism(bad_catalog: Catalog) -> None:
    report = run_checks("cc_dice", bad_catalog, PLAIN, rounds=6)
    assert check(report, "play classic, 2 players")["passed"] is True
    determinism = check(report, "determinism")
    assert determinism["passed"] is False
    assert "played differently with the same seed" in str(determinism["detail"])
    assert "the first run played" in str(determinism["detail"])
    assert not report.passed


def test_the_global_generators_are_seeded_each_round(bad_catalog: Catalog) -> None:
    # code written with Python's random and numpy.random passes unchanged: the host seeds both
    report = run_checks("cc_legacy", bad_catalog, PLAIN, rounds=6)
    assert check(report, "determinism")["passed"] is True, check(report, "determinism")
    assert report.passed


def test_slow_moves_warn_but_pass(bad_catalog: Catalog) -> None:
    # the ponderer's worst move takes 0.12 s: within 20% of a 0.14 s limit, not of a 0.5 s one
    report = run_checks("cc_ponderer", bad_catalog, PLAIN, rounds=2, move_time=0.14)
    assert report.passed, "\n".join(report.lines())
    timing = check(report, "time per move")
    assert timing["status"] == "warn"
    assert "within 20% of the limit of 0.14 s" in str(timing["warnings"])
    assert any(line.startswith("WARN  time per move") for line in report.lines())
    data = timing["data"]
    assert data["max"] >= 0.12 and data["mean"] < data["max"]  # type: ignore[index]
    relaxed = run_checks("cc_ponderer", bad_catalog, PLAIN, rounds=2, move_time=0.5)
    assert check(relaxed, "time per move")["status"] == "pass"


def test_claims_with_nothing_playable_fail(bad_catalog: Catalog) -> None:
    report = run_checks("cc_nowhere", bad_catalog, PLAIN, rounds=1)
    assert not report.passed
    assert [c.name for c in report.checks] == ["claims"]
    assert "no combination can be played" in report.checks[0].detail


def test_cli_check_of_a_failing_bot_exits_1(bad_catalog: Catalog) -> None:
    args = ["check", "cc_liar", "--rounds", "2", "--sandbox", "none"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "FAIL  play classic, 2 players: faults (illegal)" in result.stdout


@pytest.mark.slow
def test_cli_checks_several_bots_in_one_run(bad_catalog: Catalog) -> None:
    args = ["check", "cc_liar", "uniform", "cc_legacy", "--rounds", "2", "--sandbox", "none"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # one of them failed
    headers = [line for line in result.stdout.splitlines() if line.startswith("arena check ")]
    assert [h.split()[2] for h in headers] == ["cc_liar", "uniform", "cc_legacy"]
    assert result.stdout.rstrip().endswith("3 bots checked: 1 failed: cc_liar")
    reports = json.loads(CliRunner().invoke(cli, [*args[:3], *args[4:], "--json"]).stdout)
    assert [(r["bot"], r["passed"]) for r in reports] == [("cc_liar", False), ("uniform", True)]
    # a bad name among them is one line before anything is played
    refused = CliRunner().invoke(cli, ["check", "uniform", "nosuchbot", "--sandbox", "none"])
    assert refused.exit_code == 2 and "nosuchbot" in refused.stderr
    assert "checking" not in refused.stderr


def test_a_report_without_checks_has_not_passed() -> None:
    entry = BotEntry("x", "", {}, "p", "", "")
    assert not CheckReport("x", entry, {}).passed
