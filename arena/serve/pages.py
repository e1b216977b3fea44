"""The competition's pages and the JSON behind them: the leaderboard, a page per bot, a page per
game (the replay page of docs/replay.md). Rendered on the server with Jinja2, every string a bot
or participant chose escaped; no JavaScript but the replay page's own. The leaderboard reloads
itself every 30 s.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from arena.serve.ladder import LadderSettings, ladder_games, ladder_standings
from leaderboard import participants as P
from leaderboard.store import Store, StoredGame

#: Games a bot's page lists, newest first.
RECENT_GAMES = 30


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("arena.serve", "templates"),
        autoescape=select_autoescape(["html"]),
    )


def latest_versions(
    rows: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split standings rows into the ranked ones (reference bots, and the latest version of each
    submitted bot, ``NAME@VERSION``) and older versions, which keep their history."""
    newest: dict[str, int] = {}
    for row in rows:
        name, _, version = str(row["bot"]).rpartition("@")
        if name and version.isdigit():
            newest[name] = max(newest.get(name, 0), int(version))
    current: list[dict[str, Any]] = []
    older: list[dict[str, Any]] = []
    for row in rows:
        name, _, version = str(row["bot"]).rpartition("@")
        stale = bool(name) and version.isdigit() and int(version) < newest[name]
        (older if stale else current).append(row)
    return current, older


def leaderboard_json(store: Store, settings: LadderSettings) -> dict[str, Any]:
    """``GET /api/leaderboard``: the ladder's standings, older versions apart."""
    standings, games = ladder_standings(store, settings)
    rows = [] if standings is None else [r.to_dict() for r in standings.standings]
    current, older = latest_versions(rows)
    return {"name": settings.name, "games": games, "standings": current, "older_versions": older}


def bot_json(store: Store, settings: LadderSettings, bot: str) -> dict[str, Any] | None:
    """``GET /api/bots/NAME``: one ladder player (``NAME@VERSION`` or a reference bot): its
    standing, head to head against every other, its latest games and, for a submitted bot, its
    uploads; ``None`` if it never played in the ladder."""
    games = ladder_games(store, settings)
    mine = [g for g in games if bot in g.record.seats]
    if not mine:
        return None
    standings, _ = ladder_standings(store, settings, games)
    assert standings is not None
    row = next((r.to_dict() for r in standings.standings if r.bot == bot), None)
    pairs = standings.pairs.get(bot, {})
    name, _, _ = bot.rpartition("@")
    versions = [
        u.to_json(with_log=False)
        for u in P.uploads(store)
        if name and name in u.bots and u.status != "failed"
    ]
    return {
        "bot": bot,
        "standing": row,
        "head_to_head": {other: pair.to_dict() for other, pair in sorted(pairs.items())},
        "recent_games": [_game_line(g, bot) for g in sorted(mine, key=lambda g: -g.id)][
            :RECENT_GAMES
        ],
        "versions": versions,
    }


def _game_line(game: StoredGame, bot: str) -> dict[str, Any]:
    record = game.record
    seats = list(record.seats)
    won = [seats[w] for w in record.winners]
    return {
        "id": game.id,
        "seats": seats,
        "winners": won,
        "result": "win" if won == [bot] else ("shared" if bot in won else "loss"),
        "end_reason": record.end_reason,
        "created": game.created.isoformat(timespec="seconds"),
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
