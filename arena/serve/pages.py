"""The competition's pages and the JSON behind them: the leaderboard, a page per bot, a page per
game (the replay page of docs/replay.md). Rendered on the server with Jinja2, every string a bot
or participant chose escaped; no JavaScript but the replay page's own. The leaderboard reloads
itself every 30 s.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Collection
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from arena.hosting import submissions
from arena.hosting.submissions import SubmissionError
from arena.serve import privacy
from arena.serve.charts import Point, rating_chart
from arena.serve.ladder import LadderSettings
from arena.serve.timewords import time_tag
from leaderboard import competition as C
from leaderboard import participants as P
from leaderboard.store import GameQuery, GameRow, Store

#: Games a bot's page lists, newest first.
RECENT_GAMES = 30
#: The latest games of a bot are looked for in its latest this many ladder tournaments.
RECENT_TOURNAMENTS = 200
#: Blocks of games whose output a participant's page shows per bot, the latest.
OUTPUT_BLOCKS = 10
#: The statuses of an upload on its way into the ladder, shown on the leaderboard.
IN_PROGRESS = ("queued", "building", "checking", "placing")


def sparkline(values: list[float], width: int = 120, height: int = 24) -> Markup:
    """An inline SVG line through ``values`` (oldest first), scaled to fill ``width`` by
    ``height`` pixels; empty with fewer than two values."""
    values = [float(v) for v in values]
    if len(values) < 2:
        return Markup("")
    low, high = min(values), max(values)
    step = (width - 2) / (len(values) - 1)

    def y(v: float) -> float:
        return height / 2 if high == low else 1 + (height - 2) * (high - v) / (high - low)

    points = " ".join(f"{1 + i * step:.1f},{y(v):.1f}" for i, v in enumerate(values))
    label = f"from {values[0]:.0f} to {values[-1]:.0f}"
    return Markup(
        f'<svg class="spark" width="{width}" height="{height}" role="img" '
        f'aria-label="{label}"><polyline points="{points}"/></svg>'
    )


@functools.cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("arena.serve", "templates"),
        autoescape=select_autoescape(["html"]),
    )
    env.filters["sparkline"] = sparkline
    env.filters["when"] = time_tag
    env.filters["rating_chart"] = chart
    return env


def chart(history: list[dict[str, Any]]) -> Markup:
    """The rating chart (:func:`~arena.serve.charts.rating_chart`) of a bot's
    ``rating_history`` as :func:`bot_json` gives it."""
    points = [
        Point(dt.datetime.fromisoformat(h["created"]), h["elo"], h["lo"], h["hi"])
        for h in history
        if h["elo"] is not None and h["created"]
    ]
    return rating_chart(points)


def in_progress(store: Store) -> list[dict[str, Any]]:
    """The uploads on their way into the ladder (:data:`IN_PROGRESS`), oldest first, as anyone
    may see them: ``id``, ``participant``, ``bots`` (once built), ``status``, ``created``."""
    keep = ("id", "participant", "bots", "status", "created")
    return [
        {key: out[key] for key in keep}
        for u in P.uploads(store)
        if u.status in IN_PROGRESS
        for out in (privacy.upload(u, privacy.ANONYMOUS),)
    ]


def ranked_rows(
    rows: list[dict[str, Any]], ranked: Collection[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split standings rows into the ranked ones (reference bots, and the ``ranked`` players:
    each participant's voice, ``NAME@VERSION``) and the others (older versions, bots a
    participant does not rank, withdrawn ones), which keep their history."""
    current: list[dict[str, Any]] = []
    older: list[dict[str, Any]] = []
    for row in rows:
        player = str(row["bot"])
        (current if submitted(player) is None or player in ranked else older).append(row)
    return current, older


def ranked_players(store: Store) -> set[str]:
    """Every participant's voice, ``NAME@VERSION`` (:func:`leaderboard.participants.voices`)."""
    return {v.player for v in P.voices(store).values()}


def submitted(player: str) -> tuple[str, int] | None:
    """The bot name and version of a submitted bot's ladder player ``NAME@VERSION``; ``None``
    for a reference bot (its player is its name)."""
    name, _, version = player.rpartition("@")
    return (name, int(version)) if name and version.isdigit() else None


def withdrawn_players(store: Store) -> set[str]:
    """The ladder players (``NAME@VERSION``) whose uploads were withdrawn."""
    return {player for u in P.uploads(store, status="withdrawn") for player in u.players}


def _when(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _version(player: str) -> str:
    """What a leaderboard shows as ``player``'s version: the number of ``NAME@VERSION``, or
    ``reference`` for a bot of the arena's own."""
    found = submitted(player)
    return "reference" if found is None else str(found[1])


def leaderboard_json(store: Store, settings: LadderSettings) -> dict[str, Any]:
    """``GET /api/leaderboard``: the latest standings (ranked players, then older versions),
    each row with its version, the rating's last change and a sparkline of its history; read
    from the stored snapshots (:mod:`leaderboard.competition`), never refit here."""
    state = C.competition(store, settings.name)
    latest = C.latest_snapshot(store, settings.name)
    due = C.schedule(store, settings.name)
    base: dict[str, Any] = {
        "name": settings.name,
        "frozen": state.frozen or due.closed(),
        "closes_at": _when(due.closes_at),
        "announcement": due.announcement,
        "final": state.final,
        "final_tournament": state.final_tournament_id,
        "in_progress": in_progress(store),
    }
    if latest is None:
        return {**base, "games": 0, "updated": None, "standings": [], "older_versions": []}
    points = C.history(store, settings.name)
    players = [str(r["bot"]) for r in latest.standings]
    changes = C.last_changes(store, settings.name, players)
    rows = []
    withdrawn = withdrawn_players(store)
    names = {p.id: p.name for p in P.participants(store)}
    owner = P.owners(store)
    for row in latest.standings:
        bot = str(row["bot"])
        moved, when = changes.get(bot, (None, None))
        trail = [p.ratings[bot][0] for p in points if bot in p.ratings]
        rows.append(
            {
                **row,
                "version": _version(bot),
                "participant": names.get(owner[bot]) if bot in owner else None,
                "withdrawn": bot in withdrawn,
                "last_change": {"elo": moved, "when": _when(when)},
                "sparkline": [round(e, 1) for e in trail if e is not None],
            }
        )
    current, older = ranked_rows(rows, ranked_players(store))
    return {
        **base,
        "games": latest.games,
        "updated": _when(latest.created),
        "standings": current,
        "older_versions": older,
    }


def ranked_name(store: Store, settings: LadderSettings, name: str) -> str:
    """The ladder player ``name`` means: a submitted bot's name without ``@VERSION`` is its
    ranked (latest) version, as the latest standings have it; any other name is itself."""
    if "@" in name:
        return name
    latest = C.latest_snapshot(store, settings.name)
    for row in latest.standings if latest is not None else ():
        player = str(row.get("bot", ""))
        if player.partition("@")[0] == name and "@" in player:
            return player
    return name


def bot_json(
    store: Store, settings: LadderSettings, bot: str, viewer: privacy.Viewer
) -> dict[str, Any] | None:
    """``GET /api/bots/NAME``: one ladder player (``NAME@VERSION`` or a reference bot): its
    standing, rating history, head to head against every other, faults, its latest games and,
    for a submitted bot, its uploads, as ``viewer`` may see them (:mod:`.privacy`); ``None`` if
    it never played in the ladder."""
    entered = C.player_tournaments(store, bot, RECENT_TOURNAMENTS)
    if not entered:
        return None
    latest = C.latest_snapshot(store, settings.name)
    row = None if latest is None else latest.row(bot)
    history = [
        {"created": _when(p.created), "elo": r[0], "lo": r[1], "hi": r[2], "games": r[3]}
        for p in C.history(store, settings.name)
        if (r := p.ratings.get(bot)) is not None
    ]
    query = GameQuery(
        seated=frozenset(entrant for _, entrant in entered),
        tournaments=frozenset(tid for tid, _ in entered),
    )
    found = sorted(store.find_games(query, limit=RECENT_GAMES), key=lambda g: -g.id)
    named = submitted(bot)
    versions = [
        privacy.upload(u, viewer)
        for u in P.uploads(store)
        if named is not None and named[0] in u.bots and u.status != "failed"
    ]
    pairs = {} if latest is None else latest.pairs.get(bot, {})
    summary = None if latest is None else latest.faults.get(bot)
    owner = P.owners(store).get(bot)
    names = {p.id: p.name for p in P.participants(store)}
    return {
        "bot": bot,
        "participant": None if owner is None else names.get(owner),
        "description": description(store, bot),
        "standing": row,
        "rating_history": history,
        "head_to_head": dict(sorted(pairs.items())),
        "faults": privacy.faults(summary, P.owners(store).get(bot), viewer),
        "recent_games": [_game_line(g, bot, dict(entered)) for g in found],
        "versions": versions,
    }


def description(store: Store, bot: str) -> str | None:
    """What submitted bot ``bot`` (``NAME@VERSION``) said of itself when its upload was built
    (its registered description, as sent); ``None`` for a reference bot or one not found."""
    named = submitted(bot)
    if named is None:
        return None
    name, version = named
    for u in P.uploads(store):
        if u.version == version and name in u.bots and u.distribution:
            try:
                record = submissions.Store().find(u.distribution, version)
            except SubmissionError:
                return None
            for plugin in record.plugins.values():
                for entry in (plugin.get("listing") or {}).get("bots") or []:
                    if isinstance(entry, dict) and entry.get("name") == name:
                        return str(entry.get("description") or "") or None
    return None


def missing_bot(store: Store, bot: str) -> str:
    """Why ``bot`` has no page, in one sentence for a reader: a version that failed, one on
    its way, withdrawn before it played, or no such bot."""
    named = submitted(bot)
    for u in P.uploads(store) if named is not None else ():
        if named is not None and u.version == named[1] and named[0] in u.bots:
            if u.status == "failed":
                return (
                    f"{bot} failed its build or check (upload {u.id}): it never played. Its "
                    "participant reads why on its own page."
                )
            return f"{bot} has not played in the ladder yet: its upload {u.id} is {u.status}."
    return f"No bot {bot} has played in the ladder."


def upload_json(
    store: Store, settings: LadderSettings, upload: P.UploadInfo, viewer: privacy.Viewer
) -> dict[str, Any]:
    """An upload as ``viewer`` may see it (:mod:`.privacy`); for its own participant with its
    build and check log and, per bot, what the bot wrote to stdout and stderr in its latest
    ladder games (``output``: the latest blocks first, each ``tournament``, ``when``, ``text``)
    and its faults in the latest standings with their messages (``faults``, as
    :func:`bot_json`'s)."""
    out = privacy.upload(upload, viewer, with_log=True)
    if not viewer.sees(upload.participant_id):
        return out
    output: dict[str, list[dict[str, Any]]] = {}
    for player in upload.players:
        seats = C.player_tournaments(store, player, RECENT_TOURNAMENTS)
        output[player] = [
            {"tournament": tid, "when": _when(when), "text": text}
            for tid, _, when, text in store.bot_output(seats, OUTPUT_BLOCKS)
        ]
    latest = C.latest_snapshot(store, settings.name)
    out["output"] = output
    out["faults"] = {
        player: privacy.faults(latest.faults.get(player), upload.participant_id, viewer)
        for player in upload.players
        if latest is not None and latest.faults.get(player)
    }
    return out


def _game_line(game: GameRow, bot: str, entrants: dict[int, str]) -> dict[str, Any]:
    """A line of a bot's latest games: its seats (``bot`` under its ladder name), winners and
    ``bot``'s result."""
    mine = entrants.get(game.tournament)
    seats = [bot if seat == mine else seat for seat in game.seats]
    won = [seats[w] for w in game.winners if 0 <= w < len(seats)]
    return {
        "id": game.id,
        "seats": seats,
        "winners": won,
        "result": "win" if won == [bot] else ("shared" if bot in won else "loss"),
        "end_reason": game.end_reason,
        "created": _when(game.created),
    }


def render(template: str, **values: Any) -> str:
    """Template ``template`` of ``arena/serve/templates`` with ``values``, escaped."""
    return _environment().get_template(template).render(**values)


def leaderboard_page(store: Store, settings: LadderSettings) -> str:
    """The leaderboard as a page."""
    data = leaderboard_json(store, settings)
    return _environment().get_template("leaderboard.html").render(data=data)


def bot_page(data: dict[str, Any], settings: LadderSettings) -> str:
    """A bot's page from its :func:`bot_json`."""
    return _environment().get_template("bot.html").render(data=data, name=settings.name)


def missing_page(message: str, settings: LadderSettings) -> str:
    """A page saying in one sentence why what was asked for has no page."""
    return _environment().get_template("missing.html").render(message=message, name=settings.name)
