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
from arena.kit.scaffold import (
    Layout,
    ScaffoldError,
    class_name,
    module_name,
    package_name,
    write_bot_package,
)


def one(name: str) -> Layout:
    """The layout of a package of the one bot ``name``."""
    return Layout.of((name,))


def test_writes_a_complete_package(tmp_path: Path) -> None:
    root = write_bot_package(one("my-bot"), tmp_path / "pkg")
    assert root == tmp_path / "pkg"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/loveletter_my_bot/__init__.py",
        "src/loveletter_my_bot/bot.py",
        "src/loveletter_my_bot/plugin.py",
        "tests/test_bots.py",
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


def test_a_package_of_several_bots_has_a_name_of_its_own(tmp_path: Path) -> None:
    layout = Layout.of(("ismcts-o", "pimc-o", "import"), "omarov-agents")
    root = write_bot_package(layout, tmp_path / "omarov-agents")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/omarov_agents/__init__.py",
        "src/omarov_agents/bots/__init__.py",
        "src/omarov_agents/bots/import_.py",
        "src/omarov_agents/bots/ismcts_o.py",
        "src/omarov_agents/bots/pimc_o.py",
        "src/omarov_agents/plugin.py",
        "tests/test_bots.py",
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["project"]["name"] == "omarov-agents"
    entry_points = project["project"]["entry-points"]["arena.bots"]
    assert entry_points == {"omarov-agents": "omarov_agents.plugin"}
    plugin = (root / "src/omarov_agents/plugin.py").read_text()
    for name, cls in (("ismcts-o", "IsmctsOBot"), ("pimc-o", "PimcOBot"), ("import", "ImportBot")):
        assert f'register(\n        "{name}",\n        {cls},' in plugin
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(), str(path))


@pytest.mark.parametrize(
    ("bots", "package", "said"),
    [
        (("a", "b"), None, "needs a name of its own: give --package NAME"),
        (("a", "a"), "pack", "bot 'a' is named twice"),
        (("my-bot", "my_bot"), "pack", "would share a module"),
        (("a",), "Bad Name", "bad package name"),
        (("a", "B"), "pack", "bad bot name"),
        ((), "pack", "name at least one bot"),
    ],
)
def test_bad_layouts_are_refused(bots: tuple[str, ...], package: str | None, said: str) -> None:
    with pytest.raises(ScaffoldError, match=said):
        Layout.of(bots, package)


def test_names() -> None:
    assert package_name("my-bot") == "loveletter_my_bot"
    assert module_name("my-bot") == "my_bot" and module_name("class") == "class_"
    assert class_name("greedy") == "GreedyBot"
    assert class_name("deep_mind2") == "DeepMind2Bot"
    assert class_name("robot") == "Robot"
    assert class_name("bot") == "BotBot"


def test_default_directory_is_loveletter_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = write_bot_package(one("greedy"), None)
    assert root == tmp_path / "loveletter-greedy"
    assert (root / "src" / "loveletter_greedy" / "bot.py").is_file()


def test_an_existing_empty_directory_is_used(tmp_path: Path) -> None:
    assert write_bot_package(one("greedy"), tmp_path) == tmp_path
    assert (tmp_path / "pyproject.toml").is_file()


@pytest.mark.parametrize(
    "name", ["", "1bot", "my bot", "My-Bot", "bad/name", "a--b", "bot-", "_bot", "é", "x" * 41]
)
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ScaffoldError, match="bad bot name") as info:
        write_bot_package(one(name), tmp_path / "pkg")
    assert isinstance(info.value, ArenaError) and "\n" not in str(info.value)
    assert not (tmp_path / "pkg").exists()


def test_a_non_empty_directory_or_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(ScaffoldError, match="not empty"):
        write_bot_package(one("greedy"), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    with pytest.raises(ScaffoldError, match="not a directory"):
        write_bot_package(one("greedy"), tmp_path / "notes.txt")


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
    several = runner.invoke(cli, ["new-bot", "sharp", "blunt", "--dir", str(tmp_path / "s")])
    assert several.exit_code == 2 and "--package NAME" in several.output
    taken = runner.invoke(cli, ["new-bot", "sharp", "greedy", "--package", "edges"])
    assert taken.exit_code == 2 and "'greedy' is taken" in taken.output
    mine = runner.invoke(cli, ["new-bot", "loveletter-arena", "--package", "loveletter-arena"])
    assert mine.exit_code == 2 and "package name 'loveletter-arena' is taken" in mine.output
    both = ["new-bot", "sharp", "blunt", "--package", "edges", "--sandbox", "none"]
    done = runner.invoke(cli, [*both, "--dir", str(tmp_path / "e")])
    assert done.exit_code == 0, done.output
    assert "a package of 2 bots" in done.output and "arena check sharp blunt" in done.output


# --- the written package, pip-installed and played --------------------------------------------


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A package of two bots written by ``arena new-bot scaffolded scaffolded-two --package
    scaffold-pack``, and the directory it is pip-installed into."""
    base = tmp_path_factory.mktemp("scaffold")
    layout = Layout.of(("scaffolded", "scaffolded-two"), "scaffold-pack")
    root = write_bot_package(layout, base / "scaffold-pack")
    site = base / "site"
    pip_install(root, site)
    return root, site


def test_the_installed_package_is_listed_at_once(scaffolded: tuple[Path, Path]) -> None:
    _, site = scaffolded
    data = arena_json(site, "bots", "--sandbox", "none", cwd=site.parent)
    entries = {b["name"]: b for b in data["bots"]}
    for name in ("scaffolded", "scaffolded-two"):
        entry = entries[name]
        assert entry["distribution"] == "scaffold-pack"
        assert entry["plugin"] == "scaffold-pack"
        assert entry["params"] == {"guard_known": True, "explore": 0.0}
        assert entry["rules"]["explore"] == {"type": "float", "min": 0.0, "max": 1.0}
    assert data["errors"] == []


def test_the_installed_bot_plays_in_the_default_sandbox(
    scaffolded: tuple[Path, Path], bubblewrap: None
) -> None:
    _, site = scaffolded
    record = arena_json(
        site, "play", "scaffolded-two[guard_known=false]", "uniform", "--seed", "3", cwd=site.parent
    )
    assert record["seats"] == ["scaffolded-two[guard_known=false]", "uniform"]
    assert record["faults"] == []


def own_tests(root: Path, path: str) -> subprocess.CompletedProcess[str]:
    """Run the package's own tests in ``root`` with ``path`` before ``PYTHONPATH``."""
    path = os.pathsep.join(p for p in (path, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
    )


def test_the_package_s_own_tests_pass(scaffolded: tuple[Path, Path]) -> None:
    root, site = scaffolded
    done = own_tests(root, str(site))
    assert done.returncode == 0, done.stdout[-3000:]
    # per bot: 4 claimed combinations, the same seed, 4 settings outside; and the registration
    assert "19 passed" in done.stdout


def test_the_package_s_own_tests_follow_its_bots_and_parameters(tmp_path: Path) -> None:
    """The generated tests ask the plugin what it registers: other parameters, other ranges and
    claims, and a bot more, and they test those (and still catch an illegal answer)."""
    root = write_bot_package(one("morph"), tmp_path / "morph")
    plugin = root / "src/loveletter_morph/plugin.py"
    text = plugin.read_text()
    text = text.replace('{"guard_known": True, "explore": 0.0}', '{"explore": 0.5}')
    text = text.replace(
        'ranges={"explore": (0.0, 1.0)},',
        """ranges={"explore": (0.25, 0.75)},
        players=(2, 3),
    )
    register("morph-duel", MorphBot, "two players only", {"explore": 0.25}, players=(2,)""",
    )
    plugin.write_text(text)
    done = own_tests(root, str(root / "src"))
    assert done.returncode == 0, done.stdout[-3000:]
    # morph: 3 combinations, its seed, 3 outside; morph-duel: 2, its seed, nan; registration
    assert "12 passed" in done.stdout
    bot = root / "src/loveletter_morph/bot.py"
    bot.write_text(bot.read_text().replace("return self.rng.choice(choices)\n", "return None\n"))
    broken = own_tests(root, str(root / "src"))
    assert broken.returncode == 1 and "test_always_a_legal_action" in broken.stdout
