"""The games of a round-robin tournament, in a fixed order, each with its key and seed.

Every table of ``players`` entrants (every pair by default) plays every deck in every seat
rotation: with two players each deck twice with the seats swapped (duplicate play), so the luck
of the deal cancels. ``repeat`` plays the whole set of decks again with other bot seeds.

The order is repeat, then *tile*, then *run* of decks, then table, then rotation, then deck.
Entrants are taken in groups of :func:`group_size` (16 at tables of two); a tile is the set of
groups a table's entrants come from, and tiles come in lexicographic order, so consecutive tiles
share a group. A worker then needs the hosts of at most a few groups at a time, whatever the size
of the field, and starts each bot's host a few times in the whole tournament instead of once per
game. A run is :data:`DECK_RUN` consecutive decks (:data:`LONE_TABLE_RUN` where a tile is one
table, as in a match, so that a match block completes its pairs): each seating plays the run's
decks one after the other, so a bot plays that many different decks before any deck again, and
its host needs a fresh process (:mod:`arena.hosting.epochs`: no process plays a deck twice) once
per run and seating, not once per game. A field no larger than one group is one tile: every table
on the first run of decks comes before any table on the later ones, so a tournament stopped early
has played every table on the first decks. A game's
seed derives from the tournament seed and its key alone: records do not depend on which worker
played a game, in which block, or how often the run was interrupted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from arena.seeds import seed_deriver
from arena.tournament.teams import tables_without_teammates, team_sizes, teammates

#: Decks each seating plays in a row (see the module's description).
DECK_RUN = 36
#: Decks in a row where a tile is a single table: a match's 16-game block is 8 pairs.
LONE_TABLE_RUN = 8


@dataclass(frozen=True, slots=True)
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
    return _key(repeat, deck, _seats_text(seats))


def _seats_text(seats: Sequence[str]) -> str:
    """The seats' part of a game key: the names in seat order as compact JSON."""
    return json.dumps(list(seats), separators=(",", ":"), ensure_ascii=False)


def _key(repeat: int, deck: int, seats_text: str) -> str:
    return f"repeat={repeat}/deck={deck}/seats={seats_text}"


def tables(entrants: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Every table of ``players`` distinct entrants, in the entrants' order."""
    if len(set(entrants)) != len(entrants):
        raise ValueError(f"entrant names are not unique: {list(entrants)}")
    if not 2 <= players <= 4:
        raise ValueError(f"a table seats 2 to 4 players, not {players}")
    return list(combinations(entrants, players))


def group_size(players: int) -> int:
    """How many entrants form a group of the schedule's tiles at tables of ``players``: a tile
    needs the hosts of at most ``players`` groups, about 32 hosts."""
    return max(4, 32 // players)


def tiles(
    entrants: Sequence[str], players: int
) -> list[tuple[tuple[int, ...], list[tuple[str, ...]]]]:
    """Every table of ``players`` entrants, by tile (the sorted groups its entrants come from),
    the tiles in lexicographic order and the tables of each in the entrants' order."""
    size = group_size(players)
    group = {name: i // size for i, name in enumerate(entrants)}
    by_tile: dict[tuple[int, ...], list[tuple[str, ...]]] = {}
    for table in tables(entrants, players):
        by_tile.setdefault(tuple(sorted({group[n] for n in table})), []).append(table)
    return sorted(by_tile.items())


def round_robin(
    entrants: Sequence[str],
    decks: int,
    players: int = 2,
    repeat: int = 1,
    seed: int = 0,
    *,
    keep: Callable[[tuple[str, ...]], bool] | None = None,
    first: int = 0,
    runs: bool = True,
) -> list[ScheduledGame]:
    """The schedule: for each repetition, tile and run of decks, each table of the tile in every
    seat rotation on each deck of the run. ``keep`` leaves out the tables it is false for (the
    order of the others does not change); ``first`` is the index of the first game; without
    ``runs`` every run is one deck (the order of tournaments stored before runs: deck, then
    table, then rotation)."""
    if decks < 1:
        raise ValueError("a tournament needs at least one deck")
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    games: list[ScheduledGame] = []
    game_seed = seed_deriver(seed, "game")
    by_tile = tiles(entrants, players)
    if keep is not None:
        by_tile = [(tile, [t for t in group if keep(t)]) for tile, group in by_tile]
    for r in range(repeat):
        for _, tile_tables in by_tile:
            # A tile's seatings, each with its key's seats part, once for all its decks.
            seatings = [
                (rotation, seats, _seats_text(seats))
                for table in tile_tables
                for rotation in range(players)
                for seats in [table[rotation:] + table[:rotation]]
            ]
            run = 1 if not runs else DECK_RUN if len(tile_tables) > 1 else LONE_TABLE_RUN
            for start in range(0, decks, run):
                for rotation, seats, text in seatings:
                    for d in range(start, min(decks, start + run)):
                        key = _key(r, d, text)
                        seed_ = game_seed(key)
                        index = first + len(games)
                        games.append(ScheduledGame(index, key, d, r, rotation, seats, seed_))
    return games


def grown_schedule(
    stages: Sequence[Sequence[str]],
    decks: int,
    players: int = 2,
    repeat: int = 1,
    seed: int = 0,
    gauntlet: str | None = None,
    runs: bool = True,
    teams: Mapping[str, str] | None = None,
) -> list[ScheduledGame]:
    """The schedule of a tournament whose entrants came in ``stages``: the entrants it was
    created with, then each group of entrants added to it. The first stage's games come first,
    in :func:`round_robin`'s order; then, for each later stage, the games of every table of the
    grown field that seats one of its entrants, in the same order over the grown field (entrants
    in the order they came). Adding entrants therefore leaves every earlier game where it was,
    with its key and seed. With ``gauntlet`` (an entrant of the first stage) only the tables
    that seat it are played: that entrant against every other and no other pair. With
    ``teams`` (entrant name to team, :mod:`arena.tournament.teams`) no table seats two entrants
    of one team."""
    games: list[ScheduledGame] = []
    field: list[str] = []
    for number, stage in enumerate(stages):
        field += stage
        keep = _seating(frozenset(stage) if number else None, gauntlet, teams or {})
        games += round_robin(
            field, decks, players, repeat, seed, keep=keep, first=len(games), runs=runs
        )
    return games


def _seating(
    anyof: frozenset[str] | None, gauntlet: str | None, teams: Mapping[str, str]
) -> Callable[[tuple[str, ...]], bool]:
    """Whether a table seats one of ``anyof`` (when given) and ``gauntlet`` (when given), and
    no two entrants of one of ``teams``."""

    def keep(table: tuple[str, ...]) -> bool:
        if anyof is not None and anyof.isdisjoint(table):
            return False
        if gauntlet is not None and gauntlet not in table:
            return False
        return not teams or not teammates(table, teams)

    return keep


def schedule_size(
    entrants: Sequence[str],
    decks: int,
    players: int = 2,
    repeat: int = 1,
    gauntlet: str | None = None,
    teams: Mapping[str, str] | None = None,
) -> int:
    """How many games the schedule of ``entrants`` has, grown or not (the stages of
    :func:`grown_schedule` together play every table of the whole field once), counted without
    making them; ``gauntlet``: only the tables that seat that entrant; ``teams``: no table
    seating two entrants of one team."""
    teams = teams or {}
    if gauntlet is None:
        tables = tables_without_teammates(team_sizes(entrants, teams), players)
    else:
        own = teams.get(gauntlet)
        others = [n for n in entrants if n != gauntlet and (own is None or teams.get(n) != own)]
        tables = tables_without_teammates(team_sizes(others, teams), players - 1)
    return tables * players * decks * repeat


def blocks(games: Sequence[ScheduledGame], size: int) -> Iterator[list[ScheduledGame]]:
    """``games`` in consecutive blocks of at most ``size``."""
    if size < 1:
        raise ValueError("block size must be at least 1")
    for start in range(0, len(games), size):
        yield list(games[start : start + size])
