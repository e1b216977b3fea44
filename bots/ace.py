"""``ace``: the arena's champion, stronger than every published Love Letter player.

It decides in three steps (docs/ace.md says why each helps, and measures it):

1. **Belief.** From every event its seat saw this round it works out what each other seat may
   hold (:mod:`bots.ace_belief`): the unseen cards, less what a Guard's miss, a Baron's result,
   a Priest's look or a King's swap ruled out, weighed by what the seat's own choices say of its
   hand, with the chances of each play measured on the reference bots (:mod:`bots.ace_model`).
2. **Search.** Every option is played out in ``samples`` deals drawn from that belief, each
   round played to its end by a reference bot in every seat (:mod:`bots.ace_search`): ``dp``
   in two-player ``huibers``, ``greedy`` elsewhere.
3. The option with the most wins is played.

``params``: ``samples`` (deals per decision), ``model`` (0 to 1: how much the opponent model
weighs against a uniform choice among the playable cards; 0 keeps only what the rules and the
events rule out), ``belief`` (false: deals drawn uniformly from the unseen cards, as the other
search bots do), ``playout`` (0: ``random``, 1: ``strategic``, 2: ``greedy``, 3: ``dp`` where it
plays, else ``greedy``). It plays both variants with 2 to 4 players, the same way for the same
seed.
"""

from __future__ import annotations

from typing import Any

from arena.bot import Bot
from arena.game import VARIANTS, Action, Observation, Variant
from bots.policy import PlainBot

BOT = PlainBot(
    "ace",
    "the arena's champion: a belief from every event and the opponents' choices, searched",
    params={"samples": 2000, "model": 0.9, "belief": True, "playout": 3},
    ranges={"samples": (1, 100_000), "model": (0.0, 1.0), "playout": (0, 3)},
    cls="AceBot",
    kernels=True,
    order=110,
)


class AceBot(Bot):
    """The champion (see the module docstring); ``settings`` are its parameters."""

    name = "ace"

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        import numpy as np

        from arena.engine.rng import new_rng

        values = {**BOT.params, **settings}
        self.samples = int(values["samples"])
        self.model = float(values["model"])
        self.belief = bool(values["belief"])
        self.playout = int(values["playout"])
        self._np = np
        self._new_rng = new_rng
        self.state = new_rng(0)
        self._tables: dict[tuple[int, int], Any] = {}
        self._no_table = np.zeros(0, dtype=np.int16)
        self._dp_table: Any = None

    def reset(self, seed: int) -> None:
        """Start a new round: reseed the search's generator."""
        super().reset(seed)
        self.state = self._new_rng(seed)

    def warm_up(self) -> None:
        """Load (or compile) the kernels and measure the opponent model for every variant and
        player count, by deciding one real position of each."""
        from arena.game import Game

        saved = self.state.copy()
        for variant in VARIANTS.values():
            for players in range(variant.min_players, variant.max_players + 1):
                game = Game(players, variant, seed=0)
                self.act(game.observation(game.turn))
        self.state = saved

    def _table(self, variant: int, players: int) -> Any:
        """The opponent model's chances for this game (:mod:`bots.ace_model`), mixed with a
        uniform choice among the playable cards by ``model``."""
        key = (variant, players)
        if key not in self._tables:
            from bots.ace_model import model_table, uniform_chances

            measured = model_table(variant, players)
            uniform = uniform_chances(measured)
            self._tables[key] = self.model * measured + (1.0 - self.model) * uniform
        return self._tables[key]

    def _playout(self, observation: Observation) -> tuple[int, Any]:
        """The playout policy for this round and its table: ``playout=3`` is ``dp`` where it
        plays (two-player ``huibers``), ``greedy`` elsewhere."""
        from bots.ace_search import PLAYOUT_DP, PLAYOUT_GREEDY

        if self.playout != PLAYOUT_DP:
            return self.playout, self._no_table
        if observation.variant != "huibers" or observation.players != 2:
            return PLAYOUT_GREEDY, self._no_table
        if self._dp_table is None:
            from bots.dp import policy_table

            self._dp_table = policy_table()
        return PLAYOUT_DP, self._dp_table

    def act(self, observation: Observation) -> Action:
        """Search the options (module docstring) and play the best."""
        np = self._np
        from bots.ace_belief import belief_from_events
        from bots.ace_search import option_wins

        legal = observation.legal_packed()
        if len(legal) == 1:
            return observation.legal_actions[0]
        view = observation.to_view()
        players = observation.players
        likelihood = np.ones((4, 9), dtype=np.float64)
        if self.belief:
            rows = event_rows(observation)
            table = self._table(Variant.get(observation.variant).code, players)
            belief_from_events(rows, len(rows), observation.seat, table, likelihood)
        wins = np.empty(len(legal), dtype=np.int64)
        kind, table = self._playout(observation)
        best = option_wins(
            view, legal, len(legal), likelihood, self.state, self.samples, kind, table, wins
        )
        return Action.from_int(int(legal[best]))


def event_rows(observation: Observation) -> Any:
    """The events ``observation``'s seat saw this round as engine event rows (kind, seat,
    target, card, value; ``-1`` for no seat), for :func:`bots.ace_belief.belief_from_events`."""
    import numpy as np

    return np.array(
        [
            (
                int(e.kind),
                -1 if e.seat is None else e.seat,
                -1 if e.target is None else e.target,
                e.card,
                e.value,
            )
            for e in observation.events
        ],
        dtype=np.int32,
    ).reshape(-1, 5)
