"""The table as text, for ``render()``: a spectator's view of a round played by action index
(every hand shown, as at the table's side), and the events of the last move."""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine import layout as L
from arena.game.cards import Card
from arena.game.observation import Observation
from arena.rl.round import EncodedRound


def _cards(values: Sequence[int]) -> str:
    return " ".join(str(Card(v)) for v in values if v) or "-"


def table_text(game: EncodedRound, names: Sequence[str], moves: Sequence[str] | None = None) -> str:
    """The table now: the variant, the draw pile, the face-up cards and who is to move; per seat
    its hand, whether it is in the round or protected, and its discards; then ``moves`` (lines
    saying what happened last), by default the last move's events (hidden ones included, as a
    spectator sees them)."""
    public = Observation.from_view(game.view(0))
    state = game.state
    if game.over:
        status = "round over: " + ", ".join(names[s] for s in game.winners) + " won"
    else:
        status = f"{names[game.turn]} to move"
    lines = [
        f"{game.variant.name}, {game.players} players; draw pile {public.deck_size} cards; "
        f"face up: {_cards(public.face_up)}; {status}"
    ]
    width = max(len(n) for n in names)
    for seat, name in enumerate(names):
        hand = state[L.S_HAND + 2 * seat : L.S_HAND + 2 * seat + 2].tolist()
        where = "in " if public.alive[seat] else "out"
        shield = "  (protected)" if public.protected[seat] else ""
        lines.append(
            f"{name:<{width}}  {where}  hand: {_cards(hand):<16} "
            f"discards: {_cards(public.discards(seat))}{shield}"
        )
    if moves is None:
        moves = [event.text(names) for event in game.last_events()]
    lines += ["  " + line for line in moves]
    return "\n".join(lines)
