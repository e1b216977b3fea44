"""A person at the table: a bot whose moves come from a terminal.

:class:`HumanBot` is a :class:`~arena.bot.Bot` like any other: the referee sends it its seat's
:class:`~arena.game.Observation` and checks its answer, so the rules and what stays hidden are
exactly the referee's. It shows the observation (what happened since it last looked, the table,
the legal moves numbered with their effect in words) and reads a number. What it shows is made by
pure functions of the observation (:func:`table_lines`, :func:`move_lines`, :func:`event_lines`),
so they are tested without a terminal.

:class:`HumanHandle` seats it with no move time limit; :class:`WatchedHandle` wraps the bots'
handles so that the person sees each event when it happens, from their own seat, and not only when
they are next to move. :func:`play_human` runs a round or a match with a person in one seat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from arena.bot import Bot
from arena.errors import InvalidActionError
from arena.game import Action, Card, Event, Observation
from arena.referee.play import BotHandle, InProcessHandle, Turn

if TYPE_CHECKING:
    from arena.referee.play import Referee
    from arena.referee.records import GameRecord, MatchRecord

#: How the person's own seat is named on their screen.
YOU = "you"
#: Answers that leave the table.
QUIT_WORDS = frozenset({"q", "quit", "exit"})


class LeftTable(BaseException):
    """The person left the table (end of input, or ``q``).

    A :class:`BaseException`, like :class:`KeyboardInterrupt`: the referee records a bot's
    ``Exception`` as a fault and plays on, but a person who left should end the game.
    """


def seat_label(seat: int, names: Sequence[str]) -> str:
    """``seat 1 (random)``: a seat as :meth:`~arena.game.Event.text` names it."""
    return f"seat {seat} ({names[seat]})" if seat < len(names) else f"seat {seat}"


def move_text(action: Action, observation: Observation, names: Sequence[str]) -> str:
    """The action ``action`` of the seat of ``observation`` in words, e.g. ``Guard: guess seat 1
    (random) holds a Priest``."""
    card, target = action.card, action.target
    if target is None:
        if card in (Card.GUARD, Card.PRIEST, Card.BARON, Card.KING, Card.PRINCE):
            return f"{card}: no effect (every other player is protected)"
        text = f"{card}: {_UNTARGETED[card]}"
        kept = _kept(action, observation)
        forced = all(a.card == Card.COUNTESS for a in observation.legal_actions)
        if card == Card.COUNTESS and forced and kept not in (None, Card.COUNTESS):
            text += f" (you must play it: you hold a {kept})"
        return text
    other = seat_label(target, names)
    if card == Card.GUARD:
        return f"Guard: guess {other} holds a {action.guess}"
    if card == Card.PRIEST:
        return f"Priest: look at the hand of {other}"
    if card == Card.BARON:
        return f"Baron: compare hands with {other}; the lower card is out"
    if card == Card.KING:
        return f"King: trade hands with {other}"
    if target != observation.seat:
        return f"Prince: {other} discards their hand and draws a new card"
    kept = _kept(action, observation)
    text = f"Prince: discard your own {kept} and draw a new card"
    return text + (" (discarding the Princess puts you out)" if kept == Card.PRINCESS else "")


def _kept(action: Action, observation: Observation) -> Card | None:
    """The card left in the hand after playing ``action``."""
    hand = list(observation.hand)
    if action.card in hand:
        hand.remove(action.card)
    return hand[0] if hand else None


_UNTARGETED = {
    Card.HANDMAID: "you are protected until your next turn",
    Card.COUNTESS: "no effect",
    Card.PRINCESS: "you are out of the round",
}


def move_lines(observation: Observation, names: Sequence[str]) -> list[str]:
    """The legal moves of ``observation``, numbered from 1 in the referee's order."""
    width = len(str(len(observation.legal_actions)))
    return [
        f"  {number:>{width}}) {move_text(action, observation, names)}"
        for number, action in enumerate(observation.legal_actions, 1)
    ]


def event_lines(observation: Observation, start: int, names: Sequence[str]) -> list[str]:
    """The events of ``observation`` from index ``start`` on, one line each."""
    return [_event_line(event, names) for event in observation.events[start:]]


def _event_line(event: Event, names: Sequence[str]) -> str:
    return f"  · {event.text(names)}"


def _cards(cards: Sequence[Card]) -> str:
    return ", ".join(map(str, cards)) if cards else "none"


def table_lines(observation: Observation, names: Sequence[str]) -> list[str]:
    """The table as the seat of ``observation`` sees it: the deck, the face-up cards, every
    seat's discards and state, what the seat knows of other hands (and others of its own),
    the tokens in a match, and its hand."""
    o = observation
    lines = [
        f"deck: {o.deck_size} card{'' if o.deck_size == 1 else 's'}"
        + (f"; face up: {_cards(o.face_up)}" if o.face_up else "")
        + ("; the set-aside card was drawn" if o.set_aside_taken else "")
    ]
    width = max(len(seat_label(s, names)) for s in range(o.players))
    for seat in range(o.players):
        states = [] if o.alive[seat] else ["out"]
        if o.protected[seat]:
            states.append("protected")
        if o.tokens:
            states.append(f"{o.tokens[seat]} token{'' if o.tokens[seat] == 1 else 's'}")
        label = seat_label(seat, names)
        lines.append(
            f"  {label:<{width}}  discards: {_cards(o.discards(seat))}"
            + (f"  [{', '.join(states)}]" if states else "")
        )
    for seat in range(o.players):
        if seat == o.seat:
            continue
        if o.known[seat] is not None and o.alive[seat]:
            lines.append(f"you know {seat_label(seat, names)} holds a {o.known[seat]}")
        if o.known_by[seat] is not None and o.alive[o.seat]:
            lines.append(f"{seat_label(seat, names)} knows you hold a {o.known_by[seat]}")
    lines.append(f"your hand: {_cards(o.hand)}")
    return lines


class ChoiceError(ValueError):
    """An answer that is not one of the numbered moves."""


def parse_choice(text: str, observation: Observation) -> Action:
    """The legal action the person chose by ``text``: its number, or the action as written
    (``Guard->1:Priest``). :class:`ChoiceError` says what is wrong with anything else."""
    legal = observation.legal_actions
    hint = f"type a number from 1 to {len(legal)}, or q to leave"
    answer = text.strip()
    if not answer:
        raise ChoiceError(f"no move chosen: {hint}")
    if answer.isascii() and answer.isdigit():
        number = int(answer)
        if 1 <= number <= len(legal):
            return legal[number - 1]
        raise ChoiceError(f"there is no move {number}: {hint}")
    try:
        action = Action.from_str(answer)
    except InvalidActionError:
        action = None
    if action is not None and action in legal:
        return action
    shown = answer if len(answer) <= 40 else answer[:40] + "..."
    raise ChoiceError(f"{shown!r} is not one of the moves: {hint}")


class HumanBot(Bot):
    """A person choosing the moves of one seat on a terminal.

    ``seat`` is the person's seat; ``names`` names the seats on screen (``seat`` as
    :data:`YOU`); ``ask`` reads one line after showing a prompt (raising :class:`EOFError` at the
    end of input), ``say`` writes one line.
    """

    name = "human"

    def __init__(
        self,
        seat: int,
        names: Sequence[str],
        ask: Callable[[str], str] = input,
        say: Callable[[str], None] = print,
    ) -> None:
        super().__init__()
        self.seat = seat
        self.names = list(names)
        self.ask = ask
        self.say = say
        self.shown = 0  # events of this round already shown
        self.rounds = 0  # rounds finished

    def reset(self, seed: int) -> None:
        """A new round: nothing of it shown yet."""
        super().reset(seed)
        self.shown = 0

    def show(self, observation: Observation) -> None:
        """Show what happened since the last look: the round's header first, then every new
        event."""
        if self.shown == 0:
            self._header()
        for line in event_lines(observation, self.shown, self.names):
            self.say(line)
        self.shown = len(observation.events)

    def _header(self) -> None:
        self.say("")
        self.say(f"== round {self.rounds + 1} == you are seat {self.seat}")

    def act(self, observation: Observation) -> Action:
        """Show the table and the numbered moves, and read the person's choice until it is one
        of them; :class:`LeftTable` at the end of input or on ``q``."""
        self.show(observation)
        self.say("")
        for line in table_lines(observation, self.names) + move_lines(observation, self.names):
            self.say(line)
        while True:
            try:
                answer = self.ask(f"your move [1-{len(observation.legal_actions)}]: ")
            except EOFError:
                raise LeftTable("end of input") from None
            if answer.strip().lower() in QUIT_WORDS:
                raise LeftTable("you quit")
            try:
                return parse_choice(answer, observation)
            except ChoiceError as exc:
                self.say(str(exc))

    def finish(self, record: GameRecord) -> None:
        """Show the end of a round from this seat: the events not shown yet, the faults, and
        the result."""
        seat = self.seat
        seen = [e for e in record.events if e.visible(seat)]
        if self.shown == 0:  # the round ended before anyone moved (a bot could not start)
            self._header()
        for event in seen[self.shown :]:
            self.say(_event_line(event, self.names))
        self.shown = len(seen)
        for fault in record.faults:
            self.say(f"fault: {seat_label(fault.seat, self.names)} {fault.kind}: {fault.message}")
        self.rounds += 1
        if seat not in record.winners:
            self.say("you lose the round")
        elif len(record.winners) == 1:
            self.say("you win the round")
        else:
            self.say("you share the round")


class HumanHandle(InProcessHandle):
    """The referee's handle on a :class:`HumanBot`: a person is not timed."""

    def __init__(self, bot: HumanBot) -> None:
        super().__init__(bot, bot.name)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Ask the person, with no time limit."""
        return super().act(turn, None)


class WatchedHandle(BotHandle):
    """A bot's handle that first shows the person at ``seat`` what their seat has seen happen
    since they last looked, so the log appears as the round goes, not only at their turns."""

    def __init__(self, handle: BotHandle, human: HumanBot, seat: int) -> None:
        self.handle = handle
        self.name = handle.name
        self.human = human
        self.seat = seat

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        """Start the bot's round."""
        self.handle.start(seat, players, variant, seed)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        """Show the person's view, then ask the bot."""
        self.human.show(turn.game.observation(self.seat, turn.tokens, turn.round_number))
        return self.handle.act(turn, time_limit)

    def after_fault(self) -> None:
        """Let the bot's handle clean up."""
        self.handle.after_fault()

    def close(self) -> None:
        """Close the bot's handle."""
        self.handle.close()


def seat_names(bots: Sequence[str], seat: int) -> list[str]:
    """The names of the seats on the person's screen: ``bots`` in order with :data:`YOU` at
    ``seat``."""
    names = list(bots)
    names.insert(seat, YOU)
    return names


def play_human(
    referee: Referee,
    handles: Sequence[BotHandle],
    seat: int,
    whole_match: bool,
    round_options: dict[str, Any],
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> GameRecord | MatchRecord:
    """Play a round (or with ``whole_match`` a match) with a person at ``seat`` and the bots of
    ``handles`` (in order) in the other seats; ``round_options`` go to
    :meth:`~arena.referee.play.Referee.play_round` (``deck``, ``seed``, ``first``, ``opening``) or,
    for a match, ``seed`` and ``first`` to :meth:`~arena.referee.play.Referee.play_match`. The
    person answers through ``ask`` and sees the game through ``say`` (see :class:`HumanBot`). Shows
    the result and returns the record."""
    names = seat_names([h.name for h in handles], seat)
    human = HumanBot(seat, names, ask, say)
    seated: list[BotHandle] = [WatchedHandle(h, human, seat) for h in handles]
    seated.insert(seat, HumanHandle(human))
    if not whole_match:
        record = referee.play_round(seated, **round_options)
        human.finish(record)
        return record
    match = referee.play_match(
        seated,
        seed=round_options.get("seed", 0),
        first=round_options.get("first", 0),
        on_round=human.finish,
    )
    say("")
    say("tokens: " + ", ".join(f"{seat_label(s, names)} {t}" for s, t in enumerate(match.tokens)))
    winner = "you win" if match.winner == seat else f"{seat_label(match.winner, names)} wins"
    say(f"{winner} the match")
    return match
