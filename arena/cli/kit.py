"""The bot author's commands: ``arena new-bot`` writes a package, ``arena check`` runs the
conformance checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from arena.cli.options import (
    command_sandbox,
    compile_trusted,
    isolation_options,
    json_option,
    move_time_option,
    seed_option,
)


@click.command("new-bot")
@click.argument("names", nargs=-1, required=True)
@click.option(
    "--package",
    default=None,
    help="The package's own name (its distribution and plugin); needed for several bots "
    "(default for one bot NAME: loveletter-NAME).",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write the package (default: ./PACKAGE).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "none"]),
    default="auto",
    show_default=True,
    help="Where plugins are asked which names they use (see `arena play --help`).",
)
def new_bot(
    names: tuple[str, ...], package: str | None, directory: Path | None, sandbox: str
) -> None:
    """Write a ready package of the bots NAMES: pyproject with the entry point, a module per
    bot, and tests that play every bot the package registers.

    One bot NAME makes the package loveletter-NAME; several need --package. A bot name belongs
    to one distribution, so a name already installed is refused. `pip install -e DIR` the
    package and its bots show up in `arena bots` at once.
    """
    from arena.hosting.catalog import load_catalog
    from arena.kit.scaffold import (
        Layout,
        check_distribution_free,
        check_name_free,
        write_bot_package,
    )

    layout = Layout.of(names, package)
    check_distribution_free(layout.distribution)
    catalog = load_catalog(command_sandbox(sandbox))
    for name in layout.bots:
        check_name_free(name, catalog)
    root = write_bot_package(layout, directory)
    what = "a bot package" if len(names) == 1 else f"a package of {len(names)} bots"
    click.echo(f"wrote {what} in {root}")
    click.echo(f"next: pip install -e {root} && arena check {' '.join(layout.bots)}")


@click.command()
@click.argument("bots", nargs=-1, required=True)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Random rounds per variant and player count each bot claims.",
)
@seed_option
@move_time_option
@isolation_options
@json_option
def check(
    bots: tuple[str, ...],
    rounds: int,
    seed: int,
    move_time: float,
    sandbox: str,
    memory_mb: int,
    max_faults: int | None,
    as_json: bool,
) -> None:
    """Conformance run for each of BOTS before you submit them: legal answers within the time
    limit over many random rounds in every variant and player count a bot claims, the same play
    for the same seed, and a whole match survived. Exit code 1 if anything failed for any bot;
    the reports say what (with --json: one report, or a list of them for several bots).
    """
    from arena.hosting.catalog import load_catalog
    from arena.kit.conformance import run_checks

    box = command_sandbox(sandbox, memory_mb)
    catalog = load_catalog(box)
    entries = []
    for bot in dict.fromkeys(bots):  # every name is checked before anything is played
        spec, entry = catalog.resolve(bot)
        box.check(str(spec), entry.distribution)
        entries.append((bot, entry))
    compile_trusted(box, list(dict((e.name, e) for _, e in entries).values()))
    reports = []
    for number, (bot, _) in enumerate(entries):
        report = run_checks(
            bot,
            catalog,
            box,
            rounds=rounds,
            seed=seed,
            move_time=move_time,
            memory_mb=memory_mb,
            progress=None if as_json else lambda text: click.echo(text, err=True),
        )
        reports.append(report)
        if not as_json:
            if number:
                click.echo()
            for line in report.lines():
                click.echo(line)
    failed = [report.bot for report in reports if not report.passed]
    if as_json:
        found = [report.to_json() for report in reports]
        click.echo(json.dumps(found[0] if len(found) == 1 else found, indent=2))
    elif len(reports) > 1:
        click.echo()
        verdict = f"{len(failed)} failed: {', '.join(failed)}" if failed else "all passed"
        click.echo(f"{len(reports)} bots checked: {verdict}")
    if failed:
        sys.exit(1)


COMMANDS: tuple[click.Command, ...] = (new_bot, check)
