"""``arena bots``: the bots installed here, their parameters, and how bots run here."""

from __future__ import annotations

import json

import click

from arena.cli.options import command_sandbox, json_option
from arena.errors import printable


@click.command()
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "none"]),
    default="auto",
    show_default=True,
    help="Where plugins are asked what they register (see `arena play --help`).",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Ask every plugin again, even one whose answer (or failure) is remembered.",
)
@json_option
def bots(sandbox: str, refresh: bool, as_json: bool) -> None:
    """List every bot installed here: its plugin, distribution, version, description and
    parameters, and every plugin error: a plugin that failed to load, went over what a plugin
    may register, or registered a bot name it may not use (a name belongs to one distribution;
    the arena's own bots keep theirs).

    Plugins are found through the `arena.bots` entry points and asked in their own processes,
    so a broken plugin cannot break this command or the others. What a plugin answers, or its
    failure to answer in time, is remembered until its package changes (`--refresh` asks
    again). Everything a plugin says is shown with control characters made visible. The first
    line says how bots run here: the sandbox, and which limits hold and what enforces them.
    """
    from arena.hosting.catalog import load_catalog

    box = command_sandbox(sandbox)
    catalog = load_catalog(box, refresh=refresh)
    if as_json:
        data = {
            "sandbox": box.enforcement(),
            "bots": [b.to_json() for b in catalog.bots.values()],
            "errors": [
                {"plugin": e.plugin, "distribution": e.distribution, "error": e.error}
                for e in catalog.errors
            ],
        }
        click.echo(json.dumps(data, indent=2))
        return
    _say(f"bots run in: {box.describe()}")
    for entry in sorted(catalog.bots.values(), key=lambda b: b.name):
        origin = f"{entry.distribution} {entry.version}".strip() or "unknown distribution"
        _say(f"{entry.name:<14} {entry.description}")
        _say(f"{'':<14} plugin {entry.plugin!r} from {origin}")
        if entry.params:
            _say(f"{'':<14} parameters: {entry.describe_params()}")
        plays = ", ".join(entry.variants) + "; " + "/".join(map(str, entry.players)) + " players"
        _say(f"{'':<14} plays: {plays}")
    for error in catalog.errors:
        origin = f" of {error.distribution}" if error.distribution else ""
        _say(f"error: plugin {error.plugin!r}{origin}: {error.error}")
    if not catalog.bots:
        _say("no bots installed")


def _say(line: str) -> None:
    """Print one line of the listing, made :func:`~arena.errors.printable`: whatever a plugin
    registered (a description, a parameter's name or default) is shown, never acted on."""
    click.echo(printable(line))


COMMANDS: tuple[click.Command, ...] = (bots,)
