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
    if ctx.invoked_subcommand is not None:
        return
    traffic = traffic_limits(**traffic_values)  # a bad value is told before anything starts
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
@click.argument("name")
@click.pass_context
def add(ctx: click.Context, name: str) -> None:
    """Add participant NAME and print its token, once: only its hash is kept. The participant
    gives it to arena submit --token or the upload form."""
    from leaderboard.participants import add_participant
    from leaderboard.store import Store

    token = add_participant(Store(ctx.obj["db_url"]), name)
    click.echo(printable(f"participant {name.strip()} added; token (shown only now): ") + token)


@participants.command("list")
@click.pass_context
def list_participants(ctx: click.Context) -> None:
    """List the participants, in the order they were added."""
    from leaderboard.participants import participants as stored
    from leaderboard.store import Store

    found = stored(Store(ctx.obj["db_url"]))
    if not found:
        click.echo("no participants (arena serve participants add NAME adds one)")
    for p in found:
        click.echo(printable(f"{p.name} (added {p.created:%Y-%m-%d %H:%M})"))


@serve.command()
@click.option("--quiet", is_flag=True, help="Print nothing (the server runs it so).")
@json_option
@click.pass_context
def standings(ctx: click.Context, quiet: bool, as_json: bool) -> None:
    """Fit the competition's standings over every ladder game stored, keep them for the pages
    (the server runs this whenever games arrive) and print them: ranked players, then older
    versions."""
    from arena.serve.ladder import LadderSettings
    from arena.serve.pages import leaderboard_json
    from arena.serve.standings import refresh_standings
    from leaderboard.store import Store

    store = Store(ctx.obj["db_url"])
    store.create_schema()
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
            line = f"{row['rank'] or '-':>3} {row['bot']:<32} {elo:>5} {band:<13} {row['games']}"
            click.echo(printable(line))


@serve.command()
@click.option("--reopen", is_flag=True, help="Take uploads again.")
@click.pass_context
def freeze(ctx: click.Context, reopen: bool) -> None:
    """Freeze the competition: no new uploads (those already sent are still built, checked and
    placed, and the ladder goes on); --reopen takes uploads again."""
    from dataclasses import replace

    from leaderboard import competition as C
    from leaderboard.store import Store

    store = Store(ctx.obj["db_url"])
    store.create_schema()
    name = ctx.obj["name"]
    state = C.competition(store, name)
    if state.final and reopen:
        raise ArenaError(f"competition {name!r} is finished (or being finished): it stays frozen")
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
@click.pass_context
def finish(ctx: click.Context, decks: int, report_path: Path | None) -> None:
    """Finish the competition: freeze it, stop its ladder, play a final round-robin of every
    ranked player (the latest version of each bot, and the reference field) on fresh secret
    decks, and write its report, the published result (shown at /final). Interrupted, run it
    again: it resumes the final round-robin."""

    from arena.serve.finals import finish_competition
    from leaderboard.store import Store

    store = Store(ctx.obj["db_url"])
    store.create_schema()
    written = finish_competition(store, ctx.obj["name"], decks, ctx.obj["play"], report_path)
    click.echo(printable(f"final report: {written}"))


COMMANDS: tuple[click.Command, ...] = (serve,)
