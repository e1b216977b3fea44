"""What each bot plays, and how it is knocked out, read from the stored events.

:func:`card_plays` counts, per bot, the cards it played (``PLAY`` events at its seat), the
rounds it was knocked out of with the card whose play did it (the last ``PLAY`` of the round
before the ``KNOCKOUT``: a Guard's right guess, a Baron, a Prince making it discard the
Princess, its own Princess) and whose play that was, the rounds it forfeited (``FORFEIT``:
a fault), and the opponents its own plays knocked out. Only the events of
:class:`arena.game.events.EventKind` are read; no rule is applied here. Pure: no database,
no I/O. See ``docs/reports.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.game.cards import Card
from arena.game.events import EventKind
from leaderboard.store import StoredGame

__all__ = ["CARDS", "PlayStats", "card_name", "card_plays"]

#: Every card, by value.
CARDS = tuple(Card)


def card_name(value: int) -> str:
    """A card value's name ("Guard"), or "unknown" for a value that names no card."""
    return str(Card(value)) if 1 <= value <= len(CARDS) else "unknown"


@dataclass
class PlayStats:
    """One bot's plays over ``games`` rounds: ``plays[card]`` cards played by value;
    ``knocked_out`` rounds a play knocked it out of, ``by_card[card]`` by the card of that
    play, ``own[card]`` of those by its own play (a Baron it lost, its Princess);
    ``forfeits`` rounds it forfeited for a fault (not counted in ``knocked_out``);
    ``knocks[card]`` opponents knocked out by its plays of that card."""

    bot: str
    games: int = 0
    plays: dict[int, int] = field(default_factory=dict)
    knocked_out: int = 0
    by_card: dict[int, int] = field(default_factory=dict)
    own: dict[int, int] = field(default_factory=dict)
    forfeits: int = 0
    knocks: dict[int, int] = field(default_factory=dict)

    @property
    def total_plays(self) -> int:
        """Every card it played."""
        return sum(self.plays.values())

    def share(self, card: int) -> float | None:
        """The fraction of its plays that were ``card``, or ``None`` when it played nothing."""
        total = self.total_plays
        return self.plays.get(card, 0) / total if total else None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict; cards are keyed by name ("Guard") in value order."""

        def named(counts: dict[int, int]) -> dict[str, int]:
            return {card_name(c): counts[c] for c in sorted(counts)}

        return {
            "games": self.games,
            "plays": named(self.plays),
            "knocked_out": self.knocked_out,
            "knocked_out_by": named(self.by_card),
            "knocked_out_by_own_play": named(self.own),
            "forfeits": self.forfeits,
            "knocks_out_with": named(self.knocks),
        }


def _add(counts: dict[int, int], card: int) -> None:
    counts[card] = counts.get(card, 0) + 1


def card_plays(games: Sequence[StoredGame]) -> dict[str, PlayStats]:
    """Every bot's :class:`PlayStats` over ``games``, by bot name."""
    stats: dict[str, PlayStats] = {}
    for game in games:
        seats = game.record.seats
        at = [stats.setdefault(bot, PlayStats(bot)) for bot in seats]
        for s in at:
            s.games += 1
        player, played = -1, 0  # the seat and card of the round's last play
        forfeiting = -1  # a seat that forfeited: its knockout follows
        for event in game.record.events:
            seat = event.seat
            if seat is None or not 0 <= seat < len(seats):
                continue
            if event.kind == EventKind.PLAY:
                player, played, forfeiting = seat, event.card, -1
                _add(at[seat].plays, event.card)
            elif event.kind == EventKind.FORFEIT:
                at[seat].forfeits += 1
                forfeiting = seat
            elif event.kind == EventKind.KNOCKOUT and seat == forfeiting:
                forfeiting = -1
            elif event.kind == EventKind.KNOCKOUT:
                victim = at[seat]
                victim.knocked_out += 1
                _add(victim.by_card, played)
                if player == seat:
                    _add(victim.own, played)
                elif 0 <= player < len(seats):
                    _add(at[player].knocks, played)
    return stats
