"""``arena serve``: the competition server (docs/serve.md), and ``arena serve participants``,
the organizer's list of who may submit."""

from __future__ import annotations

import click

from arena.cli.options import db_option
from arena.errors import ArenaError, printable


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
    default=5,
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
@db_option
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    upload_mb: int,
    per_hour: int,
    build_seconds: float,
    check_rounds: int,
    name: str,
    field: str,
    ladder_decks: int,
    rated_decks: int,
    variant: str,
    db_url: str | None,
) -> None:
    """Run the competition server: participants upload bot packages over HTTP (arena submit
    PATH --server URL --token T, or POST /api/submissions), each is built in the sandbox,
    checked with arena check, then placed in the ladder (a tournament on secret decks against
    the field and every bot before it), its status kept in the database (docs/serve.md).
    Stopping it loses nothing: started again, it goes on where it was."""
    ctx.ensure_object(dict)
    ctx.obj["db_url"] = db_url
    if ctx.invoked_subcommand is not None:
        return
    try:
        import uvicorn

        from arena.serve.app import create_app
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
    limits = Limits(upload_mb * 1024 * 1024, build_seconds, per_hour, check_rounds)
    spool = submissions.root() / "uploads"
    ladder = LadderSettings(name, tuple(split_specs(field)), ladder_decks, variant, rated_decks)
    click.echo(printable(f"arena serve: http://{host}:{port}/ over {store!r}"), err=True)
    app = create_app(store, spool, limits, ladder)
    uvicorn.run(app, host=host, port=port, log_level="info")


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


COMMANDS: tuple[click.Command, ...] = (serve,)
