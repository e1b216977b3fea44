"""Stored games as others read them: the JSON of ``arena replay --json`` and of each line of
``arena export --format jsonl``, and the CSV rows of ``arena games --csv`` and ``arena export
--format csv``.

A game of a tournament whose decks are not revealed yet (secret decks, not finished; see
:attr:`leaderboard.store.TournamentDetail.decks_revealed`) shows only what every seat saw: no
deck order and only the public events.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from leaderboard.store import GameRow, StoredGame

#: The most seats a table has: the CSV has this many seat, score and time columns.
MAX_SEATS = 4

#: The columns of a game's CSV row (see :func:`csv_row`).
CSV_COLUMNS: tuple[str, ...] = (
    "game",
    "tournament",
    "key",
    "deck",
    "rotation",
    "players",
    *(f"seat_{s}" for s in range(MAX_SEATS)),
    "winners",
    *(f"score_{s}" for s in range(MAX_SEATS)),
    "end_reason",
    "faults",
    "fault_details",
    *(f"time_{s}" for s in range(MAX_SEATS)),
    "deck_cards",
    "created",
)


def game_json(
    tournament_id: int, game: StoredGame, hidden: bool, own_seats: Collection[int] = ()
) -> dict[str, Any]:
    """Stored game ``game`` of tournament ``tournament_id`` as JSON: ``id``, ``tournament``,
    ``key``, ``deck_position`` (``None``: no stored deck), ``rotation``, ``hidden``, then
    every field of its :meth:`~arena.referee.records.GameRecord.to_json` (so that
    :meth:`~arena.referee.records.GameRecord.from_json` reads it back). With ``hidden`` the record's
    ``deck`` is ``None`` and only its public events are kept, and the private events seen by
    ``own_seats`` (the seats of the reader's own bots, listed as ``own_seats``)."""
    data = game.record.to_json()
    own = sorted(own_seats) if hidden else []
    if hidden:
        data["deck"] = None
        data["events"] = [
            e
            for e in data["events"]
            if e["visible_to"] is None or not set(own).isdisjoint(e["visible_to"])
        ]
    return {
        "id": game.id,
        "tournament": tournament_id,
        "key": game.key,
        "deck_position": game.deck,
        "rotation": game.rotation,
        "hidden": hidden,
        "own_seats": own,
        **data,
    }


def _number(value: float) -> str:
    return f"{value:g}"


def csv_row(row: GameRow, revealed: bool) -> list[str]:
    """The cells of game ``row`` under :data:`CSV_COLUMNS`: its id, tournament, key, deck
    position, rotation and number of players; the entrant in each seat (empty beyond the
    table); the winners' names (``;`` between the names of a shared win); each seat's score
    (1 for a win, 1/k for a win shared by k, else 0); how the round ended; the number of faults
    and each one (``seat S (NAME) KIND at move M: MESSAGE``, `` | `` between them); each seat's
    thinking time in seconds; the deck order (card values from the top, as digits; empty
    unless ``revealed``); when it was stored (ISO 8601, UTC)."""
    seats = list(row.seats)
    pad = [""] * (MAX_SEATS - len(seats))
    winners = set(row.winners)
    scores = [_number(1 / len(winners)) if s in winners else "0" for s in range(len(seats))]
    faults = [
        f"seat {f['seat']} ({seats[f['seat']]}) {f['kind']} at move {f['move']}: {f['message']}"
        for f in row.faults
    ]
    return [
        str(row.id),
        str(row.tournament),
        row.key,
        "" if row.deck is None else str(row.deck),
        str(row.rotation),
        str(len(seats)),
        *seats,
        *pad,
        ";".join(seats[s] for s in row.winners),
        *scores,
        *pad,
        row.end_reason,
        str(len(row.faults)),
        " | ".join(faults),
        *(_number(round(float(t), 4)) for t in row.times),
        *[""] * (MAX_SEATS - len(row.times)),
        (row.cards or "") if revealed else "",
        row.created.isoformat(),
    ]
