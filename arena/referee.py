"""The referee: plays rounds and matches between bot handles, holding the true state alone.

Each seat's bot only ever receives that seat's :class:`~arena.game.Observation`. Every answer is
checked; a bot that fails (raises, times out, answers something that is not an action, or an
illegal action) is knocked out of the round, and the fault goes into the record. The referee talks
to bots through :class:`BotHandle`, so where a bot runs (in this process, or in its own host
process) is the handle's business.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from arena.errors import (
    BotCrashedError,
    BotError,
    BotTimeoutError,
    GameOverError,
    InvalidActionError,
)
from arena.game import Action, Card, Game, Match, Variant
from arena.game.observation import Observation
from arena.records import Fault, GameRecord, MatchRecord
from arena.seeds import derive_seed

#: Seconds allowed past the move time limit before an answer counts as late.
GRACE = 0.25


class BotHandle(ABC):
    """The referee's side of one bot."""

    #: The name the bot is recorded under.
    name: str

    @abstractmethod
    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Prepare for a new round in ``seat``; ``seed`` seeds the bot's randomness for it."""

    @abstractmethod
    def act(self, observation: Observation, time_limit: float | None) -> Any:
        """Ask for an action; return the bot's answer (an Action or an action string).

        Raise :class:`~arena.errors.BotError` (a timeout, a crash) when the bot fails.
        """

    def close(self) -> None:  # noqa: B027 - optional for handles that hold nothing
        """Release what the handle holds (a process, a pipe)."""


class InProcessHandle(BotHandle):
    """A handle on a bot object in this process: anything with ``act(observation)``.

    If the bot has ``reset(seed)``, it is called at the start of each round. An in-process bot
    cannot be interrupted; an answer later than the limit is recorded as a timeout once it comes.
    """

    def __init__(self, bot: Any, name: str | None = None) -> None:
        self.bot = bot
        self.name = str(name or getattr(bot, "name", type(bot).__name__))

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Reset the bot's randomness for the round."""
        reset = getattr(self.bot, "reset", None)
        if reset is not None:
            try:
                reset(seed)
            except Exception as exc:
                raise BotCrashedError(f"reset raised {type(exc).__name__}: {exc}") from exc

    def act(self, observation: Observation, time_limit: float | None) -> Any:
        """Call the bot's ``act``; an exception becomes :class:`BotCrashedError`."""
        start = time.perf_counter()
        try:
            answer = self.bot.act(observation)
        except Exception as exc:
            raise BotCrashedError(f"act raised {type(exc).__name__}: {exc}") from exc
        spent = time.perf_counter() - start
        if time_limit is not None and spent > time_limit + GRACE:
            raise BotTimeoutError(f"answered after {spent:.3f} s (limit {time_limit:g} s)")
        return answer


def _parse_answer(answer: Any) -> Action:
    if isinstance(answer, Action):
        return answer
    if isinstance(answer, str):
        return Action.from_str(answer)
    raise InvalidActionError(f"answer {answer!r} is not an action")


class Referee:
    """Plays rounds and matches between bot handles under one set of rules and limits.

    ``move_time`` is the time limit per move in seconds (``None``: no limit).
    """

    def __init__(self, variant: Variant | str = "classic", move_time: float | None = 1.0) -> None:
        self.variant = Variant.get(variant)
        self.move_time = move_time

    def play_round(
        self,
        handles: Sequence[BotHandle],
        deck: Sequence[Card | int] | None = None,
        seed: int = 0,
        first: int = 0,
        tokens: tuple[int, ...] = (),
        round_number: int = 1,
        opening: Sequence[Action | str] = (),
    ) -> GameRecord:
        """Play one round between ``handles`` (seat order) and return its record.

        Without ``deck``, the cards are shuffled from ``seed``; bots' seeds derive from ``seed``.
        ``opening`` actions are played first, for whichever seat is to move, before the bots take
        over (to study a position); an action that does not parse raises
        :class:`~arena.errors.InvalidActionError`, one the rules do not allow then
        :class:`~arena.errors.IllegalActionError`, before any bot is asked anything.
        """
        game = Game(len(handles), self.variant, deck=deck, seed=seed, first=first)
        for action in opening:
            if game.over:
                raise GameOverError(f"the round is over before the opening move {action}")
            game.play(action)
        return self._play(game, handles, seed, tokens, round_number)

    def _play(
        self,
        game: Game,
        handles: Sequence[BotHandle],
        seed: int,
        tokens: tuple[int, ...],
        round_number: int,
    ) -> GameRecord:
        n = len(handles)
        opening_moves = len(game.actions)
        times = [0.0] * n
        moves = [0] * n
        faults: list[Fault] = []

        def fault(seat: int, kind: str, message: str) -> None:
            faults.append(Fault(seat, kind, message, len(game.actions)))
            if not game.over and game.alive[seat]:
                game.forfeit(seat)

        for seat, handle in enumerate(handles):
            try:
                handle.start(seat, n, self.variant.name, derive_seed(seed, "bot", seat))
            except BotError as exc:
                fault(seat, exc.kind, str(exc))
        while not game.over:
            seat = game.turn
            observation = game.observation(seat, tokens, round_number)
            begun = time.perf_counter()
            try:
                answer = handles[seat].act(observation, self.move_time)
            except BotError as exc:
                times[seat] += time.perf_counter() - begun
                fault(seat, exc.kind, str(exc))
                continue
            times[seat] += time.perf_counter() - begun
            moves[seat] += 1
            try:
                action = _parse_answer(answer)
            except InvalidActionError as exc:
                fault(seat, "malformed", str(exc))
                continue
            if action not in observation.legal_actions:
                fault(seat, "illegal", f"{action} is not among the legal actions")
                continue
            game.play(action)
        return GameRecord(
            variant=self.variant.name,
            players=n,
            seats=[h.name for h in handles],
            deck=[int(c) for c in game.deck],
            first=game.first,
            seed=seed,
            events=list(game.events),
            actions=[(s, str(a)) for s, a in game.actions],
            winners=list(game.winners),
            end_reason=game.end_reason or "",
            times=times,
            moves=moves,
            faults=faults,
            opening=opening_moves,
        )

    def play_match(self, handles: Sequence[BotHandle], seed: int = 0) -> MatchRecord:
        """Play a match (rounds until one seat has enough tokens) and return its record."""
        match = Match(len(handles), self.variant, seed=seed)
        records: list[GameRecord] = []
        while not match.over:
            game = match.new_round()
            round_seed = derive_seed(seed, "round", len(records))
            records.append(
                self._play(game, handles, round_seed, tuple(match.tokens), len(records) + 1)
            )
            match.score_round(game)
        assert match.winner is not None
        return MatchRecord(
            seats=[h.name for h in handles],
            seed=seed,
            rounds=records,
            tokens=list(match.tokens),
            winner=match.winner,
        )
