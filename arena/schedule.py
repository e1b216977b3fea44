"""The games of a round-robin tournament, in a fixed order, each with its key and seed.

Every table of ``players`` entrants (every pair by default) plays every deck in every seat
rotation: with two players each deck twice with the seats swapped (duplicate play), so the luck
of the deal cancels. ``repeat`` plays the whole set of decks again with other bot seeds.

The order is repeat, then deck, then table, then rotation, so a tournament stopped early has
played every table on the first decks rather than some tables on every deck. A game's seed
derives from the tournament seed and its key alone: records do not depend on which worker
played a game, in which block, or how often the run was interrupted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from arena.seeds import derive_seed


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule: its position, key, deck position, repetition, seat rotation,
    entrant names in seat order (seat 0 moves first) and seed."""

    index: int
    key: str
    deck: int
    repeat: int
    rotation: int
    seats: tuple[str, ...]
    seed: int


def game_key(repeat: int, deck: int, seats: Sequence[str]) -> str:
    """The key of the game on deck position ``deck`` in repetition ``repeat`` with ``seats``
    (entrant names in seat order): unique within a tournament, e.g.
    ``repeat=0/deck=3/seats=["greedy","random"]``."""
    names = json.dumps(list(seats), separators=(",", ":"), ensure_ascii=False)
    return f"repeat={repeat}/deck={deck}/seats={names}"


def tables(entrants: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Every table of ``players`` distinct entrants, in the entrants' order."""
    if len(set(entrants)) != len(entrants):
        raise ValueError(f"entrant names are not unique: {list(entrants)}")
    if not 2 <= players <= 4:
        raise ValueError(f"a table seats 2 to 4 players, not {players}")
    return list(combinations(entrants, players))


def round_robin(
    entrants: Sequence[str], decks: int, players: int = 2, repeat: int = 1, seed: int = 0
) -> list[ScheduledGame]:
    """The schedule: for each repetition, deck and table, the table in every seat rotation."""
    if decks < 1:
        raise ValueError("a tournament needs at least one deck")
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    games: list[ScheduledGame] = []
    for r in range(repeat):
        for d in range(decks):
            for table in tables(entrants, players):
                for rotation in range(players):
                    seats = table[rotation:] + table[:rotation]
                    key = game_key(r, d, seats)
                    seed_ = derive_seed(seed, "game", key)
                    games.append(ScheduledGame(len(games), key, d, r, rotation, seats, seed_))
    return games


def blocks(games: Sequence[ScheduledGame], size: int) -> Iterator[list[ScheduledGame]]:
    """``games`` in consecutive blocks of at most ``size``."""
    if size < 1:
        raise ValueError("block size must be at least 1")
    for start in range(0, len(games), size):
        yield list(games[start : start + size])
