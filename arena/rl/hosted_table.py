"""The other seats played by installed bots, each in its own (sandboxed) host process, through the
referee, exactly as in ``arena play``: the referee holds the round, sends every bot its own seat's
observation and checks every answer; the learning seat is one more of its handles.

The referee plays a round from start to end in one call, so it runs in a thread of its own (the
one that starts the hosts, which bubblewrap ties them to), and the learning seat's handle hands
each of its turns to the environment and waits for the answer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.errors import ArenaError, BotCrashedError
from arena.game.round import Game
from arena.game.variants import Variant
from arena.hosting.catalog import load_catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.kernels import Compilation, trusted_bots
from arena.hosting.sandbox import choose_sandbox
from arena.referee.play import BotHandle, Referee, Turn
from arena.referee.records import GameRecord
from arena.rl.encoding import N_ACTIONS, _action_index, encode_view
from arena.rl.seat_table import Observed, SeatTable

#: The learning seat's answer that gives the round up.
_FORFEIT = object()
#: Seconds to wait for the referee's thread to finish a round being given up, and to stop.
STOP_TIME = 30.0


class _LearnerHandle(BotHandle):
    """The referee's handle on the learning seat: each turn goes to the environment, which
    answers with an action (or gives the round up)."""

    name = "learner"

    def __init__(self) -> None:
        self.turns: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.answers: queue.Queue[Any] = queue.Queue()

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Nothing to prepare: the environment is told of the round by its first turn."""

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Hand ``turn`` to the environment and wait for its answer (no time limit: learning
        takes what it takes)."""
        self.turns.put(("turn", turn))
        answer = self.answers.get()
        if answer is _FORFEIT:
            raise BotCrashedError("the learning seat gave the round up")
        return answer


class HostedTable(SeatTable):
    """The other seats played by installed bots (``NAME[param=value]``, any that ``arena bots``
    lists), each in its own host under ``sandbox`` (``auto``, ``bwrap`` or ``none``, as
    ``arena play --sandbox``) with ``move_time`` seconds a move. A bad name or parameter is an
    :class:`~arena.errors.UnknownBotError`; a bot that does not play the variant or the player
    count, an :class:`~arena.errors.ArenaError`."""

    def __init__(
        self,
        opponents: Sequence[str],
        players: int,
        variant: str | Variant,
        sandbox: str = "auto",
        move_time: float | None = 1.0,
    ) -> None:
        self.variant = Variant.get(variant)
        self.variant.check_players(players)
        if len(opponents) != players - 1:
            raise ArenaError(
                f"{players} players need {players - 1} opponents, not {len(opponents)}"
            )
        self.players = players
        box = choose_sandbox(sandbox)
        catalog = load_catalog(box)
        resolved = [catalog.resolve(text) for text in opponents]
        for spec, entry in resolved:
            box.check(str(spec), entry.distribution)
            if self.variant.name not in entry.variants or players not in entry.players:
                raise ArenaError(
                    f"bot {spec.name!r} plays {', '.join(entry.variants)} with "
                    f"{', '.join(map(str, entry.players))} players, not {self.variant.name} "
                    f"with {players}"
                )
        Compilation(trusted_bots([e for _, e in resolved], self.variant.name), box).wait()
        self.opponents = tuple(str(spec) for spec, _ in resolved)
        self._plugins = [(str(spec), entry.plugin_ref) for spec, entry in resolved]
        self._box = box
        self._referee = Referee(self.variant, move_time=move_time)
        self._learner = _LearnerHandle()
        self._requests: queue.Queue[tuple[int, int, list[int] | None] | None] = queue.Queue()
        self._seat = 0
        self._turn: Turn | None = None
        self._game: Game | None = None
        self._record: GameRecord | None = None
        self._thread = threading.Thread(target=self._serve, name="arena-rl-referee", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        """The referee's thread: plays each requested round, with the bots' hosts made here."""
        handles = [HostHandle(spec, ref, sandbox=self._box) for spec, ref in self._plugins]
        try:
            while (request := self._requests.get()) is not None:
                seat, seed, deck = request
                seated: list[BotHandle] = list(handles)
                seated.insert(seat, self._learner)
                try:
                    record = self._referee.play_round(seated, deck=deck, seed=seed)
                except Exception as exc:  # handed to the environment, raised there
                    self._learner.turns.put(("error", exc))
                else:
                    self._learner.turns.put(("over", record))
        finally:
            for handle in handles:
                handle.close()

    def _next(self) -> Observed | None:
        """Wait for the learner's next turn (its observation and mask) or the round's end."""
        kind, what = self._learner.turns.get()
        if kind == "error":
            raise what
        if kind == "over":
            self._turn = None
            self._record = what
            return None
        self._turn = what
        self._game = what.game
        view = what.game.view(self._seat)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        for packed in what.legal():
            mask[_action_index(packed, self._seat, self.players)] = 1
        return encode_view(view), mask

    def deal(self, seat: int, seed: int, deck: Sequence[int] | None = None) -> Observed | None:
        """See :meth:`SeatTable.deal`."""
        if not 0 <= seat < self.players:
            raise ArenaError(f"seat {seat} is not one of the {self.players} seats")
        if self._turn is not None:
            self.forfeit()
        self._seat = seat
        self._game = None
        self._record = None
        self._requests.put((seat, seed, None if deck is None else [int(c) for c in deck]))
        return self._next()

    def step(self, index: int) -> Observed | None:
        """See :meth:`SeatTable.step`."""
        from arena.rl.encoding import index_action

        self._learner.answers.put(index_action(index, self._seat, self.players))
        return self._next()

    def forfeit(self) -> None:
        """See :meth:`SeatTable.forfeit`: the learner's seat is knocked out (a recorded fault),
        and the bots play the round to its end."""
        while self._turn is not None:
            self._learner.answers.put(_FORFEIT)
            self._next()

    def final_observation(self) -> np.ndarray:
        """See :meth:`SeatTable.final_observation`."""
        if self._record is None:
            raise ArenaError("the round is not over")
        if self._game is None:
            raise ArenaError(f"the round ended before seat {self._seat} moved")
        return encode_view(self._game.view(self._seat))

    @property
    def winners(self) -> tuple[int, ...]:
        """See :meth:`SeatTable.winners`."""
        if self._record is None:
            raise ArenaError("the round is not over")
        return tuple(self._record.winners)

    def table_text(self) -> str:
        """See :meth:`SeatTable.table_text`: what the learning seat may see (the hosts' rounds
        are the referee's; their hidden cards stay there)."""
        names = list(self.opponents)
        names.insert(self._seat, "learner")
        if self._game is None:
            return "no round dealt yet"
        seen = self._game.observation(self._seat)
        lines = [f"{self.variant.name}, {self.players} players; learner in seat {self._seat}"]
        lines += ["  " + event.text(names) for event in seen.events[-8:]]
        return "\n".join(lines)

    def close(self) -> None:
        """Give up a round in play, stop the referee's thread and the bots' hosts."""
        if self._thread.is_alive():
            self.forfeit()
            self._requests.put(None)
            self._thread.join(STOP_TIME)
