"""The referee: plays rounds and matches between bot handles, holding the true state alone.

Each seat's bot only ever receives that seat's :class:`~arena.game.Observation`. Every answer is
checked; a bot that fails (raises, times out, answers something that is not an action, or an
illegal action) is knocked out of the round, and the fault goes into the record. An error the
referee did not expect while dealing with a seat (any exception but a bot's fault) is recorded
as that seat's ``internal`` fault too, so nothing a bot does raises out of a round. The referee
talks to bots through :class:`BotHandle`, so where a bot runs (in this process, or in its own
host process) is the handle's business.
"""

from __future__ import annotations

import reprlib
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from arena.errors import (
    BotCrashedError,
    BotDisqualifiedError,
    BotError,
    BotTimeoutError,
    GameOverError,
    IllegalActionError,
    InvalidActionError,
    printable,
)
from arena.game import Action, Card, Game, Match, Variant
from arena.game.observation import Observation
from arena.referee.records import (
    INTERNAL,
    MOVE_OUTPUT_CHARS,
    SEAT_OUTPUT_CHARS,
    UNCOUNTED,
    Fault,
    GameRecord,
    MatchRecord,
    MoveOutput,
)
from arena.seeds import derive_seed, seed_global_generators

#: Seconds allowed past the move time limit before an answer counts as late.
GRACE = 0.25
#: Longest fault message recorded, in characters.
MAX_FAULT_MESSAGE = 2000

#: The longest excerpt of an answer that is not an action quoted in its fault, in characters.
ANSWER_EXCERPT = 360
_shown = reprlib.Repr()
_shown.maxlevel = 3
_shown.maxstring = 80
_shown.maxother = 80


class Turn:
    """The referee's request to the bot of ``seat``: the seat's view of ``game`` now.

    :attr:`observation` is built on first use (an in-process bot needs it); a host handle sends
    the engine's compact form instead (:meth:`view`, :meth:`legal`, :meth:`rows_since`), from
    which the host builds the same observation.
    """

    def __init__(
        self, game: Game, seat: int, tokens: tuple[int, ...] = (), round_number: int = 1
    ) -> None:
        self.game = game
        self.seat = seat
        self.tokens = tokens
        self.round_number = round_number
        self._observation: Observation | None = None
        self._legal: list[int] | None = None

    @property
    def observation(self) -> Observation:
        """The seat's :class:`Observation`, with its legal actions."""
        if self._observation is None:
            self._observation = self.game.observation(self.seat, self.tokens, self.round_number)
        return self._observation

    def view(self) -> list[int]:
        """The engine's view array of the seat."""
        return self.game.view(self.seat).tolist()

    def legal(self) -> list[int]:
        """The seat's legal actions, packed."""
        if self._legal is None:
            self._legal = self.game.legal_packed() if self.game.turn == self.seat else []
        return self._legal

    def rows_since(self, start: int) -> list[list[int]]:
        """The raw event rows from index ``start`` of the round's log that the seat may see."""
        bit = 1 << self.seat
        return [row for row in self.game.rows[start:] if row[5] & bit]

    def is_legal(self, action: Action) -> bool:
        """Whether ``action`` is one of the seat's legal actions."""
        return action.to_int() in self.legal()


class BotHandle(ABC):
    """The referee's side of one bot."""

    #: The name the bot is recorded under.
    name: str

    @abstractmethod
    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Prepare for a new round in ``seat``; ``seed`` seeds the bot's randomness for it."""

    @abstractmethod
    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Ask for an action for ``turn``; return the bot's answer (an Action or a string).

        Raise :class:`~arena.errors.BotError` (a timeout, a crash) when the bot fails.
        """

    def output_mark(self) -> int:
        """A mark of how much the bot has written so far (for :meth:`output_since`); 0 for a
        handle that keeps no output."""
        return 0

    def output_since(self, mark: int, limit: int) -> str:
        """What the bot wrote after ``mark``, at most ``limit`` bytes; empty for a handle that
        keeps no output."""
        return ""

    def after_fault(self) -> None:  # noqa: B027 - optional for handles that hold nothing
        """The referee recorded a fault of this bot: drop whatever state it may have broken
        (a host process is killed and a fresh one starts with the next round)."""

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
        """Reset the bot's randomness for the round (the global generators too, as its host
        would: :func:`arena.seeds.seed_global_generators`)."""
        seed_global_generators(seed)
        reset = getattr(self.bot, "reset", None)
        if reset is not None:
            try:
                reset(seed)
            except Exception as exc:
                raise BotCrashedError(f"reset raised {type(exc).__name__}: {exc}") from exc

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Call the bot's ``act``; an exception becomes :class:`BotCrashedError`."""
        observation = turn.observation
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
    """The action a bot answered; :class:`InvalidActionError` for anything else."""
    if isinstance(answer, Action):
        return answer
    if isinstance(answer, str):
        return Action.from_str(answer)
    shown = _shown.repr(answer)
    if len(shown) > ANSWER_EXCERPT:  # nested containers add up past reprlib's own bounds
        shown = shown[: ANSWER_EXCERPT - 3] + "..."
    raise InvalidActionError(f"answer {shown} is not an action")


def unexpected_error(exc: Exception) -> str:
    """An unexpected exception on one line, for an ``internal`` fault: its type, its message
    and where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    try:
        text = str(exc)
    except Exception:
        text = "(its message cannot be shown)"
    return printable(f"{type(exc).__name__}: {text}{where}", MAX_FAULT_MESSAGE)


def _unexpected(exc: Exception) -> str:
    return f"the referee failed while dealing with this bot: {unexpected_error(exc)}"


class Referee:
    """Plays rounds and matches between bot handles under one set of rules and limits.

    ``move_time`` is the time limit per move in seconds (``None``: no limit). A bot (by its
    recorded name) that has had ``max_faults`` faults in rounds this referee played is
    disqualified: in every later round its seat forfeits at once, recorded as ``disqualified``.
    """

    def __init__(
        self,
        variant: Variant | str = "classic",
        move_time: float | None = 1.0,
        max_faults: int | None = None,
    ) -> None:
        self.variant = Variant.get(variant)
        self.move_time = move_time
        self.max_faults = max_faults
        #: Faults so far per bot name (disqualifications not counted).
        self.fault_counts: dict[str, int] = {}

    def disqualified(self, name: str) -> bool:
        """Whether the bot called ``name`` has used up its faults."""
        return self.max_faults is not None and self.fault_counts.get(name, 0) >= self.max_faults

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
        slowest = [0.0] * n
        faults: list[Fault] = []
        output: list[MoveOutput] = []
        written = [0] * n  # characters of output kept per seat

        def fault(seat: int, kind: str, message: str) -> None:
            if kind != BotDisqualifiedError.kind:
                name = handles[seat].name
                if kind not in UNCOUNTED:
                    self.fault_counts[name] = self.fault_counts.get(name, 0) + 1
                try:
                    handles[seat].after_fault()
                except Exception as exc:
                    message += f"; then cleaning up: {_unexpected(exc)}"
            # a fault message is stored and shown on terminals and pages: made printable, bounded
            faults.append(
                Fault(seat, kind, printable(message, MAX_FAULT_MESSAGE), len(game.actions))
            )
            if not game.over and game.alive[seat]:
                game.forfeit(seat)

        for seat, handle in enumerate(handles):
            if self.disqualified(handle.name):
                fault(
                    seat,
                    BotDisqualifiedError.kind,
                    f"disqualified after {self.fault_counts[handle.name]} faults",
                )
                continue
            try:
                handle.start(seat, n, self.variant.name, derive_seed(seed, "bot", seat))
            except BotError as exc:
                fault(seat, exc.kind, str(exc))
            except Exception as exc:
                fault(seat, INTERNAL, _unexpected(exc))
        while not game.over:
            seat = game.turn
            turn = Turn(game, seat, tokens, round_number)
            begun = time.perf_counter()
            answered = False
            mark = handles[seat].output_mark()
            try:
                answer = handles[seat].act(turn, self.move_time)
                answered = True
                action = _parse_answer(answer)
                if not turn.is_legal(action):
                    raise IllegalActionError(f"{action} is not among the legal actions")
            except BotError as exc:
                kind, message = exc.kind, str(exc)
            except InvalidActionError as exc:
                kind, message = "malformed", str(exc)
            except IllegalActionError as exc:
                kind, message = "illegal", str(exc)
            except Exception as exc:
                kind, message = INTERNAL, _unexpected(exc)
            else:
                kind = message = ""
            spent = time.perf_counter() - begun
            said = handles[seat].output_since(mark, MOVE_OUTPUT_CHARS)
            room = min(MOVE_OUTPUT_CHARS, SEAT_OUTPUT_CHARS - written[seat])
            if said and room > 0:  # stored and shown on pages: made printable, bounded
                text = printable(said, room, keep="\n\t")
                written[seat] += len(text)
                output.append(MoveOutput(seat, len(game.actions), text))
            times[seat] += spent
            if answered:
                moves[seat] += 1
                slowest[seat] = max(slowest[seat], spent)
            if kind:
                fault(seat, kind, message)
                continue
            try:
                game.play(action)
            except Exception as exc:
                fault(seat, INTERNAL, _unexpected(exc))
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
            slowest=slowest,
            output=output,
        )

    def play_match(
        self,
        handles: Sequence[BotHandle],
        seed: int = 0,
        first: int = 0,
        on_round: Callable[[GameRecord], None] | None = None,
    ) -> MatchRecord:
        """Play a match (rounds until one seat has enough tokens; ``first`` starts the first
        round) and return its record; ``on_round`` is called with each round's record as soon
        as the round ends."""
        match = Match(len(handles), self.variant, seed=seed, first=first)
        records: list[GameRecord] = []
        while not match.over:
            game = match.new_round()
            round_seed = derive_seed(seed, "round", len(records))
            records.append(
                self._play(game, handles, round_seed, tuple(match.tokens), len(records) + 1)
            )
            match.score_round(game)
            if on_round is not None:
                on_round(records[-1])
        assert match.winner is not None
        return MatchRecord(
            seats=[h.name for h in handles],
            seed=seed,
            rounds=records,
            tokens=list(match.tokens),
            winner=match.winner,
        )
