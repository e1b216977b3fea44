"""How a reference bot declares itself, how the package's bots are found, and :class:`PolicyBot`.

A reference bot is one module of this package, and nothing outside it names the bot. The module
declares the bot in a module-level ``BOT``:

* ``BOT = PolicyInfo(...)``: a bot whose decisions are a numba *policy*, the module's
  ``@njit`` function ``<name>_policy(view, legal, nlegal, rng, params, table) -> action``. ``view``
  is the seat's view array (:mod:`arena.engine.view`, the one definition of what a seat knows;
  int32), ``legal[:nlegal]`` its legal actions packed (int32), ``rng`` an engine generator state
  (:mod:`arena.engine.rng`; uint64), ``params`` the bot's numeric parameters in the order the
  declaration lists them (float64), ``table`` a constant int16 array: what the module's
  ``policy_table()`` returns if it defines one (``dp`` reads its Dynamic Programming table so),
  else an empty array. The answer is one of the legal actions, an int64. Every policy takes the
  same arguments, so the simulator (:mod:`bots.simulate`) calls any of them through a function
  pointer, and :class:`PolicyBot`, the whole Python side of such a bot, hands the observation's
  view to the same compiled function: the bot and its simulated self are one decision function.
* ``BOT = PlainBot(..., cls="Name")``: a plain Python bot, the module's
  :class:`~arena.bot.Bot` subclass ``Name``.

The declaration is read from the module's source (:func:`read_declaration`), not by importing the
module: listing the bots imports no bot, and a bot's host imports (and compiles the kernels of)
its own bot's module and no other. So its arguments are literals, or :data:`MAX_COUNT`.
:func:`reference_bots` finds every module of the package with a ``BOT``, so adding a bot is
adding its module; the arena's plugin (:mod:`bots.plugin`) registers them all.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy comes with the kernels, when a policy bot is built
    import numpy as np

from arena.bot import Bot
from arena.botspec import ParamRule, declare_params
from arena.game import Action, Observation

#: The largest count a search parameter takes (iterations, playouts, determinizations, depth):
#: policies read their parameters as float64 and convert them to machine integers.
MAX_COUNT = 10**9

#: The module-level name of a bot module's declaration.
DECLARATION = "BOT"

#: The function a policy module may define to give its policy's ``table`` argument.
TABLE_LOADER = "policy_table"

#: The names a declaration may use besides literals.
_NAMES: dict[str, Any] = {"MAX_COUNT": MAX_COUNT}


class DeclarationError(ValueError):
    """A bot module's ``BOT`` that cannot be read from its source."""


@dataclass(frozen=True)
class ReferenceBot:
    """A reference bot's declaration: its name, one-line description, parameter defaults (in
    the order a policy reads them from ``params``), the variants and player counts it plays
    (``None``: all), its parameters' bounds (inclusive, ``None`` open; see
    :func:`arena.botspec.declare_params`) and where the bot listing shows it (lower first, ties
    by name). ``module`` and ``path`` say where :func:`reference_bots` found it."""

    name: str
    description: str
    params: dict[str, float | int] = field(default_factory=dict)
    variants: tuple[str, ...] | None = None
    players: tuple[int, ...] | None = None
    ranges: dict[str, tuple[float | int | None, float | int | None]] = field(default_factory=dict)
    order: int = 1000
    module: str = field(default="", compare=False)
    path: Path | None = field(default=None, compare=False, repr=False)

    def rules(self) -> dict[str, ParamRule]:
        """Each parameter's type and bounds."""
        return declare_params(self.name, self.params, self.ranges)

    def factory(self) -> Callable[..., Bot]:
        """What builds the bot: ``factory()(**settings)``; its module is imported when a bot is
        built, not before."""
        raise NotImplementedError

    def register(self, register: Callable[..., Any]) -> None:
        """Register the bot through a plugin's ``register`` (:mod:`arena.hookspecs`)."""
        register(
            self.name,
            self.factory(),
            self.description,
            dict(self.params),
            variants=self.variants,
            players=self.players,
            ranges=dict(self.ranges),
        )

    def load(self) -> Any:
        """The bot's module, imported."""
        if not self.module:
            raise LookupError(f"bot {self.name!r}: use the declaration reference_bots() found")
        return importlib.import_module(self.module)


@dataclass(frozen=True)
class PlainBot(ReferenceBot):
    """A reference bot written as a plain Python bot: its module's class ``cls``; ``kernels``
    says that it runs numba kernels (the trusted compile step then compiles them before play,
    as it does a policy's: :mod:`arena.hosting.kernels`)."""

    cls: str = field(default="", kw_only=True)
    kernels: bool = field(default=False, kw_only=True)

    def factory(self) -> Callable[..., Bot]:
        """A function that imports the module and builds its ``cls``."""

        def build(**settings: Any) -> Bot:
            bot: Bot = getattr(self.load(), self.cls)(**settings)
            return bot

        build.__doc__ = self.description
        return build


@dataclass(frozen=True)
class PolicyInfo(ReferenceBot):
    """A reference bot with a numba policy (see the module docstring)."""

    def param_array(self, settings: dict[str, Any] | None = None) -> np.ndarray:
        """The ``params`` array for ``settings`` (defaults where not given)."""
        import numpy as np

        values = {**self.params, **(settings or {})}
        return np.array([float(values[k]) for k in self.params], dtype=np.float64)

    def kernel(self) -> Callable[..., int]:
        """The policy's compiled function, ``<module>.<name>_policy``, imported on first use:
        a bot's host loads (and compiles) its own policy's kernels and no other's."""
        function: Callable[..., int] = getattr(self.load(), f"{self.name}_policy")
        return function

    def table(self) -> np.ndarray:
        """The policy's ``table`` argument: what its module's ``policy_table()`` returns, or
        an empty int16 array for a module without one."""
        loader = getattr(self.load(), TABLE_LOADER, None)
        if loader is None:
            import numpy as np

            return np.zeros(0, dtype=np.int16)
        table: np.ndarray = loader()
        return table

    def factory(self) -> type[PolicyBot]:
        """The :class:`PolicyBot` subclass that plays this policy."""
        return type(
            f"{self.name.capitalize()}Bot",
            (PolicyBot,),
            {"info": self, "__doc__": self.description},
        )


#: The declaration types a ``BOT`` may call, by name.
_KINDS: dict[str, type[ReferenceBot]] = {"PolicyInfo": PolicyInfo, "PlainBot": PlainBot}


class _Names(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _NAMES:
            return ast.copy_location(ast.Constant(_NAMES[node.id]), node)
        return node


def _literal(node: ast.expr) -> Any:
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and name.id not in _NAMES:
            raise ValueError(f"the name {name.id!r} (line {name.lineno})")
    return ast.literal_eval(_Names().visit(node))


def _declaration_start(source: str) -> int:
    """Where a line ``BOT =`` (or ``BOT:``) begins in ``source``, or -1 (a plain substring
    search first: most modules of the package hold no declaration)."""
    at = -1
    while True:
        at = source.find(DECLARATION, at + 1)
        if at < 0:
            return -1
        if (at == 0 or source[at - 1] == "\n") and re.match(
            r"\s*[:=]", source[at + len(DECLARATION) : at + len(DECLARATION) + 8]
        ):
            return at


def _statements(source: str, start: int, path: Path) -> list[ast.stmt]:
    """The module-level statement of ``source`` that begins at offset ``start``: its lines up
    to the next one that starts code at the margin (parsing only them: a policy module is long,
    its declaration short), or every statement of the module if those lines are not one."""
    lines = source[start:].split("\n")
    end = 1
    while end < len(lines) and (not lines[end] or lines[end][0] in " \t)]}#"):
        end += 1
    try:
        tree = ast.parse("\n".join(lines[:end]), str(path))
    except SyntaxError:
        return ast.parse(source, str(path)).body
    ast.increment_lineno(tree, source.count("\n", 0, start))
    return tree.body


def read_declaration(path: Path, module: str) -> ReferenceBot | None:
    """The ``BOT`` the source file ``path`` (of module ``module``) declares, read without
    importing it; ``None`` if it declares none. :class:`DeclarationError` if its ``BOT`` is not
    a call of a declaration type (:class:`PolicyInfo`, :class:`PlainBot`) with literal
    arguments."""
    source = path.read_text(encoding="utf-8")
    start = _declaration_start(source)
    if start < 0:
        return None
    for node in _statements(source, start, path):
        if isinstance(node, ast.Assign):
            named = any(isinstance(t, ast.Name) and t.id == DECLARATION for t in node.targets)
        elif isinstance(node, ast.AnnAssign):
            named = isinstance(node.target, ast.Name) and node.target.id == DECLARATION
        else:
            continue
        value = node.value
        if not named or value is None:
            continue
        call = value if isinstance(value, ast.Call) else None
        kind = None
        if call is not None and isinstance(call.func, ast.Name):
            kind = _KINDS.get(call.func.id)
        if call is None or kind is None or any(k.arg is None for k in call.keywords):
            raise DeclarationError(
                f"{path}:{node.lineno}: {DECLARATION} must be a call of {' or '.join(_KINDS)}"
            )
        try:
            args = [_literal(a) for a in call.args]
            kwargs = {str(k.arg): _literal(k.value) for k in call.keywords}
        except ValueError as exc:
            raise DeclarationError(
                f"{path}:{node.lineno}: {DECLARATION}'s arguments must be literals "
                f"(or {', '.join(_NAMES)}): {exc}"
            ) from None
        return replace(kind(*args, **kwargs), module=module, path=path.resolve())
    return None


@cache
def reference_bots() -> dict[str, ReferenceBot]:
    """Every bot this package's modules declare, by name, in listing order."""
    package = __name__.rpartition(".")[0]
    found: dict[str, ReferenceBot] = {}
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        path = Path(getattr(module.module_finder, "path", "")) / f"{module.name}.py"
        if module.ispkg or not path.is_file():
            continue
        bot = read_declaration(path, f"{package}.{module.name}")
        if bot is None:
            continue
        if bot.name in found:
            raise DeclarationError(f"bot {bot.name!r} is declared by {found[bot.name].module} too")
        found[bot.name] = bot
    return {b.name: b for b in sorted(found.values(), key=lambda b: (b.order, b.name))}


def policies() -> dict[str, PolicyInfo]:
    """The reference bots with a numba policy, by name, in listing order."""
    return {n: b for n, b in reference_bots().items() if isinstance(b, PolicyInfo)}


def compiled_bots() -> dict[str, ReferenceBot]:
    """The reference bots that run numba kernels (the policies and the plain bots declared with
    ``kernels=True``), by name, in listing order."""
    return {
        n: b
        for n, b in reference_bots().items()
        if isinstance(b, PolicyInfo) or (isinstance(b, PlainBot) and b.kernels)
    }


class PolicyBot(Bot):
    """A bot that plays its numba policy. ``**settings`` are its parameters (see
    :class:`PolicyInfo`)."""

    #: The declaration of the policy this class plays; set by subclasses.
    info: PolicyInfo

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.name = self.info.name
        self.params = self.info.param_array(settings)
        from arena.engine.rng import new_rng  # kernels: imported by policy bots only

        self._new_rng = new_rng
        self.state = new_rng(0)
        self.table = self.info.table()
        self._policy = self.info.kernel()

    def reset(self, seed: int) -> None:
        """Start a new round: reseed the policy's generator."""
        super().reset(seed)
        self.state = self._new_rng(seed)

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the policy by deciding one real position, so
        the first move of a game is not spent compiling."""
        from arena.game import Game

        variant = self.info.variants[0] if self.info.variants else "classic"
        game = Game(2, variant, seed=0)
        saved = self.state.copy()
        self.act(game.observation(game.turn))
        self.state = saved

    def act(self, observation: Observation) -> Action:
        """The policy's choice for this observation."""
        return Action.from_int(self.act_view(observation.to_view(), observation.legal_packed()))

    def act_view(self, view: Sequence[int] | np.ndarray, legal: Sequence[int] | np.ndarray) -> int:
        """The policy's choice, packed, from the engine view and the packed legal actions as the
        referee sends them: the host's fast path (docs/protocol.md), which skips building an
        :class:`~arena.game.Observation` the policy would only turn back into these arrays."""
        import numpy as np

        legal_array = np.array(legal, dtype=np.int32)
        view_array = np.array(view, dtype=np.int32)
        return int(
            self._policy(
                view_array, legal_array, len(legal_array), self.state, self.params, self.table
            )
        )


def policy_bot(name: str) -> type[PolicyBot]:
    """The :class:`PolicyBot` subclass for the policy bot called ``name``."""
    return policies()[name].factory()
