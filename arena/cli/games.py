"""``arena games`` (find stored games) and ``arena export`` (write a tournament's games as JSON
lines or CSV). They are added to the ``arena`` group by :mod:`arena.cli.main`."""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from arena.cli.options import db_option, json_option
from arena.errors import ArenaError

#: How many games ``arena games`` lists unless told otherwise.
DEFAULT_LIMIT = 100


def _result(seats: list[str], winners: list[int], end_reason: str) -> str:
    """A game's result in words: who won (or shared the win) and how the round ended."""
    how = end_reason.replace("_", " ") or "unfinished"
    if not winners:
        return f"no winner ({how})"
    if len(winners) == 1:
        return f"{seats[winners[0]]} won ({how})"
    return "draw: " + ", ".join(seats[s] for s in winners) + f" ({how})"


def _faults(seats: list[str], faults: list[dict[str, Any]]) -> str:
    """A game's faults in short: ``NAME KIND`` for each."""
    return ", ".join(f"{seats[f['seat']]} {f['kind']}" for f in faults) or "-"


def _entrants(store: Any, text: str, tournament_id: int | None, option: str) -> frozenset[str]:
    """The entrant names ``text`` (an entrant's name, or a registered bot's name for all its
    parameter settings) stands for; a bad parameter error when it names none."""
    from arena.botspec import BotSpec
    from arena.errors import UnknownBotError

    names = {text.strip()}
    with contextlib.suppress(UnknownBotError):  # not a bot spec: only the name as given
        names.add(str(BotSpec.parse(text)))
    found = store.entrant_names(names, tournament_id)
    if not found:
        where = "any stored tournament" if tournament_id is None else f"tournament {tournament_id}"
        raise click.BadParameter(f"no entrant {text!r} in {where}", param_hint=option)
    return frozenset(found)


def _query(
    store: Any, tournament_id: int | None, bot: str | None, versus: str | None, faulted: bool
) -> Any:
    """The :class:`~leaderboard.store.GameQuery` of ``arena games``' filters."""
    from leaderboard.store import GameQuery

    if versus is not None and bot is None:
        raise click.UsageError("--vs B needs --bot A: it lists A's games against B")
    if tournament_id is not None:
        store.status(tournament_id)  # no such tournament: one line
    seated = frozenset() if bot is None else _entrants(store, bot, tournament_id, "--bot")
    against = frozenset() if versus is None else _entrants(store, versus, tournament_id, "--vs")
    if against and seated == against:
        raise click.BadParameter(f"{versus!r} names the same entrants as --bot", param_hint="--vs")
    if against <= seated:  # --bot ismcts --vs 'ismcts[c=1]': ismcts' other settings against it
        seated -= against
    else:
        against -= seated
    return GameQuery(tournament_id, seated, against, faulted)


@click.command()
@click.option(
    "--tournament",
    "tournament_id",
    type=int,
    default=None,
    metavar="ID",
    help="Only games of stored tournament ID (a match is one too). Default: every tournament.",
)
@click.option(
    "--bot",
    metavar="A",
    default=None,
    help="Only games seating A: an entrant's name, or a bot's name for all its settings.",
)
@click.option(
    "--vs",
    "versus",
    metavar="B",
    default=None,
    help="With --bot A: only A's games against B (in either seat).",
)
@click.option("--faults", "faulted", is_flag=True, help="Only games with a fault.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="List at most N games (0: all); a note on stderr says when the list is cut.",
)
@db_option
@json_option
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (one row per game) instead of text.")
def games(
    tournament_id: int | None,
    bot: str | None,
    versus: str | None,
    faulted: bool,
    limit: int,
    db_url: str | None,
    as_json: bool,
    as_csv: bool,
) -> None:
    """List stored games with their ids (the GAME_ID of arena replay), the latest tournament
    first, each tournament's games in the order they were played: tournament, deck position,
    seat rotation, seats, result and faults. Filters combine: --bot A --vs B --faults lists
    A's games against B that had a fault. --json adds each listed tournament's settings;
    --csv gives the columns of arena export --format csv."""
    from leaderboard.store import Store

    if as_json and as_csv:
        raise click.UsageError("--json and --csv are two formats: give one")
    store = Store.open_existing(db_url)
    query = _query(store, tournament_id, bot, versus, faulted)
    total = store.count_games(query)
    rows = store.find_games(query, limit or None)
    if len(rows) < total:
        click.echo(
            f"arena: note: listing {len(rows)} of {total} games; --limit N lists more (0: all)",
            err=True,
        )
    listed = {t.id: t for t in store.tournaments() if t.id in {r.tournament for r in rows}}
    if as_csv:
        from leaderboard.exports import CSV_COLUMNS, csv_row

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow(csv_row(row, listed[row.tournament].decks_revealed))
        return
    if as_json:
        from leaderboard.settings import with_settings

        data = {
            "total": total,
            "limit": limit or None,
            "tournaments": [with_settings(t, {}) for t in sorted(listed.values(), key=_newest)],
            "games": [_game_dict(row) for row in rows],
        }
        click.echo(json.dumps(data, indent=2, default=str))
        return
    if not rows:
        click.echo("no games found")
        return
    table = [["game", "tournament", "deck", "rotation", "seats", "result", "faults"]]
    for row in rows:
        table.append(
            [
                str(row.id),
                str(row.tournament),
                "-" if row.deck is None else str(row.deck),
                str(row.rotation),
                " vs ".join(row.seats),
                _result(row.seats, row.winners, row.end_reason),
                _faults(row.seats, row.faults),
            ]
        )
    widths = [max(len(line[k]) for line in table) for k in range(len(table[0]))]
    for line in table:
        cells = [
            c.rjust(w) if k < 4 else c.ljust(w)
            for k, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        click.echo("  ".join(cells).rstrip())


def _newest(t: Any) -> int:
    return -int(t.id)


def _game_dict(row: Any) -> dict[str, Any]:
    """What ``arena games --json`` says of a listed game (never its deck's cards)."""
    return {
        "id": row.id,
        "tournament": row.tournament,
        "key": row.key,
        "deck_position": row.deck,
        "rotation": row.rotation,
        "seats": row.seats,
        "winners": row.winners,
        "end_reason": row.end_reason,
        "faults": row.faults,
        "times": row.times,
        "created": row.created.isoformat(),
    }


@click.command()
@click.argument("tournament_id", metavar="ID", type=int)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one whole record per line, as arena replay GAME_ID --json gives it (without "
    "the tournament's settings); csv: one row per game.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (replaced once complete). Default: standard output.",
)
@db_option
def export(tournament_id: int, fmt: str, out: Path | None, db_url: str | None) -> None:
    """Write every stored game of tournament ID (a match is one too), in the order they were
    played, streamed from the database. A tournament on secret decks that is not finished
    exports only what every seat saw (no deck orders, only public events), as arena replay
    shows it."""
    from leaderboard.store import Store

    store = Store.open_existing(db_url)
    detail = store.tournament(tournament_id)
    if fmt == "jsonl":
        lines = _jsonl(store, tournament_id, not detail.decks_revealed)
    else:
        lines = _csv(store, tournament_id, detail.decks_revealed)
    if out is None:
        try:
            _write(lines, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (| head): not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    part = out.with_name(out.name + ".part")
    try:
        with part.open("w", encoding="utf-8", newline="") as stream:
            count = _write(lines, stream) - (fmt == "csv")
        os.replace(part, out)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise ArenaError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    click.echo(f"wrote {count} games of tournament {tournament_id} to {out}", err=True)


def _write(lines: Iterator[str], stream: IO[str]) -> int:
    """Write ``lines`` to ``stream``; how many were written."""
    count = 0
    for line in lines:
        stream.write(line)
        count += 1
    return count


def _jsonl(store: Any, tournament_id: int, hidden: bool) -> Iterator[str]:
    """One line of JSON per game (:func:`leaderboard.exports.game_json`)."""
    from leaderboard.exports import game_json

    for game in store.iter_games(tournament_id):
        yield json.dumps(game_json(tournament_id, game, hidden), separators=(",", ":")) + "\n"


def _csv(store: Any, tournament_id: int, revealed: bool) -> Iterator[str]:
    """The CSV header, then one row per game (:func:`leaderboard.exports.csv_row`)."""
    from leaderboard.exports import CSV_COLUMNS, csv_row

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for cells in itertools.chain(
        [CSV_COLUMNS], (csv_row(row, revealed) for row in store.iter_game_rows(tournament_id))
    ):
        writer.writerow(cells)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


#: The commands this module adds to the ``arena`` group.
COMMANDS: tuple[click.Command, ...] = (games, export)
