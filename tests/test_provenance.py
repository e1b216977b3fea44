"""A tournament keeps, run by run, how its bots ran (the sandbox, each bot's limits and what
enforced them), and the report says it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli.main import cli
from arena.hosting.sandbox import choose_sandbox
from leaderboard.report import sandbox_note
from leaderboard.store import Store


def test_each_run_records_the_sandbox_and_the_report_shows_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    runner = CliRunner()
    args = ["tournament", "--decks", "random:2:1", "--bots", "uniform,random", "--db", db]
    played = runner.invoke(cli, [*args, "--memory-mb", "700", "--processes", "20", "--quiet"])
    assert played.exit_code == 0, played.output
    report = runner.invoke(cli, ["report", "--json", "--db", db])
    facts = json.loads(report.stdout)["settings"]["sandboxes"]
    expected = choose_sandbox("auto").kind
    assert [f["sandbox"] for f in facts] == [expected]
    assert facts[0]["memory_mb"] == 700
    assert facts[0]["processes"] == (20 if expected == "bwrap" else None)
    text = runner.invoke(cli, ["report", "--db", db]).stdout
    assert "Bots ran in:" in text and "memory 700 MiB" in text


def test_a_tournament_of_an_older_version_says_it_was_not_recorded(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    store.create_schema()
    tid = store.start_tournament("old", {"decks": "random:2:1"}, 0, "classic", 2, [], [[1] * 16])
    assert "not recorded" in sandbox_note(store.tournament(tid))
    store.record_sandbox(tid, choose_sandbox("none").enforcement())
    store.record_sandbox(tid, choose_sandbox("none").enforcement())
    assert sandbox_note(store.tournament(tid)).startswith("Bots ran in: no sandbox")
    store.close()
