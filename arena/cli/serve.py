"""``arena serve``: the competition server (docs/serve.md), and ``arena serve participants``,
the organizer's list of who may submit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from arena.cli.options import (
    build_limit_options,
    build_limits,
    db_option,
    executor_options,
    json_option,
)
from arena.errors import ArenaError, printable
from arena.serve.traffic import MAX_DEFAULT_CONNECTIONS, MIN_CONNECTIONS, traffic_limits


def traffic_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of :func:`arena.serve.traffic.traffic_limits`: what one client may hold
    of the server (docs/serve.md, "Hostile traffic")."""
    options = [
        click.option(
            "--max-connections",
            type=click.IntRange(MIN_CONNECTIONS, 1_000_000),
            default=None,
            help="Connections held at once. At the cap, a connection that brings a whole request "
            "drops the one that has waited longest on its client (of the peer with most such); "
            "any other is refused [default: what the open-file limit leaves room for, at most "
            f"{MAX_DEFAULT_CONNECTIONS}: 768 of 1,024 files].",
        ),
        click.option(
            "--header-timeout",
            type=click.FloatRange(0.5, 3600),
            default=10.0,
            show_default=True,
            help="Seconds a request's whole head may take to arrive, from the connection (or "
            "the request's first byte on a kept-alive connection).",
        ),
        click.option(
            "--body-timeout",
            type=click.FloatRange(0.5, 3600),
            default=10.0,
            show_default=True,
            help="Seconds a request body may lag behind --body-rate: a body must have arrived "
            "as far as it goes within this plus a second per --body-rate KiB.",
        ),
        click.option(
            "--body-rate",
            type=click.FloatRange(0.1, 1_000_000),
            default=8.0,
            show_default=True,
            help="The slowest a request body (an upload) may arrive, in KiB per second.",
        ),
        click.option(
            "--keep-alive",
            type=click.FloatRange(0.1, 3600),
            default=5.0,
            show_default=True,
            help="Seconds a connection may stay idle between an answer and the next request.",
        ),
        click.option(
            "--send-timeout",
            type=click.FloatRange(0.5, 3600),
            default=30.0,
            show_default=True,
            help="Seconds a client may go without taking any of an answer (or, while 64 KiB of "
            "it wait to be written, without taking 48 KiB) before it is cut off.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def parse_closing(text: str) -> Any:
    """``--closes-at``: an ISO 8601 date and time (``2026-12-01 17:00``, local time of this
    machine unless it names its offset, ``...+01:00`` or ``...Z``) as an aware datetime, or
    ``None`` for ``never``; a one-line :class:`click.BadParameter` otherwise."""
    import datetime as dt

    if text.strip().lower() in ("never", ""):
        return None
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is no date and time: use YYYY-MM-DD HH:MM (local time) or 'never'",
            param_hint="--closes-at",
        ) from None
    return when.astimezone() if when.tzinfo is None else when


def schedule_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--closes-at`` and ``--announce``: the competition's schedule (stored when given)."""
    command = click.option(
        "--announce",
        metavar="TEXT",
        default=None,
        help="A line the front page announces (up to 300 characters; '' for none). Stored: "
        "it stays until changed.",
    )(command)
    return click.option(
        "--closes-at",
        "closes_at",
        metavar="WHEN",
        default=None,
        help="When uploads close by themselves: YYYY-MM-DD HH:MM (this machine's local time, or "
        "with an offset such as +01:00), or 'never'. Stored: it stays until changed; the front "
        "page shows it.",
    )(command)


def store_schedule(store: Any, name: str, closes_at: str | None, announce: str | None) -> Any:
    """Store the schedule options given (a bad value is one line) and return the schedule."""
    from dataclasses import replace

    from leaderboard import competition as C

    found = C.schedule(store, name)
    if closes_at is not None:
        found = replace(found, closes_at=parse_closing(closes_at))
    if announce is not None:
        line = " ".join(announce.split())
        if len(line) > 300 or not line.isprintable():
            raise click.BadParameter("at most 300 printable characters", param_hint="--announce")
        found = replace(found, announcement=line)
    if closes_at is not None or announce is not None:
        C.set_schedule(store, name, found)
    return found


def _db(ctx: click.Context, db_url: str | None) -> Any:
    """The store of ``--db`` given to a subcommand, else to ``arena serve``."""
    from leaderboard.store import Store

    store = Store(db_url or ctx.obj["db_url"])
    store.create_schema()
    return store


@click.group(invoke_without_command=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--upload-mb",
    default=20,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Largest upload accepted, in MiB.",
)
@click.option(
    "--per-hour",
    default=10,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Uploads each participant may make per hour.",
)
@click.option(
    "--build-seconds",
    default=300.0,
    show_default=True,
    type=click.FloatRange(1.0, 3600.0),
    help="Seconds an upload's build may take in the sandbox.",
)
@build_limit_options
@click.option(
    "--builders",
    type=click.IntRange(1, 64),
    default=None,
    help="Uploads built at once (as many check at once), taken in turn between participants "
    "[default: one per core, as many as memory holds at the build memory limit].",
)
@click.option(
    "--check-rounds",
    default=50,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Rounds arena check plays per variant and player count for each uploaded bot.",
)
@click.option(
    "--name",
    default="ladder",
    show_default=True,
    help="The competition's name: its ladder is the tournament of that name.",
)
@click.option(
    "--field",
    default="random,greedy",
    show_default=True,
    help="Reference bots in the ladder from the start (comma-separated; '' for none).",
)
@click.option(
    "--ladder-decks",
    default=20,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Secret decks of the ladder: each new bot plays every other on each, in both seatings.",
)
@click.option(
    "--rated-decks",
    default=20,
    show_default=True,
    type=click.IntRange(0, 10_000),
    help="Between placements, the ladder keeps playing rounds of rated games on this many fresh "
    "secret decks (both seatings), the pair that most needs games first; 0: none.",
)
@click.option(
    "--variant",
    type=click.Choice(["classic", "huibers"]),
    default="classic",
    show_default=True,
    help="Rule set of the ladder.",
)
@schedule_options
@traffic_options
@executor_options
@db_option
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    upload_mb: int,
    per_hour: int,
    build_seconds: float,
    builders: int | None,
    check_rounds: int,
    name: str,
    field: str,
    ladder_decks: int,
    rated_decks: int,
    variant: str,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    db_url: str | None,
    closes_at: str | None,
    announce: str | None,
    **traffic_values: Any,
) -> None:
    """Run the competition server: participants upload bot packages over HTTP (arena submit
    PATH --server URL --token T, or POST /api/submissions), each is built in the sandbox,
    checked with arena check, then placed in the ladder (a tournament on secret decks against
    the field and every bot before it), its status kept in the database (docs/serve.md).
    Stopping it loses nothing: started again, it goes on where it was."""
    ctx.ensure_object(dict)
    ctx.obj["db_url"] = db_url
    ctx.obj["name"] = name
    play = [*(["--workers", str(workers)] if workers else []), "--executor", executor]
    play += ["--ray-address", ray_address] if ray_address else []
    ctx.obj["play"] = play
    ctx.obj["schedule"] = (closes_at, announce)
    if ctx.invoked_subcommand is not None:
        return
    traffic = traffic_limits(**traffic_values)  # a bad value is told before anything starts
    if closes_at is not None:
        parse_closing(closes_at)
    try:
        from arena.serve.app import create_app
        from arena.serve.server import run_server
    except ImportError as exc:
        raise ArenaError(
            f"arena serve needs the 'serve' extra (pip install 'loveletter-arena[serve]'): {exc}"
        ) from None
    from arena.botspec import split_specs
    from arena.hosting import submissions
    from arena.hosting.sandbox import choose_sandbox
    from arena.serve.ladder import LadderSettings
    from arena.serve.pipeline import Limits
    from leaderboard.store import Store

    choose_sandbox("bwrap")  # uploads are never built or played without the sandbox
    store = Store(db_url)
    store.create_schema()
    store_schedule(store, name, closes_at, announce)
    build = build_limits(build_seconds)
    limits = Limits(upload_mb * 1024 * 1024, per_hour, check_rounds, build)
    spool = submissions.root() / "uploads"
    ladder = LadderSettings(
        name, tuple(split_specs(field)), ladder_decks, variant, rated_decks, tuple(play)
    )
    click.echo(printable(f"arena serve: http://{host}:{port}/ over {store!r}"), err=True)
    app = create_app(store, spool, limits, ladder, builders=builders)
    run_server(app, host, port, traffic)


@serve.group()
def participants() -> None:
    """Who may submit to the server."""


@participants.command("add")
@click.argument("names", nargs=-1)
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A class list: a file of names, one per line ('#' starts a comment).",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print name,token lines as CSV.")
@db_option
@click.pass_context
def add(
    ctx: click.Context,
    names: tuple[str, ...],
    from_file: Path | None,
    as_csv: bool,
    db_url: str | None,
) -> None:
    """Add participants NAMES (and those of --from FILE), all or none, and print each one's
    token, once: only its hash is kept. A participant gives its token to arena submit --token
    or the forms. Several names print CSV (name,token) to hand out or mail-merge."""
    import csv
    import sys

    from leaderboard.participants import add_participants

    wanted = list(names)
    if from_file is not None:
        wanted += _names_file(from_file)
    if not wanted:
        raise click.UsageError("give participant names, or --from FILE")
    added = add_participants(_db(ctx, db_url), wanted)
    if len(added) == 1 and not as_csv and from_file is None:
        name, token = added[0]
        click.echo(printable(f"participant {name} added; token (shown only now): ") + token)
        return
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["name", "token"])
    writer.writerows(added)
    click.echo(f"{len(added)} participants added; tokens shown only now", err=True)


def _names_file(path: Path) -> list[str]:
    """The names of a class list: a line each, blank lines and ``#`` comments left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArenaError(f"--from {printable(str(path))}: cannot be read ({exc})") from None
    return [n.strip() for line in text.splitlines() if (n := line.partition("#")[0]).strip()]


@participants.command("reset-token")
@click.argument("name")
@db_option
@click.pass_context
def reset(ctx: click.Context, name: str, db_url: str | None) -> None:
    """Give participant NAME a new token (its old one stops working) and print it, once."""
    from leaderboard.participants import reset_token

    token = reset_token(_db(ctx, db_url), name)
    click.echo(printable(f"participant {name.strip()}: new token (shown only now): ") + token)


@participants.command("rename")
@click.argument("name")
@click.argument("new")
@db_option
@click.pass_context
def rename(ctx: click.Context, name: str, new: str, db_url: str | None) -> None:
    """Call participant NAME NEW (its token, uploads and games stay its own)."""
    from leaderboard.participants import rename_participant

    rename_participant(_db(ctx, db_url), name, new)
    click.echo(printable(f"participant {name.strip()} is now {new.strip()}"))


@participants.command("remove")
@click.argument("name")
@db_option
@click.pass_context
def remove(ctx: click.Context, name: str, db_url: str | None) -> None:
    """Remove participant NAME: its token stops working, its uploads are withdrawn (its bots
    leave the ladder; their games stay in the history) and its name is free again."""
    from arena.serve.roster import remove

    withdrawn = remove(_db(ctx, db_url), name)
    click.echo(printable(f"participant {name.strip()} removed; {withdrawn} uploads withdrawn"))


@participants.command("list")
@click.option("--missing", is_flag=True, help="Only those who have not submitted yet.")
@json_option
@db_option
@click.pass_context
def list_participants(ctx: click.Context, missing: bool, as_json: bool, db_url: str | None) -> None:
    """List the participants in the order they were added, each with its uploads, its latest
    upload's status, its ranked bot and that bot's rank."""
    from arena.serve.roster import roster

    rows = roster(_db(ctx, db_url), ctx.obj["name"])
    if missing:
        rows = [r for r in rows if not r["uploads"]]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(
            "no participants"
            + (" without an upload" if missing else "")
            + ("" if missing else " (arena serve participants add NAME adds one)")
        )
    for r in rows:
        status = r["latest_status"] or "not submitted yet"
        ranked = f", ranked {r['ranked']} #{r['rank'] or '-'}" if r["ranked"] else ""
        click.echo(
            printable(
                f"{r['name']} (added {r['added'][:16].replace('T', ' ')}): {r['uploads']} uploads, "
                f"{status}{ranked}"
            )
        )


@serve.command()
@schedule_options
@db_option
@click.pass_context
def schedule(
    ctx: click.Context, closes_at: str | None, announce: str | None, db_url: str | None
) -> None:
    """Set when uploads close by themselves (--closes-at) and the front page's line
    (--announce), or print them. The server reads them at once."""
    closes_at = closes_at if closes_at is not None else ctx.obj["schedule"][0]
    announce = announce if announce is not None else ctx.obj["schedule"][1]
    found = store_schedule(_db(ctx, db_url), ctx.obj["name"], closes_at, announce)
    when = (
        "never" if found.closes_at is None else f"{found.closes_at.astimezone():%Y-%m-%d %H:%M %Z}"
    )
    click.echo(printable(f"uploads close: {when}; announcement: {found.announcement or '(none)'}"))


@serve.command()
@click.option("--csv", "as_csv", is_flag=True, help="As CSV (a header line, then a row each).")
@json_option
@db_option
@click.pass_context
def results(ctx: click.Context, as_csv: bool, as_json: bool, db_url: str | None) -> None:
    """The competition's results to grade: each participant with its ranked bot, version, rank,
    Elo with its 95% interval, games and score with its interval, then those with no ranked bot
    and why (not submitted, failed...). The ladder's latest standings while it runs, the final
    round-robin's once it is finished."""
    from arena.serve.ladder import LadderSettings
    from arena.serve.results import results as found_results
    from arena.serve.results import results_csv

    found = found_results(_db(ctx, db_url), LadderSettings(ctx.obj["name"]))
    if as_csv:
        click.echo(results_csv(found), nl=False)
        return
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    click.echo(f"results from the {found['source']} standings")
    for r in found["rows"]:
        elo = "" if r["elo"] is None else f"{r['elo']:.0f}"
        band = (
            ""
            if r["elo_lo"] is None or r["elo_hi"] is None
            else (f"[{r['elo_lo']:.0f}, {r['elo_hi']:.0f}]")
        )
        score = "" if r["score"] is None else f"{100 * r['score']:.1f}%"
        who = r["participant"] or "(reference)"
        bot = "" if r["bot"] is None else f"{r['bot']}@{r['version']}"
        click.echo(
            printable(
                f"{r['rank'] or '-':>3} {who:<20} {bot:<28} {elo:>5} {band:<13} "
                f"{r['games'] or '':>5} {score:>6} {r['status']}"
            )
        )


@serve.command()
@click.option("--quiet", is_flag=True, help="Print nothing (the server runs it so).")
@json_option
@db_option
@click.pass_context
def standings(ctx: click.Context, quiet: bool, as_json: bool, db_url: str | None) -> None:
    """Fit the competition's standings over every ladder game stored, keep them for the pages
    (the server runs this whenever games arrive) and print them: ranked players, then older
    versions."""
    from arena.serve.ladder import LadderSettings
    from arena.serve.pages import leaderboard_json
    from arena.serve.standings import refresh_standings

    store = _db(ctx, db_url)
    settings = LadderSettings(ctx.obj["name"])
    refresh_standings(store, settings)
    if quiet:
        return
    data = leaderboard_json(store, settings)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(printable(f"{data['name']}: {data['games']} games"))
    for title, rows in (("", data["standings"]), ("older versions:", data["older_versions"])):
        if rows and title:
            click.echo(title)
        for row in rows:
            elo = "" if row["elo"] is None else f"{row['elo']:.0f}"
            lo, hi = row.get("elo_lo"), row.get("elo_hi")
            band = "" if lo is None or hi is None else f"[{lo:.0f}, {hi:.0f}]"
            who = row.get("participant") or ""
            line = (
                f"{row['rank'] or '-':>3} {row['bot']:<32} {who:<20} {elo:>5} {band:<13} "
                f"{row['games']}"
            )
            click.echo(printable(line))


@serve.command()
@click.option(
    "--reopen", is_flag=True, help="Take uploads again (a closing time passed is cleared)."
)
@db_option
@click.pass_context
def freeze(ctx: click.Context, reopen: bool, db_url: str | None) -> None:
    """Freeze the competition: no new uploads (those already sent are still built, checked and
    placed, and the ladder goes on); --reopen takes uploads again."""
    from dataclasses import replace

    from leaderboard import competition as C

    store = _db(ctx, db_url)
    name = ctx.obj["name"]
    state = C.competition(store, name)
    if state.final and reopen:
        raise ArenaError(f"competition {name!r} is finished (or being finished): it stays frozen")
    if reopen and C.schedule(store, name).closed():
        C.set_schedule(store, name, replace(C.schedule(store, name), closes_at=None))
    C.set_competition(store, replace(state, frozen=not reopen))
    click.echo(printable(f"competition {name!r} " + ("takes uploads" if reopen else "is frozen")))


@serve.command()
@click.option(
    "--decks",
    default=50,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Fresh secret decks of the final round-robin (both seatings of each, every pair).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the final report's HTML (default: where the server shows it, /final).",
)
@db_option
@click.pass_context
def finish(ctx: click.Context, decks: int, report_path: Path | None, db_url: str | None) -> None:
    """Finish the competition: freeze it, stop its ladder, play a final round-robin of every
    ranked player (the latest version of each bot, and the reference field) on fresh secret
    decks, and write its report, the published result (shown at /final). Interrupted, run it
    again: it resumes the final round-robin."""

    from arena.serve.finals import finish_competition

    store = _db(ctx, db_url)
    written = finish_competition(store, ctx.obj["name"], decks, ctx.obj["play"], report_path)
    click.echo(printable(f"final report: {written}"))


COMMANDS: tuple[click.Command, ...] = (serve,)
