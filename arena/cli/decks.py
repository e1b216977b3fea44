"""``arena decks``: show and generate deck sets."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena.cli.options import command_sandbox, json_option, variant_option
from arena.errors import printable


@click.group()
def decks() -> None:
    """Deck sets: fixed36, balanced:N[:SEED], random:N[:SEED], file:PATH and plugin deck
    sets."""


@decks.command("generate")
@click.argument("name", type=click.Choice(["fixed36"]))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the decks (default: the package's arena/decks/data/fixed36.txt).",
)
def decks_generate(name: str, out: Path | None) -> None:
    """Generate the deck set NAME from its fixed seed and write it (the same file every time)."""
    from arena.decks.sets import default_fixed36_path, fixed36_text

    path = out if out is not None else default_fixed36_path()
    text = fixed36_text()
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
    count = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    click.echo(f"wrote {count} decks to {path}")


@decks.command("show")
@click.argument("spec")
@variant_option
@json_option
def decks_show(spec: str, variant: str, as_json: bool) -> None:
    """List the decks of SPEC (fixed36, balanced:N:SEED, random:N:SEED, file:PATH or a plugin
    deck set) with the set's balance: both seats' opening chances and the set-aside card counts.

    balanced:N and random:N without a seed are drawn from a new secret seed for each
    tournament, so they have no decks to show; a finished tournament's report publishes its
    seed, and SPEC:SEED then shows its decks.
    """
    from arena.decks.sets import balance, load_deck_set
    from arena.decks.specs import is_builtin_spec

    catalog = None
    if not is_builtin_spec(spec):
        from arena.hosting.catalog import load_catalog

        catalog = load_catalog(command_sandbox("auto"))
    deck_set = load_deck_set(spec, variant, catalog)
    figures = balance(deck_set)
    if as_json:
        click.echo(json.dumps({**deck_set.to_json(), "balance": figures}, indent=2))
        return
    # a plugin's deck set describes itself: shown, never acted on
    heading = f"{deck_set.name} ({deck_set.variant}, public): {deck_set.description}"
    click.echo(printable(heading))
    for k, (deck, (f0, f1)) in enumerate(zip(deck_set.decks, figures["openings"], strict=True)):
        cards = " ".join(str(v) for v in deck)
        click.echo(f"{k:4d}  {cards}   seat0 {f0:.3f}  seat1 {f1:.3f}")
    lo, hi = figures["band"]
    click.echo(
        f"mean opening chance over all deals {figures['mean_opening']:.3f}; "
        f"band [{lo:.3f}, {hi:.3f}]; {figures['passing']}/{len(deck_set)} decks pass"
    )
    for seat in ("seat0", "seat1"):
        s = figures[seat]
        click.echo(
            f"{seat}: mean {s['mean']:.3f}  sd {s['sd']:.3f}"
            f"  min {s['min']:.3f}  max {s['max']:.3f}"
        )
    aside = ", ".join(f"{card} {n}" for card, n in figures["set_aside"].items())
    click.echo(f"set aside: {aside}")


COMMANDS: tuple[click.Command, ...] = (decks,)
