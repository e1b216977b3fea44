"""Build small wheels for tests, byte by byte (no package code runs, no network)."""

from __future__ import annotations

from pathlib import Path

from arena.kit.wheel import write_wheel

#: A plugin module registering one bot ``{name}`` that plays its first legal action; ``{extra}``
#: is code run when the plugin is imported (in its host).
PLUGIN = """
from arena.bot import Bot
from arena.hookspecs import hookimpl


class FirstLegal(Bot):
    def act(self, observation):
        return observation.legal_actions[0]


{extra}


@hookimpl
def arena_register_bots(register):
    register({name!r}, {factory}, "a submitted bot")
"""


def make_wheel(
    directory: Path,
    distribution: str,
    version: str,
    files: dict[str, str],
    entry_points: str,
    requires: tuple[str, ...] = (),
    top_level: str | None = None,
) -> Path:
    """A wheel of ``distribution`` holding ``files`` (path -> text) with ``entry_points`` (the
    text of ``entry_points.txt``)."""
    return write_wheel(
        directory,
        distribution,
        version,
        files,
        entry_points=entry_points,
        requires=requires,
        top_level=top_level,
    )


def bot_wheel(
    directory: Path,
    distribution: str,
    bot: str,
    version: str = "1.0",
    extra: str = "",
    factory: str = "FirstLegal",
    more_files: dict[str, str] | None = None,
    more_entry_points: str = "",
    top_level: str | None = None,
) -> Path:
    """A wheel whose package (``distribution`` with ``_``) registers bot ``bot``."""
    package = distribution.replace("-", "_")
    files = {
        f"{package}/__init__.py": "",
        f"{package}/plugin.py": PLUGIN.format(name=bot, extra=extra, factory=factory),
        **(more_files or {}),
    }
    entry_points = f"[arena.bots]\n{bot} = {package}.plugin\n{more_entry_points}"
    return make_wheel(directory, distribution, version, files, entry_points, top_level=top_level)


#: The packages of ``tests/fixtures`` (each a project with a ``pyproject.toml``).
FIXTURES = Path(__file__).parent / "fixtures"


def fixture_package(fixture: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The distribution name, the package's files (path -> text) and the ``arena.bots`` entry
    points (name -> module) of the fixture project ``tests/fixtures/<fixture>``."""
    import tomllib

    root = FIXTURES / fixture
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    files = {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted((root / fixture).rglob("*.py"))
    }
    return project["name"], files, dict(project["entry-points"]["arena.bots"])


def fixture_wheel(directory: Path, fixture: str, plugins: tuple[str, ...] = ()) -> Path:
    """A wheel of the fixture project ``fixture`` with its entry points ``plugins`` (all when
    empty), built byte by byte (its code never runs here)."""
    distribution, files, entry_points = fixture_package(fixture)
    chosen = {k: v for k, v in entry_points.items() if not plugins or k in plugins}
    text = "[arena.bots]\n" + "".join(f"{k} = {v}\n" for k, v in chosen.items())
    return make_wheel(directory, distribution, "1.0", files, text)


def fixture_project(
    directory: Path, fixture: str, plugins: tuple[str, ...] = (), setup_body: str = ""
) -> Path:
    """The fixture project ``fixture`` as a source project with a ``setup.py`` (which runs
    ``setup_body`` when the package is built) and its entry points ``plugins`` (all when
    empty)."""
    distribution, files, entry_points = fixture_package(fixture)
    for path, text in files.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text)
    chosen = [f"{k} = {v}" for k, v in entry_points.items() if not plugins or k in plugins]
    (directory / "setup.py").write_text(
        f"from setuptools import setup\n{setup_body}\n"
        f"setup(name={distribution!r}, version='1.0', packages=[{fixture!r}],"
        f" entry_points={{'arena.bots': {chosen!r}}})\n"
    )
    return directory
