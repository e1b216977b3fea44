"""Reference bots whose decisions are numba policies over the engine's per-seat view.

A *policy* is a numba function ``policy(view, legal, nlegal, rng, params) -> action``: ``view``
is the seat's view array (:mod:`arena.engine.view`, the one definition of what a seat knows),
``legal[:nlegal]`` its legal actions packed, ``rng`` an engine generator state
(:mod:`arena.engine.rng`), ``params`` the bot's numeric parameters, and the answer one of the legal
actions. :class:`PolicyBot` is the whole Python side of such a bot: its ``act`` hands the
observation's view to the same compiled function the simulator (:mod:`bots.simulate`) calls, so
the bot and its simulated self are one decision function.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy comes with the kernels, when a policy bot is built
    import numpy as np

from arena.bot import Bot
from arena.botspec import ParamRule, declare_params
from arena.game import Action, Observation

#: Modules of policies not named after their bot.
_MODULES = {"random": "random_player"}

# Policy ids, as the dispatcher (bots.dispatch.decide) knows them.
RANDOM = 0
STRATEGIC = 1
KNOWLEDGE = 2
GREEDY = 3
RISKMATRIX = 4
DP = 5
MONTECARLO = 6
MINIMAX = 7
PIMC = 8
ISMCTS = 9


@dataclass(frozen=True)
class PolicyInfo:
    """A bot with a numba policy: its name, policy id, parameter defaults (numbers, in the order
    the policy reads them from ``params``), one-line description, the variants and player counts
    it plays, whether it reads the Dynamic Programming table, and its parameters' bounds
    (inclusive, ``None`` open; see :func:`arena.botspec.declare_params`)."""

    name: str
    policy_id: int
    params: dict[str, float | int]
    description: str
    variants: tuple[str, ...] | None = None
    players: tuple[int, ...] | None = None
    needs_table: bool = False
    ranges: dict[str, tuple[float | int | None, float | int | None]] = field(default_factory=dict)

    def rules(self) -> dict[str, ParamRule]:
        """Each parameter's type and bounds."""
        return declare_params(self.name, self.params, self.ranges)

    def param_array(self, settings: dict[str, Any] | None = None) -> np.ndarray:
        """The ``params`` array for ``settings`` (defaults where not given)."""
        import numpy as np

        values = {**self.params, **(settings or {})}
        return np.array([float(values[k]) for k in self.params], dtype=np.float64)

    def kernel(self) -> Callable[..., int]:
        """The policy's compiled function, ``bots.<module>.<name>_policy``, imported on first
        use: a bot's host loads (and compiles) its own policy's kernels and no other's."""
        module = importlib.import_module(f"bots.{_MODULES.get(self.name, self.name)}")
        function: Callable[..., int] = getattr(module, f"{self.name}_policy")
        return function


#: The largest count a search parameter takes (iterations, playouts, determinizations, depth):
#: policies read their parameters as float64 and convert them to machine integers.
MAX_COUNT = 10**9

#: Every bot with a numba policy, by name.
POLICIES: dict[str, PolicyInfo] = {
    p.name: p
    for p in (
        PolicyInfo("random", RANDOM, {}, "Huibers 2016 3.1.1: random, but never the Princess"),
        PolicyInfo(
            "strategic",
            STRATEGIC,
            {},
            "Huibers 2016 3.1.3: wins at once if it can, else the lowest card",
        ),
        PolicyInfo(
            "knowledge",
            KNOWLEDGE,
            {},
            "Omarov et al. 2018: knowledge-based agent, an immediate win, else the smallest card",
        ),
        PolicyInfo(
            "greedy", GREEDY, {}, "Malarczyk 3.2: every play scored against the unseen cards"
        ),
        PolicyInfo(
            "riskmatrix",
            RISKMATRIX,
            {},
            "Wambosa's LuaLoveLetter: the play whose ideal matrix is closest to the target matrix",
        ),
        PolicyInfo(
            "dp",
            DP,
            {},
            "Huibers 2016 3.2: the Dynamic Programming table's choice (2-player huibers)",
            variants=("huibers",),
            players=(2,),
            needs_table=True,
        ),
        PolicyInfo(
            "montecarlo",
            MONTECARLO,
            {"playouts": 1000},
            "Huibers 2016 3.1.2: each option tried in random playouts, the most wins played",
            variants=("classic", "huibers"),
            players=(2, 3, 4),
            ranges={"playouts": (1, MAX_COUNT)},
        ),
        PolicyInfo(
            "minimax",
            MINIMAX,
            {"determinizations": 100, "depth": 0},
            "Omarov et al. 2018: determinized minimax, each sampled deal searched to the end, "
            "a vote",
            variants=("classic", "huibers"),
            players=(2, 3, 4),
            ranges={"determinizations": (1, MAX_COUNT), "depth": (0, MAX_COUNT)},
        ),
        PolicyInfo(
            "pimc",
            PIMC,
            {"determinizations": 50, "iterations": 160, "c": 0.7, "seconds": 0.0},
            "Omarov et al. 2018: PIMC, a UCT tree per sampled deal, the trees' majority vote",
            variants=("classic", "huibers"),
            players=(2, 3, 4),
            ranges={
                "determinizations": (1, MAX_COUNT),
                "iterations": (1, MAX_COUNT),
                "c": (0.0, None),
                "seconds": (0.0, None),
            },
        ),
        PolicyInfo(
            "ismcts",
            ISMCTS,
            {"iterations": 1000, "c": 0.7, "seconds": 0.0},
            "Cowling et al. 2012 / Omarov et al. 2018: SO-ISMCTS, one tree over information sets",
            variants=("classic", "huibers"),
            players=(2, 3, 4),
            ranges={"iterations": (1, MAX_COUNT), "c": (0.0, None), "seconds": (0.0, None)},
        ),
    )
}


def policy_table(info: PolicyInfo) -> np.ndarray:
    """The Dynamic Programming table's policy array if ``info`` reads it, else an empty one."""
    import numpy as np

    if not info.needs_table:
        return np.zeros(0, dtype=np.int16)
    from solver import load_table

    return load_table("huibers").policy


class PolicyBot(Bot):
    """A bot that plays its numba policy. ``**settings`` are its parameters (see ``POLICIES``)."""

    #: The entry of :data:`POLICIES` this class plays; set by subclasses.
    info: PolicyInfo

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.name = self.info.name
        self.params = self.info.param_array(settings)
        from arena.engine.rng import new_rng  # kernels: imported by policy bots only

        self._new_rng = new_rng
        self.state = new_rng(0)
        self.table = policy_table(self.info)
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
        legal = observation.legal_packed()
        view = observation.to_view()
        if self.info.needs_table:
            packed = self._policy(view, legal, len(legal), self.state, self.params, self.table)
        else:
            packed = self._policy(view, legal, len(legal), self.state, self.params)
        return Action.from_int(int(packed))


def module_file(name: str) -> Path:
    """The source file of bot ``name``'s policy module (found, not imported)."""
    spec = importlib.util.find_spec(f"bots.{_MODULES.get(name, name)}")
    if spec is None or spec.origin is None:
        raise LookupError(f"no policy module for {name!r}")
    return Path(spec.origin).resolve()


def policy_bot(name: str) -> type[PolicyBot]:
    """The :class:`PolicyBot` subclass for the policy called ``name``."""
    info = POLICIES[name]
    return type(
        f"{name.capitalize()}Bot", (PolicyBot,), {"info": info, "__doc__": info.description}
    )
