"""``arena play``: one round or match between bots, or a person against bots, with its log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from arena.cli.options import (
    command_sandbox,
    compile_trusted,
    isolation_options,
    json_option,
    move_time_option,
    seed_option,
    variant_option,
)


@click.command()
@click.argument("bots", nargs=-1)
@click.option(
    "--human",
    is_flag=True,
    help="Take a seat yourself (--seat) against BOTS (default: random), choosing your moves "
    "on this terminal.",
)
@click.option(
    "--seat",
    "human_seat",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Your seat with --human; BOTS take the other seats in order.",
)
@variant_option
@seed_option
@click.option(
    "--deck", help="Deck order, top card first: 16 card values or names, comma-separated."
)
@click.option(
    "--first",
    type=int,
    default=0,
    show_default=True,
    help="Seat that moves first (with --match: in the first round).",
)
@click.option(
    "--match", "whole_match", is_flag=True, help="Play a whole match instead of one round."
)
@click.option(
    "--moves",
    help="Actions to play first, for whoever is to move, before the bots take over; "
    "separated by ';' or spaces, e.g. 'Priest->1; Guard->0:Princess'. Needs --deck.",
)
@click.option("--reveal", is_flag=True, help="Show hidden cards (deals, draws, private looks).")
@click.option(
    "--bot-logs",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write what each bot printed (its last 64 KiB) to DIR/seatN-NAME.log, with control "
    "characters made visible (line breaks and tabs kept).",
)
@move_time_option
@isolation_options
@json_option
def play(
    bots: tuple[str, ...],
    human: bool,
    human_seat: int,
    variant: str,
    seed: int,
    deck: str | None,
    first: int,
    whole_match: bool,
    moves: str | None,
    reveal: bool,
    bot_logs: Path | None,
    move_time: float,
    sandbox: str,
    memory_mb: int,
    max_faults: int | None,
    as_json: bool,
) -> None:
    """Play one round (or a match) between BOTS, one per seat, and print the log.

    Each BOT is a registered bot name, optionally with parameters: NAME[param=value,...]. Every
    bot runs in its own (sandboxed) process; see `arena bots` for what is installed. A bot
    that cannot start (its host dies, or goes over --memory-mb) forfeits, is recorded as its
    fault, and is named on standard error; the exit code is then 1. With
    --human you take a seat and play against BOTS: you see what a bot in your seat would see
    (docs/playing.md).
    """
    from arena.errors import printable
    from arena.game import Game, Variant, parse_deck
    from arena.hosting.catalog import load_catalog
    from arena.hosting.hosted import HostHandle
    from arena.hosting.starts import StartWatch, launch_together, start_failures
    from arena.referee.play import Referee

    if human:
        _check_human(reveal, as_json)
        bots = bots or ("random",)
    elif not bots:
        raise click.UsageError("Missing argument 'BOTS...' (or --human to play yourself).")
    players = len(bots) + human
    rules = Variant.get(variant)
    rules.check_players(players)
    if not 0 <= first < players:
        raise click.BadParameter(
            f"seat {first} is not one of the {players} seats", param_hint="--first"
        )
    if human and human_seat >= players:
        raise click.BadParameter(
            f"seat {human_seat} is not one of the {players} seats", param_hint="--seat"
        )
    cards = parse_deck(deck, rules) if deck is not None else None
    if cards is not None and whole_match:
        raise click.UsageError("--deck sets one round; it cannot be used with --match")
    opening = _opening_moves(moves, players)
    if opening and cards is None:
        raise click.UsageError("--moves needs --deck (the moves only make sense on a known deal)")
    box = command_sandbox(sandbox, memory_mb)
    catalog = load_catalog(box)
    specs = [catalog.resolve(text) for text in bots]
    for spec, entry in specs:
        box.check(str(spec), entry.distribution)
    compile_trusted(box, [entry for _, entry in specs], rules.name)
    handles = [
        HostHandle(str(spec), entry.plugin_ref, sandbox=box, memory_mb=memory_mb)
        for spec, entry in specs
    ]
    referee = Referee(rules, move_time=move_time, max_faults=max_faults or None)
    try:
        # the engine loads its compiled kernels while the hosts start
        launch_together(handles, lambda: Game(players, rules, deck=cards, seed=seed))
        if human:
            _play_human(referee, handles, human_seat, cards, seed, first, opening, whole_match)
            return
        watched = [StartWatch(handle) for handle in handles]
        _play(referee, watched, cards, seed, first, opening, whole_match, reveal, as_json)
        failed = start_failures(watched)
        for line in failed:
            click.echo(f"arena: {line}", err=True)
        if failed:
            sys.exit(1)
    finally:
        for handle in handles:
            handle.close()
        if bot_logs is not None:
            bot_logs.mkdir(parents=True, exist_ok=True)
            for seat, handle in enumerate(handles):
                path = bot_logs / f"seat{seat}-{handle.name}.log"
                # lines and tabs kept; any other control character shown, for whoever cats it
                path.write_text(printable(handle.log.text(), keep="\n\t"))


def _play(
    referee: Any,
    handles: list[Any],
    cards: Any,
    seed: int,
    first: int,
    opening: list[Any],
    whole_match: bool,
    reveal: bool,
    as_json: bool,
) -> None:
    if whole_match:
        match = referee.play_match(handles, seed=seed, first=first)
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


def _opening_moves(moves: str | None, players: int) -> list[Any]:
    """The actions of ``--moves`` (separated by ``;`` or spaces); a target that is not one of
    the round's ``players`` seats is refused naming them."""
    import re

    from arena.game import Action

    opening = []
    for text in (moves or "").replace(";", " ").split():
        target = re.search(r"->\s*(-?\d+)", text)
        if target is not None and not 0 <= int(target.group(1)) < players:
            raise click.BadParameter(
                f"{text} targets seat {target.group(1)}, but the round has {players} seats "
                f"(0 to {players - 1})",
                param_hint="--moves",
            )
        opening.append(Action.from_str(text))
    return opening


def _check_human(reveal: bool, as_json: bool) -> None:
    """Refuse what cannot go with --human."""
    if reveal:
        raise click.UsageError("--reveal would show you the hidden cards; not with --human")
    if as_json:
        raise click.UsageError("--json is for machines; not with --human")


def _play_human(
    referee: Any,
    handles: list[Any],
    seat: int,
    cards: Any,
    seed: int,
    first: int,
    opening: list[Any],
    whole_match: bool,
) -> None:
    from arena.hosting.human import LeftTable, play_human

    options = {"deck": cards, "seed": seed, "first": first, "opening": opening}
    try:
        play_human(referee, handles, seat, whole_match, options, say=click.echo)
    except LeftTable as exc:
        click.echo()
        click.echo(f"arena: you left the table ({exc}); the game was not finished", err=True)
        sys.exit(1)


COMMANDS: tuple[click.Command, ...] = (play,)
