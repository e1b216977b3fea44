"""Records of finished play: faults, one round (:class:`GameRecord`) and a match."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from arena.errors import BotDisqualifiedError, MemoryShortageError
from arena.game.events import Event

#: Fault kinds a record may name.
FAULT_KINDS = (
    "timeout",  # no answer within the move time limit
    "crash",  # the bot raised, or its process died
    "exited",  # the bot's process ended
    "malformed",  # the answer is not an action string
    "illegal",  # a well-formed action the rules do not allow now
    "protocol",  # the bot broke the host protocol
    "limit",  # the bot went over its memory or process limit
    "disqualified",  # the bot had too many faults earlier in the run
    "shortage",  # the kernel killed the host for the machine's memory shortage: no bot's fault
    "internal",  # the referee failed unexpectedly while dealing with the bot (a bug)
)
#: What a fault's message reads where it is not shown: what a bot said is its author's to read
#: (a competition server shows it to the bot's participant alone, docs/serve.md), while its
#: kind, seat and move are everyone's.
HIDDEN_MESSAGE = "(private)"


#: The fault of a seat while dealing with whose bot the referee met an unexpected error.
INTERNAL = "internal"
#: Faults that are not the bot's doing and never count towards disqualification: a
#: disqualification itself, a host the kernel killed for the machine's memory shortage, and the
#: referee's own failure.
UNCOUNTED = frozenset({BotDisqualifiedError.kind, MemoryShortageError.kind, INTERNAL})
#: Faults that are the arena's own, not any bot's: a game with one cannot be played fairly.
ARENA_FAULTS = frozenset({MemoryShortageError.kind, INTERNAL})


@dataclass(frozen=True)
class Fault:
    """A bot's fault: the seat, its kind (one of :data:`FAULT_KINDS`), a message, and the
    number of actions played in the round before it."""

    seat: int
    kind: str
    message: str
    move: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    def hidden(self) -> Fault:
        """The fault without its message (:data:`HIDDEN_MESSAGE` instead)."""
        return replace(self, message=HIDDEN_MESSAGE)


#: The most of a bot's output a record keeps per move (characters, the first), and per seat per
#: game (its first moves' output first).
MOVE_OUTPUT_CHARS = 1000
SEAT_OUTPUT_CHARS = 8000


@dataclass(frozen=True)
class MoveOutput:
    """What seat ``seat``'s bot wrote (stdout and stderr) while it chose move ``move`` (the
    number of actions played before it, as :attr:`Fault.move`): private, as a fault's message
    is, to its own participant (:meth:`GameRecord.with_messages_of`)."""

    seat: int
    move: int
    text: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"seat": self.seat, "move": self.move, "text": self.text}


@dataclass
class GameRecord:
    """Everything about one finished round: who sat where, the deck, every event with its
    visibility, the actions, the result, time per seat and faults."""

    variant: str
    players: int
    seats: list[str]
    deck: list[int]
    first: int
    seed: int
    events: list[Event]
    actions: list[tuple[int, str]]
    winners: list[int]
    end_reason: str
    times: list[float]
    moves: list[int]
    faults: list[Fault] = field(default_factory=list)
    #: How many of the first ``actions`` were given as an opening rather than chosen by the bots.
    opening: int = 0
    #: Each seat's slowest answer (seconds; 0 for a seat that answered nothing). Empty in records
    #: stored before it was kept.
    slowest: list[float] = field(default_factory=list)
    #: What the bots wrote beside their moves (:class:`MoveOutput`), where a host says it.
    output: list[MoveOutput] = field(default_factory=list)

    def score(self, seat: int) -> float:
        """The seat's share of the round: 1 for a win, 1/k for a win shared by k, else 0."""
        return 1.0 / len(self.winners) if seat in self.winners else 0.0

    @property
    def void(self) -> bool:
        """Every seat faulted before any bot moved (none could start, or all were
        disqualified): the seat the engine left standing won by the others' forfeits alone, so
        the round says nothing of the bots' strength and is not rated."""
        faulted = {f.seat for f in self.faults if f.move <= self.opening}
        return len(faulted) == self.players

    def with_messages_of(self, seats: Collection[int]) -> GameRecord:
        """A copy whose faults keep their messages at ``seats`` only (:meth:`Fault.hidden`
        elsewhere)."""
        faults = [f if f.seat in seats else f.hidden() for f in self.faults]
        output = [o for o in self.output if o.seat in seats]
        return replace(self, faults=faults, output=output)

    def log_lines(self, reveal: bool = False) -> list[str]:
        """The round as numbered readable lines: public events, or every event with ``reveal``."""
        lines = []
        shown = [e for e in self.events if reveal or e.public]
        width = len(str(len(shown)))
        for i, event in enumerate(shown, 1):
            private = (
                ""
                if event.public
                else "  [seen by " + ", ".join(f"seat {s}" for s in event.visible_to or ()) + "]"
            )
            lines.append(f"{i:>{width}}. {event.text(self.seats)}{private}")
        for fault in self.faults:
            lines.append(
                f"fault: seat {fault.seat} ({self.seats[fault.seat]}) {fault.kind}: {fault.message}"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "variant": self.variant,
            "players": self.players,
            "seats": list(self.seats),
            "deck": list(self.deck),
            "first": self.first,
            "seed": self.seed,
            "events": [e.to_json() for e in self.events],
            "actions": [[s, a] for s, a in self.actions],
            "winners": list(self.winners),
            "end_reason": self.end_reason,
            "times": list(self.times),
            "moves": list(self.moves),
            "faults": [f.to_json() for f in self.faults],
            "opening": self.opening,
            "slowest": list(self.slowest),
            **({"output": [o.to_json() for o in self.output]} if self.output else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameRecord:
        """The inverse of :meth:`to_json`."""
        return cls(
            variant=d["variant"],
            players=d["players"],
            seats=list(d["seats"]),
            deck=list(d["deck"]),
            first=d["first"],
            seed=d["seed"],
            events=[Event.from_json(e) for e in d["events"]],
            actions=[(int(s), str(a)) for s, a in d["actions"]],
            winners=list(d["winners"]),
            end_reason=d["end_reason"],
            times=[float(t) for t in d["times"]],
            moves=[int(m) for m in d["moves"]],
            faults=[Fault(**f) for f in d.get("faults", ())],
            opening=int(d.get("opening", 0)),
            slowest=[float(t) for t in d.get("slowest", ())],
            output=[MoveOutput(**o) for o in d.get("output", ())],
        )


@dataclass
class MatchRecord:
    """A finished match: its rounds in order, the final tokens and the winning seat."""

    seats: list[str]
    seed: int
    rounds: list[GameRecord]
    tokens: list[int]
    winner: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seats": list(self.seats),
            "seed": self.seed,
            "rounds": [r.to_json() for r in self.rounds],
            "tokens": list(self.tokens),
            "winner": self.winner,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MatchRecord:
        """The inverse of :meth:`to_json`."""
        return cls(
            seats=list(d["seats"]),
            seed=d["seed"],
            rounds=[GameRecord.from_json(r) for r in d["rounds"]],
            tokens=list(d["tokens"]),
            winner=d["winner"],
        )
