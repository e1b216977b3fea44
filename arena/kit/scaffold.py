"""``arena new-bot``: write a ready, pip-installable bot package to start from.

The package has a ``pyproject.toml`` with the ``arena.bots`` entry point, a plugin module that
registers the bot, a bot module with a small documented :class:`~arena.bot.Bot` subclass, a
README and a pytest test. ``pip install -e`` it and the bot shows up in ``arena bots`` at once.
"""

from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING

from arena.errors import ArenaError
from arena.hosting.names import canonical

if TYPE_CHECKING:
    from arena.hosting.catalog import Catalog

#: What a bot name given to :func:`write_bot_package` must look like.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
#: The longest bot name accepted.
MAX_NAME = 40


class ScaffoldError(ArenaError):
    """A bot package cannot be written: a bad name or an unusable target directory."""


def package_name(name: str) -> str:
    """The Python import name of bot ``name``'s package: ``my-bot`` -> ``loveletter_my_bot``."""
    return "loveletter_" + name.replace("-", "_")


def class_name(name: str) -> str:
    """The bot class name for bot ``name``: ``greedy`` -> ``GreedyBot``, ``my-bot`` -> ``MyBot``."""
    camel = "".join(part.capitalize() for part in re.split(r"[-_]", name))
    # "bot" alone would be Bot, the base class it subclasses.
    return camel if camel.lower().endswith("bot") and camel != "Bot" else camel + "Bot"


def check_name(name: str) -> None:
    """Raise :class:`ScaffoldError` unless ``name`` can name a bot, its distribution and its
    Python package."""
    if len(name) > MAX_NAME or not NAME_PATTERN.match(name):
        raise ScaffoldError(
            f"bad bot name {name!r}: use lower-case letters, digits and single '-' or '_' "
            f"between them, starting with a letter, at most {MAX_NAME} characters (e.g. my-bot)"
        )


def check_name_free(name: str, catalog: Catalog) -> None:
    """Raise :class:`ScaffoldError` if bot ``name`` would clash with what is installed: a bot of
    that name (names compare folded, see :mod:`arena.hosting.names`) owned or claimed by a
    distribution, or an installed distribution ``loveletter-NAME``."""
    key = canonical(name)
    for entry in catalog.bots.values():
        if canonical(entry.name) == key:
            raise ScaffoldError(
                f"bot name {name!r} is taken: {entry.distribution or 'an installed plugin'} "
                f"has a bot {entry.name!r}; choose another name"
            )
    if key in catalog.contested:
        raise ScaffoldError(f"bot name {name!r} is taken: {catalog.contested[key]}")
    try:
        md.distribution(f"loveletter-{name}")
    except md.PackageNotFoundError:
        return
    raise ScaffoldError(
        f"bot name {name!r} is taken: a distribution loveletter-{name} is installed; "
        "choose another name"
    )


def _check_directory(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise ScaffoldError(f"{root} exists and is not a directory")
    if root.is_dir() and any(root.iterdir()):
        raise ScaffoldError(f"{root} already exists and is not empty; choose another with --dir")


def package_files(name: str) -> dict[str, str]:
    """The files of bot ``name``'s package: path relative to the package root -> text."""
    check_name(name)
    package = package_name(name)
    values = {"name": name, "package": package, "cls": class_name(name)}
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"src/{package}/__init__.py": _INIT,
        f"src/{package}/plugin.py": _PLUGIN,
        f"src/{package}/bot.py": _BOT,
        "tests/test_bot.py": _TEST,
    }
    return {path: Template(text).substitute(values) for path, text in files.items()}


def write_bot_package(name: str, directory: Path | None = None) -> Path:
    """Write a ready bot package for bot ``name`` and return its root directory.

    The package is written to ``directory`` (default ``./loveletter-NAME``), which must not exist
    yet or be empty. Its distribution is ``loveletter-NAME``, its Python package
    ``loveletter_NAME`` (``-`` becomes ``_``), and its ``arena.bots`` entry point ``NAME``.
    Raises :class:`ScaffoldError` (an :class:`~arena.errors.ArenaError`) for a bad name, a
    directory in the way, or a file that cannot be written.
    """
    files = package_files(name)
    root = (directory if directory is not None else Path(f"loveletter-{name}")).absolute()
    _check_directory(root)
    try:
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        where = exc.filename or root
        raise ScaffoldError(f"cannot write {where}: {exc.strerror or exc}") from None
    return root


# --- the templates (string.Template: $name, $package, $cls) ----------------------------------

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "loveletter-$name"
version = "0.1.0"
description = "$name: a Love Letter bot for loveletter-arena"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["loveletter-arena"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The arena finds bots through this entry-point group. The name on the left is the plugin's name;
# the value is the module that implements the arena_register_bots hook.
[project.entry-points."arena.bots"]
$name = "$package.plugin"

[tool.setuptools.packages.find]
where = ["src"]
"""

_README = """\
# loveletter-$name

The `$name` bot for loveletter-arena, the referee and tournament runner for Love Letter bots.

## Try it

```sh
pip install -e '.[test]'        # the arena finds the bot through its entry point
arena bots                      # $name is listed, with its parameters
arena play $name uniform        # one round against uniform: any legal move at random
arena play '$name[guard_known=false]' uniform
arena play '$name[explore=0.2]' uniform   # explore is declared 0 to 1: explore=2 is refused
arena check $name               # the conformance run: do this before you submit
pytest                          # this package's own tests
```

## Where things are

- `src/$package/bot.py`: the bot. `act(observation)` gets what this seat may know and returns
  one of `observation.legal_actions`. Make it smarter here.
- `src/$package/plugin.py`: registers the bot with the arena (name, description, parameters
  with their defaults, and the range of each number).
- `tests/test_bot.py`: plays many random rounds and checks every answer is legal.

The bot runs in its own sandboxed process: no network, no files outside a private `/tmp`, a
time limit per move (`--move-time`, 1 s by default) and a memory limit. See the arena's
`docs/writing-a-bot.md` for every field of the observation and the rules of the game.
"""

_INIT = '''\
"""The $name bot for loveletter-arena."""
'''

_PLUGIN = '''\
"""The plugin: tells the arena which bots this package provides.

The arena loads this module through the ``arena.bots`` entry point in pyproject.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl

from .bot import $cls


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register the $name bot: name, factory, one-line description, parameter defaults, and
    the range of each number parameter.

    ``register`` also takes ``variants=("classic",)`` and ``players=(2,)`` to claim fewer
    variants or player counts than all of them, and ``types={"explore": float}`` where a
    default's type is not the one meant.
    """
    register(
        "$name",
        $cls,
        "never plays the Princess if it can help it, Guards a card it knows, else random",
        # Every parameter with its default; `$name[guard_known=false]` overrides one. Its type
        # is the default's: `$name[guard_known=2]` is refused before anything is played.
        {"guard_known": True, "explore": 0.0},
        # Bounds of number parameters, inclusive (None: open): `$name[explore=2]` is refused.
        ranges={"explore": (0.0, 1.0)},
    )
'''

_BOT = '''\
"""The $name bot. Make it play better in :meth:`$cls.act`."""

from __future__ import annotations

from arena.bot import Bot
from arena.game import Action, Card, Observation


class $cls(Bot):
    """Plays a sure Guard hit when it knows an opponent's card, never the Princess when it has
    another choice, and otherwise a random legal action.

    ``guard_known``: whether to use what it knows for a Guard; ``explore``: the chance (0 to 1)
    of a random legal move instead (parameters, for the example).
    """

    name = "$name"

    def __init__(self, guard_known: bool = True, explore: float = 0.0) -> None:
        # Bot.__init__ makes self.rng; the referee calls self.reset(seed) before every round,
        # which reseeds it, so the bot plays the same way for the same seed.
        super().__init__()
        self.guard_known = guard_known
        self.explore = explore

    def act(self, observation: Observation) -> Action:
        """Choose this seat's move: one of ``observation.legal_actions``.

        Fields used here (all of them are described in the arena's docs/writing-a-bot.md):

        - ``legal_actions``: every action the rules allow now. Answering anything else is a
          fault that knocks this seat out of the round.
        - ``known``: per seat, the card this seat knows that seat holds (from a Priest look, a
          Baron tie or a King swap), or ``None``.
        - ``hand`` (not used here): this seat's two cards on its turn.
        """
        choices = list(observation.legal_actions)
        # With the chance `explore`, any legal move: play varies, and can even be a blunder.
        if self.explore and self.rng.random() < self.explore:
            return self.rng.choice(choices)

        # Playing the Princess knocks us out: do it only when there is nothing else to play.
        safe = [action for action in choices if action.card != Card.PRINCESS]
        if safe:
            choices = safe

        # A Guard naming a card we know an opponent holds knocks that opponent out for sure.
        if self.guard_known:
            for action in choices:
                if (
                    action.card == Card.GUARD
                    and action.target is not None
                    and action.guess == observation.known[action.target]
                ):
                    return action

        # Otherwise anything legal; draw from self.rng so that a seed gives the same play.
        return self.rng.choice(choices)
'''

_TEST = '''\
"""The $name bot answers a legal action in every position of many random rounds."""

from __future__ import annotations

import random

import pytest
from arena.errors import ArenaError
from arena.game import Card, Game
from arena.hosting.plugins import load_registry

from $package import plugin
from $package.bot import $cls


@pytest.mark.parametrize(
    ("variant", "players"), [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]
)
def test_always_a_legal_action(variant: str, players: int) -> None:
    rng = random.Random(f"{variant}-{players}")
    for number in range(100):
        game = Game(players, variant, seed=rng.randrange(2**32), first=rng.randrange(players))
        bots = [
            $cls(guard_known=rng.random() < 0.5, explore=rng.choice([0.0, 0.3]))
            for _ in range(players)
        ]
        for bot in bots:
            bot.reset(rng.randrange(2**32))
        while not game.over:
            seat = game.turn
            observation = game.observation(seat, round=number + 1)
            action = bots[seat].act(observation)
            assert action in observation.legal_actions, (action, observation)
            if action.card == Card.PRINCESS and not bots[seat].explore:
                assert {a.card for a in observation.legal_actions} == {Card.PRINCESS}
            game.play(action)


def test_the_plugin_registers_the_bot() -> None:
    registry = load_registry([("$name-test", plugin)], entry_points=False)
    info = registry.get("$name")
    assert info.params == {"guard_known": True, "explore": 0.0}
    spec, bot = registry.build("$name[guard_known=false,explore=0.5]")
    assert str(spec) == "$name[guard_known=false,explore=0.5]"
    assert isinstance(bot, $cls)
    assert bot.guard_known is False and bot.explore == 0.5


@pytest.mark.parametrize("setting", ["explore=2", "explore=nan", "guard_known=2"])
def test_settings_outside_the_declaration_are_refused(setting: str) -> None:
    registry = load_registry([("$name-test", plugin)], entry_points=False)
    with pytest.raises(ArenaError, match="is refused"):
        registry.build(f"$name[{setting}]")
'''
