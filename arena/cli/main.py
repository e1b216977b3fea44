"""The ``arena`` command: one click group whose errors are one line, with every command module's
commands added to it (each module of :mod:`arena.cli` owns one command or command group)."""

from __future__ import annotations

import sys
from typing import Any

import click

from arena.errors import ArenaError, printable


class ArenaGroup(click.Group):
    """A click group whose errors are one line on stderr with exit code 2, never a traceback;
    the line is :func:`~arena.errors.printable` (an error may quote what a plugin or bot said)."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            click.echo("arena: interrupted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            message = " ".join(exc.format_message().split())  # one line, even for a Choice
            click.echo(f"arena: error: {printable(message)}", err=True)
            sys.exit(2)
        except ArenaError as exc:  # its message may quote a bot or a plugin: made printable
            click.echo(f"arena: error: {printable(str(exc))}", err=True)
            sys.exit(2)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else 0)
        return result


@click.group(cls=ArenaGroup)
@click.version_option(package_name="loveletter-arena", prog_name="arena")
def cli() -> None:
    """Play, measure and rank Love Letter bots."""


def _add_commands() -> None:
    from arena.cli import (
        bench,
        bots,
        decks,
        games,
        kit,
        match,
        play,
        research,
        serve,
        submit,
        tournament,
    )

    modules = (play, bots, bench, research, kit, decks, tournament, match, games, submit, serve)
    for module in modules:
        for command in module.COMMANDS:
            cli.add_command(command)


_add_commands()


def main() -> None:
    """Console-script entry point."""
    cli()
