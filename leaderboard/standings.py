"""Standings: stored games turned into a leaderboard. Pure functions, no database, no I/O.

:func:`compute_standings` takes a tournament's :class:`~leaderboard.store.StoredGame` list and
returns :class:`Standings`: per bot its Elo with a 95% interval, games, wins, draws and losses,
its score share with a Wilson interval and its faults; plus the likelihood of superiority of
every pair, a head-to-head score matrix, faults by kind with example messages, thinking time,
and how the rating fit was made. See ``docs/reports.md``.

The independent unit for variance is the deck: every game on deck position ``d`` belongs to
unit ``"deck d"`` (the same deck played with seats rotated), a game on no stored deck is its
own unit. The result does not depend on the order of the games.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.referee.records import FAULT_KINDS, UNCOUNTED
from leaderboard.ratings import (
    BASE_ELO,
    GameResult,
    Ratings,
    fit_ratings,
    wilson_interval,
    win_rates,
)
from leaderboard.store import EntrantInfo, StoredGame

__all__ = [
    "DISQUALIFIED",
    "MAX_EXAMPLES",
    "MAX_MESSAGE",
    "FaultExample",
    "FaultSummary",
    "PairScore",
    "Standing",
    "Standings",
    "Timing",
    "compute_standings",
    "game_result",
    "game_unit",
    "head_to_head",
]

#: The fault kind of a seat that forfeited because its bot was already disqualified.
DISQUALIFIED = "disqualified"
#: How many example messages are kept per bot and fault kind.
MAX_EXAMPLES = 3
#: Example fault messages longer than this many characters are shortened (ending in "…").
MAX_MESSAGE = 300


def _finite(x: float | None) -> float | None:
    """``x`` if it is a finite number, else ``None`` (for strict JSON)."""
    return x if x is not None and math.isfinite(x) else None


def game_unit(game: StoredGame) -> str:
    """The independent unit of a stored game for variance estimation: ``"deck <position>"``,
    or ``"game <key>"`` when the game was played on no stored deck (its own unit)."""
    return f"deck {game.deck}" if game.deck is not None else f"game {game.key}"


def _valid_table(game: StoredGame) -> bool:
    """2 to 4 distinct bot names and at least one winner, every winner a real seat."""
    record = game.record
    seats = record.seats
    if not 2 <= len(seats) <= 4 or len(set(seats)) != len(seats):
        return False
    winners = set(record.winners)
    return bool(winners) and all(0 <= w < len(seats) for w in winners) and not record.void


def game_result(game: StoredGame) -> GameResult | None:
    """The rated result of a stored game: seats, shares (``1/k`` for each of ``k`` winners,
    0 otherwise) and :func:`game_unit`; ``None`` when the game cannot be rated (a void round,
    see :attr:`~arena.referee.records.GameRecord.void`; no winners,
    a winner that is not a seat, fewer than 2 or more than 4 seats, or a bot at two seats)."""
    if not _valid_table(game):
        return None
    record = game.record
    winners = set(record.winners)
    share = 1.0 / len(winners)
    scores = tuple(share if seat in winners else 0.0 for seat in range(len(record.seats)))
    return GameResult(tuple(record.seats), scores, game_unit(game))


def head_to_head(result: GameResult, a: str, b: str) -> float | None:
    """``a``'s head-to-head point against ``b`` in one game, or ``None`` when it does not count.

    Counted are games where both sat and at least one of the two won: ``a`` gets 1 if ``a`` won
    and ``b`` did not, 0 if ``b`` won and ``a`` did not, and 0.5 if both shared the win. At a
    two-player table someone always wins, so this is simply ``a``'s share of the round. At three
    or four seats a game won by a third bot says nothing about ``a`` against ``b`` and is left
    out.
    """
    if a not in result.players or b not in result.players:
        return None
    won_a = result.scores[result.players.index(a)] > 0.0
    won_b = result.scores[result.players.index(b)] > 0.0
    if won_a and won_b:
        return 0.5
    if won_a:
        return 1.0
    if won_b:
        return 0.0
    return None


@dataclass(frozen=True)
class Standing:
    """One bot's line of the leaderboard.

    ``rank`` counts from 1 by Elo, best first (ties by name); bots without a rated game have
    ``rank``, ``elo`` and ``score`` ``None`` and come last. ``elo_lo``/``elo_hi`` are the 95%
    interval ends (``None`` when unbounded: fewer than two units). ``wins`` counts games won
    alone, ``draws`` games whose win was shared, ``losses`` the rest; ``score`` is the mean
    share (a two-player draw is 0.5) with its 95% Wilson interval ``score_lo``/``score_hi``.
    ``faults`` counts the bot's faults except those that are no bot's doing (``disqualified``
    forfeits, ``shortage``); ``disqualified`` tells
    whether it forfeited any game for having had too many faults.
    """

    rank: int | None
    bot: str
    elo: float | None
    elo_lo: float | None
    elo_hi: float | None
    games: int
    wins: int
    draws: int
    losses: int
    score: float | None
    score_lo: float | None
    score_hi: float | None
    faults: int
    disqualified: bool

    def to_dict(self) -> dict[str, object]:
        """The JSON-ready line: ``rank, bot, elo, elo_lo, elo_hi, games, wins, draws, losses,
        score, score_lo, score_hi, faults`` (non-finite numbers as ``None``)."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "elo": _finite(self.elo),
            "elo_lo": _finite(self.elo_lo),
            "elo_hi": _finite(self.elo_hi),
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": _finite(self.score),
            "score_lo": _finite(self.score_lo),
            "score_hi": _finite(self.score_hi),
            "faults": self.faults,
        }

    def to_json(self) -> str:
        """``to_dict()`` as a strict JSON string."""
        return json.dumps(self.to_dict(), allow_nan=False)


@dataclass(frozen=True)
class PairScore:
    """``bot``'s head-to-head record against ``opponent`` (see :func:`head_to_head`).

    ``games`` counts rated games where both sat, ``counted`` those that count (at least one of
    the two won), ``points`` the bot's points in them; ``score = points / counted`` with its 95%
    Wilson interval ``[lo, hi]`` (all three ``None`` when nothing counted).
    """

    bot: str
    opponent: str
    games: int
    counted: int
    points: float
    score: float | None
    lo: float | None
    hi: float | None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (without the two names, which key it in :class:`Standings`)."""
        return {
            "games": self.games,
            "counted": self.counted,
            "points": self.points,
            "score": _finite(self.score),
            "lo": _finite(self.lo),
            "hi": _finite(self.hi),
        }


@dataclass(frozen=True)
class FaultExample:
    """One fault as an example: the game's key, the fault kind, the number of actions played
    in the round before it, and the message (shortened to :data:`MAX_MESSAGE` characters)."""

    game: str
    kind: str
    move: int
    message: str

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {"game": self.game, "kind": self.kind, "move": self.move, "message": self.message}


@dataclass(frozen=True)
class FaultSummary:
    """A bot's faults: ``by_kind`` counts every fault by kind (``disqualified`` forfeits
    included, kinds in the order of :data:`arena.referee.records.FAULT_KINDS`, unknown kinds after
    them by name); ``total`` counts all but those that are no bot's doing (``disqualified``,
    ``shortage``: :data:`~arena.referee.records.UNCOUNTED`); ``examples`` holds up to
    :data:`MAX_EXAMPLES` distinct messages per kind, from the games in key order."""

    bot: str
    total: int
    by_kind: dict[str, int]
    examples: tuple[FaultExample, ...]

    @property
    def disqualified(self) -> bool:
        """Whether the bot forfeited any game because it had been disqualified."""
        return self.by_kind.get(DISQUALIFIED, 0) > 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "total": self.total,
            "disqualified": self.disqualified,
            "by_kind": dict(self.by_kind),
            "examples": [e.to_dict() for e in self.examples],
        }


@dataclass(frozen=True)
class Timing:
    """A bot's thinking time: ``time`` sums ``GameRecord.times`` (seconds, every game it
    played), ``moves`` sums ``GameRecord.moves`` (answers it gave)."""

    bot: str
    time: float
    moves: int

    @property
    def mean_move_time(self) -> float | None:
        """Seconds per move, ``time / moves``; ``None`` when the bot made no move."""
        return self.time / self.moves if self.moves else None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "time": _finite(self.time),
            "moves": self.moves,
            "mean_move_time": _finite(self.mean_move_time),
        }


@dataclass(frozen=True)
class Standings:
    """A tournament's standings, everything keyed and ordered by bot in rank order.

    ``standings`` are the leaderboard lines; ``ratings`` the rating fit (its ``units``,
    ``ridge``, ``anchor``, ``games``); ``los[a][b]`` the likelihood that ``a`` is stronger than
    ``b`` (``None`` when it cannot be estimated or either bot is unrated); ``pairs[a][b]`` the
    head-to-head record of ``a`` against ``b``; ``faults`` and ``timing`` per bot. ``games``
    counts every game given, ``rated_games`` those in the fit (see :func:`game_result`).
    """

    standings: tuple[Standing, ...]
    ratings: Ratings
    los: dict[str, dict[str, float | None]]
    pairs: dict[str, dict[str, PairScore]]
    faults: dict[str, FaultSummary]
    timing: dict[str, Timing]
    games: int
    rated_games: int

    @property
    def bots(self) -> tuple[str, ...]:
        """Every bot in rank order."""
        return tuple(s.bot for s in self.standings)

    @property
    def total_time(self) -> float:
        """Total thinking time of all bots in all games, in seconds."""
        return math.fsum(t.time for t in self.timing.values())

    def __getitem__(self, bot: str) -> Standing:
        """The line of ``bot`` (``KeyError`` if absent)."""
        for standing in self.standings:
            if standing.bot == bot:
                return standing
        raise KeyError(bot)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``games``, ``rated_games``, ``fit``, ``standings``, ``los``,
        ``pairs``, ``faults``, ``timing``; non-finite numbers become ``None``."""
        return {
            "games": self.games,
            "rated_games": self.rated_games,
            "fit": {
                "model": "Bradley-Terry / Luce maximum likelihood",
                "unit": "deck",
                "units": self.ratings.units,
                "games": self.ratings.games,
                "ridge": self.ratings.ridge,
                "anchor": self.ratings.anchor,
                "confidence": 0.95,
            },
            "standings": [s.to_dict() for s in self.standings],
            "los": {a: {b: _finite(v) for b, v in row.items()} for a, row in self.los.items()},
            "pairs": {a: {b: p.to_dict() for b, p in row.items()} for a, row in self.pairs.items()},
            "faults": {bot: f.to_dict() for bot, f in self.faults.items()},
            "timing": {bot: t.to_dict() for bot, t in self.timing.items()},
        }

    def to_json(self) -> str:
        """``to_dict()`` as a strict JSON string (no NaN or Infinity)."""
        return json.dumps(self.to_dict(), allow_nan=False)


def _shorten(message: str) -> str:
    """``message`` cut to :data:`MAX_MESSAGE` characters, ending in "…" when cut."""
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def _kind_order(kind: str) -> tuple[int, str]:
    """Known fault kinds in :data:`FAULT_KINDS` order, unknown ones after them by name."""
    return (FAULT_KINDS.index(kind), "") if kind in FAULT_KINDS else (len(FAULT_KINDS), kind)


def _fault_summaries(games: Sequence[StoredGame]) -> dict[str, FaultSummary]:
    """Faults per bot (games already in key order); a fault naming no seat is ignored."""
    counts: dict[str, dict[str, int]] = {}
    examples: dict[str, dict[str, list[FaultExample]]] = {}
    for game in games:
        seats = game.record.seats
        for fault in game.record.faults:
            if not 0 <= fault.seat < len(seats):
                continue
            bot = seats[fault.seat]
            by_kind = counts.setdefault(bot, {})
            by_kind[fault.kind] = by_kind.get(fault.kind, 0) + 1
            kept = examples.setdefault(bot, {}).setdefault(fault.kind, [])
            message = _shorten(fault.message)
            if len(kept) < MAX_EXAMPLES and all(e.message != message for e in kept):
                kept.append(FaultExample(game.key, fault.kind, fault.move, message))
    out: dict[str, FaultSummary] = {}
    for bot, by_kind in counts.items():
        kinds = sorted(by_kind, key=_kind_order)
        out[bot] = FaultSummary(
            bot=bot,
            total=sum(n for kind, n in by_kind.items() if kind not in UNCOUNTED),
            by_kind={kind: by_kind[kind] for kind in kinds},
            examples=tuple(e for kind in kinds for e in examples[bot][kind]),
        )
    return out


def _timings(games: Sequence[StoredGame]) -> dict[str, Timing]:
    """Thinking time and moves per bot over every game."""
    times: dict[str, list[float]] = {}
    moves: dict[str, int] = {}
    for game in games:
        record = game.record
        for seat, bot in enumerate(record.seats):
            if seat < len(record.times):
                times.setdefault(bot, []).append(float(record.times[seat]))
            if seat < len(record.moves):
                moves[bot] = moves.get(bot, 0) + int(record.moves[seat])
    bots = set(times) | set(moves)
    return {b: Timing(b, math.fsum(times.get(b, [])), moves.get(b, 0)) for b in bots}


def _pair_scores(
    results: Sequence[GameResult], bots: Sequence[str]
) -> dict[str, dict[str, PairScore]]:
    """The head-to-head record of every ordered pair of distinct ``bots``."""
    together: dict[tuple[str, str], int] = {}
    counted: dict[tuple[str, str], int] = {}
    points: dict[tuple[str, str], float] = {}
    for result in results:
        for a in result.players:
            for b in result.players:
                if a == b:
                    continue
                together[a, b] = together.get((a, b), 0) + 1
                point = head_to_head(result, a, b)
                if point is not None:
                    counted[a, b] = counted.get((a, b), 0) + 1
                    points[a, b] = points.get((a, b), 0.0) + point
    out: dict[str, dict[str, PairScore]] = {}
    for a in bots:
        row: dict[str, PairScore] = {}
        for b in bots:
            if a == b:
                continue
            n = counted.get((a, b), 0)
            got = points.get((a, b), 0.0)
            if n:
                lo, hi = wilson_interval(min(got, float(n)), n)
                row[b] = PairScore(a, b, together.get((a, b), 0), n, got, got / n, lo, hi)
            else:
                row[b] = PairScore(a, b, together.get((a, b), 0), 0, 0.0, None, None, None)
        out[a] = row
    return out


def compute_standings(
    games: Sequence[StoredGame],
    entrants: Iterable[str | EntrantInfo] = (),
    *,
    anchor: str | None = None,
    anchor_elo: float = BASE_ELO,
    ridge: float | None = None,
) -> Standings:
    """The standings of a tournament from its stored games.

    Ratings: one :func:`~leaderboard.ratings.fit_ratings` over every game that can be rated
    (:func:`game_result`: games with no winner or a malformed table are left out of the
    ratings, the win/draw/loss counts, the scores and the head-to-head matrix, but their faults
    and thinking time still count), with the deck as the independent unit (:func:`game_unit`).
    ``anchor`` pins that bot at ``anchor_elo`` (``ValueError`` if it has no rated game);
    without it the mean Elo is 1500. ``ridge`` is passed on to the fit.

    ``entrants`` (names or :class:`~leaderboard.store.EntrantInfo`) adds bots that played no
    rated game: they appear last, by name, with ``rank``, ``elo`` and ``score`` ``None``. Bots
    found in the games are included whether listed or not.

    The result does not depend on the order of ``games``.
    """
    ordered = sorted(games, key=lambda g: (g.key, g.id))
    results = [r for r in (game_result(g) for g in ordered) if r is not None]
    played = {bot for g in ordered for bot in g.record.seats}
    listed = {e.name if isinstance(e, EntrantInfo) else e for e in entrants}
    rated = {bot for r in results for bot in r.players}
    if anchor is not None and anchor not in rated:
        known = ", ".join(sorted(rated)) or "none"
        raise ValueError(
            f"anchor {anchor!r} has no rated game in this tournament (bots with rated games: "
            f"{known})"
        )
    ratings = fit_ratings(results, anchor, ridge=ridge, base=anchor_elo if anchor else BASE_ELO)
    rates = win_rates(results)
    faults = _fault_summaries(ordered)
    timing = _timings(ordered)

    wins: dict[str, int] = {}
    draws: dict[str, int] = {}
    for result in results:
        winners = [p for p, s in zip(result.players, result.scores, strict=True) if s > 0.0]
        for bot in winners:
            tally = wins if len(winners) == 1 else draws
            tally[bot] = tally.get(bot, 0) + 1

    lines: list[Standing] = []
    for rank, rating in enumerate(ratings.ratings, 1):
        bot = rating.name
        rate = rates[bot]
        fault = faults.get(bot)
        w, d = wins.get(bot, 0), draws.get(bot, 0)
        lines.append(
            Standing(
                rank=rank,
                bot=bot,
                elo=rating.elo,
                elo_lo=_finite(rating.lo),
                elo_hi=_finite(rating.hi),
                games=rate.games,
                wins=w,
                draws=d,
                losses=rate.games - w - d,
                score=rate.rate,
                score_lo=rate.lo,
                score_hi=rate.hi,
                faults=fault.total if fault else 0,
                disqualified=fault.disqualified if fault else False,
            )
        )
    for bot in sorted((played | listed) - rated):
        fault = faults.get(bot)
        lines.append(
            Standing(
                rank=None,
                bot=bot,
                elo=None,
                elo_lo=None,
                elo_hi=None,
                games=0,
                wins=0,
                draws=0,
                losses=0,
                score=None,
                score_lo=None,
                score_hi=None,
                faults=fault.total if fault else 0,
                disqualified=fault.disqualified if fault else False,
            )
        )

    bots = [s.bot for s in lines]
    los: dict[str, dict[str, float | None]] = {}
    for a in bots:
        los[a] = {
            b: (_finite(ratings.los(a, b)) if a in rated and b in rated else None)
            for b in bots
            if b != a
        }
    return Standings(
        standings=tuple(lines),
        ratings=ratings,
        los=los,
        pairs=_pair_scores(results, bots),
        faults={b: faults[b] for b in bots if b in faults},
        timing={b: timing.get(b, Timing(b, 0.0, 0)) for b in bots},
        games=len(ordered),
        rated_games=len(results),
    )
