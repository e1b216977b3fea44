"""``arena simulate`` and ``arena solve``: the reference bots' policies played inside the engine,
and the Dynamic Programming solver's table."""

from __future__ import annotations

import json

import click

from arena.cli.options import json_option, seed_option, variant_option


@click.command()
@click.argument("bots", nargs=-1, required=True)
@click.option(
    "--games",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Deals to play (rounds without --swap).",
)
@click.option(
    "--swap",
    is_flag=True,
    help="Play every deal in every seat rotation (both seatings with two bots): "
    "GAMES x players rounds.",
)
@variant_option
@seed_option
@json_option
def simulate(
    bots: tuple[str, ...], games: int, swap: bool, variant: str, seed: int, as_json: bool
) -> None:
    """Play many rounds between reference BOTS (one per seat, seat 0 first) inside the engine.

    The research tool: only the project's own bots with a numba policy, no referee, no
    processes. Reports wins by seat, draws, the first seat's win rate with a 95% binomial
    interval, and the speed. Without --swap the first bot always sits in seat 0 and moves first,
    so its wins include the first seat's advantage; with --swap every deal is played in every
    seat rotation with the same random decisions, so each bot meets every deal from every seat
    and its wins (reported per bot) are free of the seats' advantages.
    """
    from bots.simulate import simulate as run_simulation

    result = run_simulation(bots, games, variant, seed, swap=swap)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if result.swap:
        each = "both seatings" if result.seatings == 2 else f"all {result.seatings} seat rotations"
        click.echo(
            f"{result.deals:,} deals of {result.variant}, seed {seed}, each played in {each} "
            f"({result.games:,} rounds):"
        )
        for index, (name, wins) in enumerate(zip(result.bots, result.bot_wins, strict=True)):
            click.echo(f"  bot {index} {name:<25} {wins:>10,} wins ({wins / result.games:.2%})")
        by_seat = ", ".join(f"seat {s} {w:,}" for s, w in enumerate(result.wins))
        click.echo(f"  shared {result.draws:>35,}")
        click.echo(f"  wins by seat: {by_seat}")
    else:
        click.echo(
            f"{result.games:,} rounds of {result.variant}, seed {seed}, in one seating "
            f"(bot i in seat i):"
        )
        for seat, (name, wins) in enumerate(zip(result.bots, result.wins, strict=True)):
            click.echo(f"  seat {seat} {name:<24} {wins:>10,} wins ({wins / result.games:.2%})")
        click.echo(f"  shared {result.draws:>35,}")
    lo, hi = result.first_seat_ci
    click.echo(
        f"first seat wins {result.first_seat_rate:.4f} (95% CI {lo:.4f} - {hi:.4f}); "
        f"{result.rounds_per_s:,.0f} rounds/s"
    )


@click.command()
@click.option(
    "--variant",
    default="huibers",
    show_default=True,
    help="Rule set (the solver models only huibers).",
)
@click.option("--rebuild", is_flag=True, help="Build the table again instead of loading it.")
@json_option
def solve(variant: str, rebuild: bool, as_json: bool) -> None:
    """Print the Dynamic Programming solver's opening table (Huibers 2016, Table 4).

    One row per hand at the first decision of a round (n = 14 cards unseen): the chance of
    winning with best play on both sides, the card to play, the Guard's guess and the Prince's
    target (1 the opponent, 2 itself). The table is loaded from the user cache directory, or
    built (under a second) and saved there; the first line (and `source` in the JSON) says
    which.
    """
    from solver import open_table, opening_rows

    found = open_table(variant, rebuild=rebuild)
    table = found.table
    rows = opening_rows(table)
    if as_json:
        report = {
            "variant": table.variant,
            "states": table.states,
            "source": found.source,
            "path": str(found.path),
            "cached": found.cached,
            "build_seconds": table.build_seconds,
            "opening": rows,
        }
        click.echo(json.dumps(report, indent=2))
        return
    if found.source == "loaded":
        origin = f"loaded from {found.path} (built in {table.build_seconds:.2f} s when saved)"
    elif found.cached:
        origin = f"built in {table.build_seconds:.2f} s and saved to {found.path}"
    else:
        origin = f"built in {table.build_seconds:.2f} s, not saved (cannot write {found.path})"
    click.echo(f"Dynamic Programming table of {table.variant}: {table.states:,} states, {origin}")
    click.echo(f"{'n':>3} {'b1':>3} {'b2':>3} {'chance':>9} {'play':>5} {'guess':>6} {'target':>7}")
    for row in rows:
        guess = "-" if row["guess"] is None else row["guess"]
        target = "-" if row["target"] is None else row["target"]
        click.echo(
            f"{row['n']:>3} {row['b1']:>3} {row['b2']:>3} {row['chance']:>9.6f} "
            f"{row['play']:>5} {guess:>6} {target:>7}"
        )


COMMANDS: tuple[click.Command, ...] = (simulate, solve)
