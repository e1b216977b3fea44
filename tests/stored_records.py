"""Comparing stored tournaments: what must be reproducible about a game, by key."""

from __future__ import annotations

from typing import Any

from arena.referee.records import GameRecord
from leaderboard.store import Store


def essence(record: GameRecord) -> tuple[Any, ...]:
    """Everything about a game that must be reproducible (not times, not fault messages)."""
    return (
        tuple(record.seats),
        tuple(record.deck),
        record.seed,
        tuple(record.actions),
        tuple(record.winners),
        record.end_reason,
        tuple((f.seat, f.kind, f.move) for f in record.faults),
    )


def stored(store: Store, tid: int) -> dict[str, tuple[Any, ...]]:
    """The essence of every stored game of tournament ``tid``, by key."""
    return {g.key: essence(g.record) for g in store.stored_games(tid)}
