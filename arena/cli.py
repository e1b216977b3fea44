"""The ``arena`` command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from arena.errors import ArenaError

F = TypeVar("F", bound=Callable[..., Any])


class ArenaGroup(click.Group):
    """A click group whose errors are one line on stderr with exit code 2, never a traceback."""

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
            click.echo(f"arena: error: {exc.format_message()}", err=True)
            sys.exit(2)
        except ArenaError as exc:
            click.echo(f"arena: error: {exc}", err=True)
            sys.exit(2)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else 0)
        return result


def variant_option(f: F) -> F:
    """``--variant`` (classic or huibers)."""
    from arena.game.variants import VARIANTS

    return click.option(
        "--variant",
        type=click.Choice(list(VARIANTS)),
        default="classic",
        show_default=True,
        help="Rule set.",
    )(f)


def seed_option(f: F) -> F:
    """``--seed``."""
    return click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")(f)


def json_option(f: F) -> F:
    """``--json``: machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def move_time_option(f: F) -> F:
    """``--move-time``: seconds per move."""
    return click.option(
        "--move-time",
        type=click.FloatRange(min=0.001),
        default=1.0,
        show_default=True,
        help="Time limit per move in seconds (a small grace is added).",
    )(f)


@click.group(cls=ArenaGroup)
@click.version_option(package_name="loveletter-arena", prog_name="arena")
def cli() -> None:
    """Play, measure and rank Love Letter bots."""


@cli.command()
@click.argument("bots", nargs=-1, required=True)
@variant_option
@seed_option
@click.option(
    "--deck", help="Deck order, top card first: 16 card values or names, comma-separated."
)
@click.option("--first", type=int, default=0, show_default=True, help="Seat that moves first.")
@click.option(
    "--match", "whole_match", is_flag=True, help="Play a whole match instead of one round."
)
@click.option(
    "--moves",
    help="Actions to play first, for whoever is to move, before the bots take over; "
    "separated by ';' or spaces, e.g. 'Priest->1; Guard->0:Princess'. Needs --deck.",
)
@click.option("--reveal", is_flag=True, help="Show hidden cards (deals, draws, private looks).")
@move_time_option
@json_option
def play(
    bots: tuple[str, ...],
    variant: str,
    seed: int,
    deck: str | None,
    first: int,
    whole_match: bool,
    moves: str | None,
    reveal: bool,
    move_time: float,
    as_json: bool,
) -> None:
    """Play one round (or a match) between BOTS, one per seat, and print the log.

    Each BOT is a registered bot name, optionally with parameters: NAME[param=value,...].
    """
    from arena.game import Action, Variant, parse_deck
    from arena.plugins import load_registry
    from arena.referee import InProcessHandle, Referee

    rules = Variant.get(variant)
    rules.check_players(len(bots))
    if not 0 <= first < len(bots):
        raise click.BadParameter(
            f"seat {first} is not one of the {len(bots)} seats", param_hint="--first"
        )
    cards = parse_deck(deck, rules) if deck is not None else None
    if cards is not None and whole_match:
        raise click.UsageError("--deck sets one round; it cannot be used with --match")
    opening = [Action.from_str(m) for m in (moves or "").replace(";", " ").split()]
    if opening and cards is None:
        raise click.UsageError("--moves needs --deck (the moves only make sense on a known deal)")
    registry = load_registry()
    handles = []
    for text in bots:
        spec, bot = registry.build(text)
        handles.append(InProcessHandle(bot, str(spec)))
    referee = Referee(rules, move_time=move_time)
    if whole_match:
        match = referee.play_match(handles, seed=seed)
        if as_json:
            click.echo(json.dumps(match.to_json(), indent=2))
            return
        for number, record in enumerate(match.rounds, 1):
            click.echo(f"== round {number} ==")
            if reveal:
                click.echo("deck (top first): " + " ".join(str(c) for c in record.deck))
            for line in record.log_lines(reveal):
                click.echo(line)
        names = ", ".join(
            f"seat {s} ({n}): {t}"
            for s, (n, t) in enumerate(zip(match.seats, match.tokens, strict=True))
        )
        click.echo(f"tokens: {names}")
        click.echo(f"match won by seat {match.winner} ({match.seats[match.winner]})")
        return
    record = referee.play_round(handles, deck=cards, seed=seed, first=first, opening=opening)
    if as_json:
        click.echo(json.dumps(record.to_json(), indent=2))
        return
    if reveal:
        click.echo("deck (top first): " + " ".join(str(c) for c in record.deck))
    for line in record.log_lines(reveal):
        click.echo(line)


@cli.command()
@click.option("--only", multiple=True, help="Run only this benchmark (repeatable).")
@click.option(
    "--seconds",
    type=click.FloatRange(min=0.05),
    default=2.0,
    show_default=True,
    help="Time per benchmark.",
)
@json_option
def bench(only: tuple[str, ...], seconds: float, as_json: bool) -> None:
    """Measure the project's speed figures on one core."""
    from arena.bench import BENCHMARKS, machine, run

    unknown = [k for k in only if k not in BENCHMARKS]
    if unknown:
        raise click.BadParameter(
            f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})",
            param_hint="--only",
        )
    results = run(list(only), seconds)
    if as_json:
        click.echo(json.dumps({**results, "machine": machine()}, indent=2))
        return
    info = machine()
    click.echo(
        f"machine: {info['cpu']}, {info['cores']} cores, "
        f"Python {info['python']}, numba {info['numba']}"
    )
    for key, value in results.items():
        b = BENCHMARKS[key]
        goal = f"  (goal {b.goal})" if b.goal else ""
        click.echo(f"{key:<28} {value:>14,.0f} {b.unit}{goal}")


def main() -> None:
    """Console-script entry point."""
    cli()
