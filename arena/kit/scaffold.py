"""``arena new-bot``: write a ready, pip-installable bot package to start from.

The package has a ``pyproject.toml`` with the ``arena.bots`` entry point, a plugin module that
registers its bots, a module per bot with a small documented :class:`~arena.bot.Bot` subclass, a
README and pytest tests. ``pip install -e`` it and the bots show up in ``arena bots`` at once.

A package of one bot is named after it (``loveletter-NAME``, its bot in ``bot.py``); a package
of several has a name of its own (``--package``), its bots in ``bots/NAME.py``. The generated
tests ask the plugin which bots it registers and what each declares, so they keep holding
whatever bots and parameters the author gives the package.
"""

from __future__ import annotations

import importlib.metadata as md
import keyword
import re
from dataclasses import dataclass
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
    """The Python import name of bot ``name``'s own package: ``my-bot`` -> ``loveletter_my_bot``."""
    return "loveletter_" + name.replace("-", "_")


def module_name(name: str) -> str:
    """The Python name of ``name`` (a bot's module, a package): ``-`` becomes ``_``, and a
    keyword gets a trailing ``_`` (``class`` -> ``class_``)."""
    ident = name.replace("-", "_")
    return ident + "_" if keyword.iskeyword(ident) else ident


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
    distribution."""
    key = canonical(name)
    for entry in catalog.bots.values():
        if canonical(entry.name) == key:
            raise ScaffoldError(
                f"bot name {name!r} is taken: {entry.distribution or 'an installed plugin'} "
                f"has a bot {entry.name!r}; choose another name"
            )
    if key in catalog.contested:
        raise ScaffoldError(f"bot name {name!r} is taken: {catalog.contested[key]}")


def check_distribution_free(distribution: str) -> None:
    """Raise :class:`ScaffoldError` if a distribution named ``distribution`` is installed."""
    try:
        md.distribution(distribution)
    except md.PackageNotFoundError:
        return
    raise ScaffoldError(
        f"package name {distribution!r} is taken: a distribution {distribution} is installed; "
        "choose another name"
    )


@dataclass(frozen=True)
class Layout:
    """What a package written by :func:`write_bot_package` is called: its ``distribution``, its
    Python ``package``, its ``plugin`` (the entry point's name: the bot's for a package named
    after its bot, else the package's), and its ``bots``."""

    distribution: str
    package: str
    plugin: str
    bots: tuple[str, ...]

    @classmethod
    def of(cls, bots: tuple[str, ...], package: str | None = None) -> Layout:
        """The layout for ``bots`` (one or more bot names) in a package named ``package``
        (default, for one bot only: ``loveletter-BOT``). Raises :class:`ScaffoldError` for a bad
        or repeated name, or several bots without a package name."""
        if not bots:
            raise ScaffoldError("name at least one bot")
        for name in bots:
            check_name(name)
        modules: dict[str, str] = {}
        for name in bots:
            if name in modules.values():
                raise ScaffoldError(f"bot {name!r} is named twice")
            other = modules.setdefault(module_name(name), name)
            if other != name:
                raise ScaffoldError(f"bots {other!r} and {name!r} would share a module; rename one")
        if package is None:
            if len(bots) > 1:
                raise ScaffoldError(
                    "a package of several bots needs a name of its own: give --package NAME"
                )
            return cls(f"loveletter-{bots[0]}", package_name(bots[0]), bots[0], tuple(bots))
        if len(package) > MAX_NAME or not NAME_PATTERN.match(package):
            raise ScaffoldError(
                f"bad package name {package!r}: use lower-case letters, digits and single '-' "
                f"or '_' between them, starting with a letter, at most {MAX_NAME} characters"
            )
        return cls(package, module_name(package), package, tuple(bots))

    @property
    def several(self) -> bool:
        """Whether the package holds several bots (each in ``bots/NAME.py``)."""
        return len(self.bots) > 1

    def bot_module(self, name: str) -> str:
        """The module of bot ``name``, relative to the package: ``bot`` or ``bots.NAME``."""
        return f"bots.{module_name(name)}" if self.several else "bot"


def _check_directory(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise ScaffoldError(f"{root} exists and is not a directory")
    if root.is_dir() and any(root.iterdir()):
        raise ScaffoldError(f"{root} already exists and is not empty; choose another with --dir")


def package_files(layout: Layout) -> dict[str, str]:
    """The files of the package ``layout`` describes: path relative to its root -> text."""
    package = layout.package
    values = {
        "distribution": layout.distribution,
        "package": package,
        "plugin": layout.plugin,
        "first": layout.bots[0],
        "bot_list": ", ".join(layout.bots),
        "bot_words": " ".join(layout.bots),
    }
    files = {
        "pyproject.toml": Template(_PYPROJECT).substitute(values),
        "README.md": Template(_README).substitute(
            values,
            modules="\n".join(
                f"  - `src/{package}/{layout.bot_module(name).replace('.', '/')}.py`: `{name}`"
                for name in layout.bots
            ),
        ),
        f"src/{package}/__init__.py": Template(_INIT).substitute(values),
        f"src/{package}/plugin.py": _plugin(layout),
        "tests/test_bots.py": Template(_TEST).substitute(values),
    }
    if layout.several:
        files[f"src/{package}/bots/__init__.py"] = Template(_BOTS_INIT).substitute(values)
    for name in layout.bots:
        path = f"src/{package}/{layout.bot_module(name).replace('.', '/')}.py"
        files[path] = Template(_BOT).substitute(name=name, cls=class_name(name))
    return files


def _plugin(layout: Layout) -> str:
    imports = "\n".join(
        sorted(f"from .{layout.bot_module(name)} import {class_name(name)}" for name in layout.bots)
    )
    calls = "".join(
        Template(_REGISTER if number == 0 else _uncommented(_REGISTER)).substitute(
            name=name, cls=class_name(name)
        )
        for number, name in enumerate(layout.bots)
    )
    return Template(_PLUGIN).substitute(
        imports=imports, calls=calls, bots="bot" if len(layout.bots) == 1 else "bots"
    )


def _uncommented(text: str) -> str:
    """``text`` without its comment lines (the registration's comments are written once)."""
    return "".join(line for line in text.splitlines(True) if not line.lstrip().startswith("#"))


def write_bot_package(layout: Layout, directory: Path | None = None) -> Path:
    """Write a ready package of ``layout``'s bots and return its root directory.

    The package is written to ``directory`` (default ``./DISTRIBUTION``, e.g.
    ``./loveletter-NAME``), which must not exist yet or be empty. Raises :class:`ScaffoldError`
    (an :class:`~arena.errors.ArenaError`) for a directory in the way or a file that cannot be
    written.
    """
    files = package_files(layout)
    root = (directory if directory is not None else Path(layout.distribution)).absolute()
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


# --- the templates (string.Template) ---------------------------------------------------------

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "Love Letter bots for loveletter-arena: $bot_list"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["loveletter-arena"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The arena finds bots through this entry-point group. The name on the left is the plugin's name;
# the value is the module that implements the arena_register_bots hook.
[project.entry-points."arena.bots"]
$plugin = "$package.plugin"

[tool.setuptools.packages.find]
where = ["src"]
"""

_README = """\
# $distribution

Love Letter bots for loveletter-arena, the referee and tournament runner for Love Letter bots:
$bot_list.

## Try it

```sh
pip install -e '.[test]'    # the arena finds the bots through the entry point
arena bots                  # lists $bot_list, with their parameters
arena play $first uniform   # one round against uniform: any legal move at random
arena play '$first[guard_known=false]' uniform
arena play '$first[explore=0.2]' uniform   # explore is declared 0 to 1: explore=2 is refused
arena check $bot_words   # the conformance run: do this before you submit
pytest                      # this package's own tests
```

## Where things are

- The bots, a class each, where `act(observation)` gets what the seat may know and returns one
  of `observation.legal_actions`. Make them smarter there.
$modules
- `src/$package/plugin.py`: registers the bots with the arena (name, description, parameters
  with their defaults, and the range of each number).
- `tests/test_bots.py`: asks the plugin which bots it registers, plays each in many random
  rounds of every variant and player count it claims and checks every answer is legal, the same
  play for the same seed, and that settings outside each declaration are refused.

Each bot runs in its own sandboxed process: no network, no files outside a private `/tmp`, a
time limit per move (`--move-time`, 1 s by default) and a memory limit. See the arena's
`docs/writing-a-bot.md` for every field of the observation and the rules of the game.
"""

_INIT = '''\
"""Love Letter bots for loveletter-arena: $bot_list."""
'''

_BOTS_INIT = '''\
"""The bots of $distribution, a module each."""
'''

_PLUGIN = '''\
"""The plugin: tells the arena which bots this package provides.

The arena loads this module through the ``arena.bots`` entry point in pyproject.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl

$imports


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register this package's $bots: name, factory, one-line description, parameter defaults,
    and the range of each number parameter.

    ``register`` also takes ``variants=("classic",)`` and ``players=(2,)`` to claim fewer
    variants or player counts than all of them, and ``types={"explore": float}`` where a
    default's type is not the one meant.
    """
$calls'''

_REGISTER = """\
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
"""

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
"""Every bot this package registers answers a legal action in every position of many random
rounds of each variant and player count it claims, plays the same for the same seed, and refuses
settings outside its declaration.

The tests ask the plugin which bots it registers and what each declares: they hold whatever bots
and parameters you give the package.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from arena.errors import ArenaError
from arena.game import Game, Variant
from arena.hosting.plugins import load_registry

from $package import plugin

REGISTRY = load_registry([("$plugin", plugin)], entry_points=False)
BOTS = sorted(REGISTRY.bots)
#: (bot, variant, players): each combination a bot claims that the variant's rules allow.
CLAIMED = [
    (name, variant, players)
    for name in BOTS
    for variant in REGISTRY.bots[name].variants
    for players in REGISTRY.bots[name].players
    if Variant.get(variant).min_players <= players <= Variant.get(variant).max_players
]


def play(name: str, variant: str, players: int, seed: str, rounds: int) -> list[Any]:
    """Play ``rounds`` random rounds with bot ``name`` (its defaults) in every seat; every
    action, each checked legal."""
    rng = random.Random(seed)
    actions = []
    for number in range(rounds):
        game = Game(players, variant, seed=rng.randrange(2**32), first=rng.randrange(players))
        bots = [REGISTRY.build(name)[1] for _ in range(players)]
        for bot in bots:
            bot.reset(rng.randrange(2**32))
        while not game.over:
            seat = game.turn
            observation = game.observation(seat, round=number + 1)
            action = bots[seat].act(observation)
            assert action in observation.legal_actions, (name, action, observation)
            actions.append(action)
            game.play(action)
    return actions


def test_the_plugin_registers_its_bots() -> None:
    assert REGISTRY.errors == []
    assert BOTS


@pytest.mark.parametrize(("name", "variant", "players"), CLAIMED)
def test_always_a_legal_action(name: str, variant: str, players: int) -> None:
    play(name, variant, players, f"{name}-{variant}-{players}", rounds=100)


@pytest.mark.parametrize("name", BOTS)
def test_the_same_seed_gives_the_same_play(name: str) -> None:
    _, variant, players = next(claim for claim in CLAIMED if claim[0] == name)
    assert play(name, variant, players, "again", 20) == play(name, variant, players, "again", 20)


def outside(name: str) -> list[str]:
    """Settings of bot ``name`` just outside what it declares."""
    found = []
    for param, rule in REGISTRY.bots[name].rules.items():
        if rule.kind == "bool":
            found.append(f"{param}=2")
        if rule.kind in ("int", "float") and rule.high is not None and rule.high != float("inf"):
            found.append(f"{param}={rule.high + 1}")
        if rule.kind in ("int", "float") and rule.low is not None and rule.low != -float("inf"):
            found.append(f"{param}={rule.low - 1}")
        if rule.kind == "float":
            found.append(f"{param}=nan")
    return found


@pytest.mark.parametrize(
    ("name", "setting"), [(name, setting) for name in BOTS for setting in outside(name)]
)
def test_settings_outside_the_declaration_are_refused(name: str, setting: str) -> None:
    with pytest.raises(ArenaError, match="is refused"):
        REGISTRY.build(f"{name}[{setting}]")
'''
