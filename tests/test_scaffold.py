"""``arena new-bot``: the package it writes, bad input, and the package installed and played."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_examples import arena_json, pip_install

from arena.cli.main import cli
from arena.errors import ArenaError
from arena.kit.scaffold import ScaffoldError, class_name, package_name, write_bot_package


def test_writes_a_complete_package(tmp_path: Path) -> None:
    root = write_bot_package("my-bot", tmp_path / "pkg")
    assert root == tmp_path / "pkg"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/loveletter_my_bot/__init__.py",
        "src/loveletter_my_bot/bot.py",
        "src/loveletter_my_bot/plugin.py",
        "tests/test_bot.py",
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert project["project"]["name"] == "loveletter-my-bot"
    assert "loveletter-arena" in project["project"]["dependencies"]
    entry_points = project["project"]["entry-points"]["arena.bots"]
    assert entry_points == {"my-bot": "loveletter_my_bot.plugin"}
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(), str(path))
    bot = (root / "src/loveletter_my_bot/bot.py").read_text()
    assert "class MyBot(Bot):" in bot and "def act(self, observation: Observation)" in bot


def test_names() -> None:
    assert package_name("my-bot") == "loveletter_my_bot"
    assert class_name("greedy") == "GreedyBot"
    assert class_name("deep_mind2") == "DeepMind2Bot"
    assert class_name("robot") == "Robot"
    assert class_name("bot") == "BotBot"


def test_default_directory_is_loveletter_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = write_bot_package("greedy", None)
    assert root == tmp_path / "loveletter-greedy"
    assert (root / "src" / "loveletter_greedy" / "bot.py").is_file()


def test_an_existing_empty_directory_is_used(tmp_path: Path) -> None:
    assert write_bot_package("greedy", tmp_path) == tmp_path
    assert (tmp_path / "pyproject.toml").is_file()


@pytest.mark.parametrize(
    "name", ["", "1bot", "my bot", "My-Bot", "bad/name", "a--b", "bot-", "_bot", "é", "x" * 41]
)
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ScaffoldError, match="bad bot name") as info:
        write_bot_package(name, tmp_path / "pkg")
    assert isinstance(info.value, ArenaError) and "\n" not in str(info.value)
    assert not (tmp_path / "pkg").exists()


def test_a_non_empty_directory_or_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(ScaffoldError, match="not empty"):
        write_bot_package("greedy", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    with pytest.raises(ScaffoldError, match="not a directory"):
        write_bot_package("greedy", tmp_path / "notes.txt")


def test_cli_writes_the_package_and_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    new_bot = ["new-bot", "sharp", "--sandbox", "none", "--dir", str(tmp_path / "g")]
    done = runner.invoke(cli, new_bot)
    assert done.exit_code == 0, done.output
    assert "wrote a bot package in" in done.output and "arena check sharp" in done.output
    again = runner.invoke(cli, new_bot)
    assert again.exit_code == 2
    assert again.output.startswith("arena: error: ") and again.output.count("\n") == 1
    bad = runner.invoke(cli, ["new-bot", "Not A Name", "--dir", str(tmp_path / "n")])
    assert bad.exit_code == 2 and "bad bot name" in bad.output


# --- the written package, pip-installed and played --------------------------------------------


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A package written by ``write_bot_package("scaffolded")`` and the directory it is
    pip-installed into."""
    base = tmp_path_factory.mktemp("scaffold")
    root = write_bot_package("scaffolded", base / "loveletter-scaffolded")
    site = base / "site"
    pip_install(root, site)
    return root, site


def test_the_installed_package_is_listed_at_once(scaffolded: tuple[Path, Path]) -> None:
    _, site = scaffolded
    data = arena_json(site, "bots", "--sandbox", "none", cwd=site.parent)
    entry = {b["name"]: b for b in data["bots"]}["scaffolded"]
    assert entry["distribution"] == "loveletter-scaffolded"
    assert entry["plugin"] == "scaffolded"
    assert entry["params"] == {"guard_known": True, "explore": 0.0}
    assert entry["rules"]["explore"] == {"type": "float", "min": 0.0, "max": 1.0}
    assert data["errors"] == []


def test_the_installed_bot_plays_in_the_default_sandbox(
    scaffolded: tuple[Path, Path], bubblewrap: None
) -> None:
    _, site = scaffolded
    record = arena_json(
        site, "play", "scaffolded[guard_known=false]", "uniform", "--seed", "3", cwd=site.parent
    )
    assert record["seats"] == ["scaffolded[guard_known=false]", "uniform"]
    assert record["faults"] == []


def test_the_package_s_own_tests_pass(scaffolded: tuple[Path, Path]) -> None:
    root, site = scaffolded
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "8 passed" in done.stdout
