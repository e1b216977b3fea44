"""``arena bench``'s goals: the check of a figure against its goal, and the command marking each
figure met, missed, unchecked or without a goal (on tiny benchmarks registered for the test)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bench import measure as bench
from arena.bench.goals import Comparison, Goal, Status, Verdict, judge
from arena.bench.measure import BENCHMARKS, Benchmark
from arena.cli.main import cli


@pytest.mark.parametrize(
    ("op", "below", "equal", "above"),
    [
        (">=", "missed", "met", "met"),
        (">", "missed", "missed", "met"),
        ("<=", "met", "met", "missed"),
        ("<", "met", "missed", "missed"),
    ],
)
def test_a_figure_against_a_number(
    op: Comparison, below: Status, equal: Status, above: Status
) -> None:
    goal = Goal(op, 5_000)
    assert judge(goal, 4_999.5, {}) == Verdict(below, 5_000)
    assert judge(goal, 5_000.0, {}) == Verdict(equal, 5_000)
    assert judge(goal, 5_000.5, {}) == Verdict(above, 5_000)


def test_a_figure_against_half_of_another() -> None:
    goal = Goal(">=", 0.5, of="field_5_games_per_s")
    figures = {"field_5_games_per_s": 30.0}
    assert judge(goal, 15.0, figures) == Verdict("met", 15.0)
    assert judge(goal, 14.9, figures) == Verdict("missed", 15.0)
    assert judge(goal, 40.0, {"field_100_games_per_s": 1.0}) == Verdict("unchecked", None)


def test_a_figure_without_a_goal() -> None:
    assert judge(None, 12.0, {"x": 1.0}) == Verdict("no goal", None)


def test_goals_read_as_before() -> None:
    assert str(Goal(">=", 1_000_000)) == ">= 1,000,000"
    assert str(Goal("<=", 1.0)) == "<= 1.0"
    assert str(Goal("<", 6_144)) == "< 6,144"
    assert str(Goal(">=", 500_000, note="1M in 2 s")) == ">= 500,000 (1M in 2 s)"
    assert str(Goal(">=", 0.5, of="field_5_games_per_s")) == ">= half of field_5_games_per_s"
    assert str(Goal(">", 2, of="base")) == "> 2 x base"
    assert Goal(">=", 0.5, of="base").to_json() == {
        "op": ">=",
        "value": 0.5,
        "of": "base",
        "text": ">= half of base",
    }


def test_the_registered_goals() -> None:
    """Relative goals name a registered figure; the field goals are half of the 5-entrant one."""
    for benchmark in BENCHMARKS.values():
        if benchmark.goal is not None and benchmark.goal.of is not None:
            assert benchmark.goal.of in BENCHMARKS, benchmark.key
    for key in ("field_30_games_per_s", "field_100_games_per_s"):
        assert BENCHMARKS[key].goal == Goal(">=", 0.5, of="field_5_games_per_s")
    assert BENCHMARKS["engine_rounds_per_s"].goal == Goal(">=", 1_000_000)
    assert BENCHMARKS["referee_moves_per_s"].goal is None


def test_the_reinforcement_learning_figures() -> None:
    """The PettingZoo environment is held to 50,000 moves a second; the wrapped environment, the
    Gymnasium one and the OpenSpiel game are figures without a goal (not timed here)."""
    assert BENCHMARKS["rl_aec_steps_per_s"].goal == Goal(">=", 50_000)
    for key in (
        "rl_aec_wrapped_steps_per_s",
        "rl_single_seat_steps_per_s",
        "openspiel_steps_per_s",
    ):
        assert BENCHMARKS[key].goal is None
        assert BENCHMARKS[key].unit == "steps/s" and not BENCHMARKS[key].all_cores


def test_the_submitted_figures_sit_next_to_their_installed_counterparts() -> None:
    """The same pure-Python bot's host start, installed and submitted; the 5-entrant field played
    from a submission, held to 85% of the installed field (not timed here)."""
    keys = list(BENCHMARKS)
    for installed, submitted in (
        ("installed_host_start_seconds", "submitted_host_start_seconds"),
        ("field_5_games_per_s", "submitted_field_5_games_per_s"),
    ):
        assert keys.index(submitted) == keys.index(installed) + 1
        assert BENCHMARKS[submitted].unit == BENCHMARKS[installed].unit
    assert BENCHMARKS["host_start_seconds"].unit == "s"
    assert BENCHMARKS["installed_host_start_seconds"].goal is None
    assert BENCHMARKS["submitted_field_5_games_per_s"].all_cores
    assert BENCHMARKS["submitted_field_5_games_per_s"].goal == Goal(
        ">=", 0.85, of="field_5_games_per_s"
    )
    assert str(BENCHMARKS["submitted_field_5_games_per_s"].goal) == ">= 0.85 x field_5_games_per_s"


def test_the_submitted_field_is_the_installed_package_as_a_wheel(tmp_path: Path) -> None:
    """The wheel ``arena submit`` gets for ``submitted_field_5_games_per_s`` holds the field
    package, its ``arena.bots`` entry point and a complete RECORD."""
    with zipfile.ZipFile(bench.field_wheel(5, str(tmp_path))) as wheel:
        names = set(wheel.namelist())
        info = "loveletter_fieldbot-1.0.dist-info"
        assert {
            "loveletter_fieldbot/__init__.py",
            "loveletter_fieldbot/bot.py",
            "loveletter_fieldbot/plugin.py",
            f"{info}/METADATA",
            f"{info}/WHEEL",
            f"{info}/entry_points.txt",
            f"{info}/RECORD",
        } <= names
        assert "Name: loveletter-fieldbot" in wheel.read(f"{info}/METADATA").decode()
        assert "[arena.bots]" in wheel.read(f"{info}/entry_points.txt").decode()
        record = wheel.read(f"{info}/RECORD").decode().splitlines()
        assert {line.split(",", 1)[0] for line in record} == names
        assert "range(5)" in wheel.read("loveletter_fieldbot/plugin.py").decode()


def _three(seconds: float) -> float:
    return 3.0


def _one(seconds: float) -> float:
    return 1.0


def _ten(seconds: float) -> float:
    return 10.0


def _four(seconds: float) -> float:
    return 4.0


@pytest.fixture
def tiny_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four benchmarks that return at once in place of the real ones: one meets its goal, one
    misses it, one has none and one is held to half of that one."""
    tiny = {
        b.key: b
        for b in (
            Benchmark("quick", _three, "things/s", Goal(">=", 2)),
            Benchmark("slow", _one, "s", Goal("<=", 0.5)),
            Benchmark("base", _ten, "games/s", None),
            Benchmark("share", _four, "games/s", Goal(">=", 0.5, of="base")),
        )
    }
    monkeypatch.setattr(bench, "BENCHMARKS", tiny)


@pytest.mark.usefixtures("tiny_benchmarks")
def test_arena_bench_marks_each_figure() -> None:
    result = CliRunner().invoke(cli, ["bench", "--seconds", "0.05"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("machine: ")
    assert [line.split(None, 3) for line in lines[1:5]] == [
        ["quick", "3.000", "things/s", "met: goal >= 2"],
        ["slow", "1.000", "s", "missed: goal <= 0.5"],
        ["base", "10.000", "games/s", "no goal"],
        ["share", "4.000", "games/s", "missed: goal >= half of base (5.000)"],
    ]
    assert lines[5] == "goals: 1 met, 2 missed; 1 without a goal"


@pytest.mark.usefixtures("tiny_benchmarks")
def test_arena_bench_cannot_check_a_share_of_a_figure_it_did_not_measure() -> None:
    result = CliRunner().invoke(cli, ["bench", "--only", "share", "--seconds", "0.05"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        lines[1].split(None, 3)[3] == "unchecked: goal >= half of base, and base was not measured"
    )
    assert lines[2] == "goals: 0 met, 0 missed, 1 unchecked; 0 without a goal"


@pytest.mark.usefixtures("tiny_benchmarks")
def test_arena_bench_json_marks_each_figure() -> None:
    result = CliRunner().invoke(cli, ["bench", "--json", "--seconds", "0.05"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"figures", "machine"}
    figures = report["figures"]
    assert list(figures) == ["quick", "slow", "base", "share"]
    assert figures["quick"] == {
        "value": 3.0,
        "unit": "things/s",
        "goal": {"op": ">=", "value": 2, "of": None, "text": ">= 2"},
        "bound": 2,
        "status": "met",
    }
    assert (figures["slow"]["status"], figures["slow"]["bound"]) == ("missed", 0.5)
    assert (figures["base"]["goal"], figures["base"]["status"]) == (None, "no goal")
    assert figures["share"]["goal"]["of"] == "base"
    assert (figures["share"]["status"], figures["share"]["bound"]) == ("missed", 5.0)


@pytest.mark.usefixtures("bubblewrap")
def test_the_submitted_field_is_submitted_into_a_private_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena submit`` takes the field wheel into the benchmark's temporary store, which
    registers the field's bots under their names; the store setting is restored afterwards."""
    from arena.bench.field import field_names
    from arena.hosting.build import submit
    from arena.hosting.submissions import Store

    monkeypatch.setenv("ARENA_SUBMISSIONS", str(tmp_path / "theirs"))
    with bench._submissions(str(tmp_path)):
        assert Store().base == tmp_path / "submissions"
        record = submit(bench.field_wheel(5, str(tmp_path)), Store()).record
    assert record.distribution == "loveletter-fieldbot"
    assert sorted(record.bots) == field_names(5)
    assert Store().base == tmp_path / "theirs"
    assert not (tmp_path / "theirs").exists()
