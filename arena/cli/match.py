"""``arena match A B``: two bots head to head on paired decks, with a sequential test.

A match is a stored 2-entrant tournament (:mod:`arena.tournament.match`), played in worker processes
with the sandbox and the trusted compile step as ``arena tournament`` plays them; it is added
to the ``arena`` group by :mod:`arena.cli.main`."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from arena.cli.options import (
    command_sandbox,
    compile_trusted,
    db_option,
    hidden_paths,
    isolation_options,
    json_option,
    move_time_option,
    restart_time_option,
    secret_option,
    seed_option,
    teams_option,
    variant_option,
)


@click.command()
@click.argument("bots", nargs=-1, metavar="A B")
@click.option(
    "--decks",
    "deck_spec",
    default=None,
    help="Deck set (as for arena tournament); each deck is a pair of games. Default: "
    "balanced:N, secret balanced decks, one per pair of --max-games (or --games).",
)
@click.option(
    "--sprt",
    metavar="ELO0,ELO1",
    default=None,
    help="Sequential test of H0: A is ELO0 stronger than B, against H1: ELO1 stronger "
    "(logistic Elo, on pairs of games); the match stops when it decides.",
)
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="With --sprt: the chance of accepting H1 when H0 holds.",
)
@click.option(
    "--beta",
    type=float,
    default=0.05,
    show_default=True,
    help="With --sprt: the chance of accepting H0 when H1 holds.",
)
@click.option(
    "--max-games",
    type=click.IntRange(min=2),
    default=None,
    help="With --sprt: the most games to play; the test is inconclusive if it has not "
    "decided by then. Default: 2000.",
)
@click.option(
    "--games",
    type=click.IntRange(min=1),
    default=None,
    help="Without --sprt: play this many games (rounded up to whole pairs). Default: 200.",
)
@variant_option
@seed_option
@secret_option
@move_time_option
@isolation_options
@restart_time_option
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: one per core).",
)
@click.option(
    "--resume",
    "resume_id",
    type=int,
    default=None,
    metavar="ID",
    help="Go on with stored match ID (its bots, decks and settings; the test's options as "
    "given now).",
)
@teams_option
@db_option
@click.option("--quiet", is_flag=True, help="No live line.")
@json_option
@click.pass_context
def match(
    ctx: click.Context,
    bots: tuple[str, ...],
    deck_spec: str | None,
    sprt: str | None,
    alpha: float,
    beta: float,
    max_games: int | None,
    games: int | None,
    variant: str,
    seed: int,
    secret: int | None,
    move_time: float,
    sandbox: str,
    memory_mb: int,
    max_faults: int | None,
    restart_time: float | None,
    workers: int | None,
    resume_id: int | None,
    teams: str | None,
    db_url: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Play bot A against bot B on paired decks and say which is stronger.

    Every deck is played twice, with the seats swapped: the pair of games is the unit of the
    statistics. With --sprt ELO0,ELO1 the match stops as soon as the sequential test accepts
    H0 or H1 (or at --max-games: inconclusive); without it, --games N games are played. A live
    line shows games, score, Elo with its 95% interval, LLR with its bounds and LOS; the last
    line is the verdict. The games are stored (a 2-bot tournament, see arena tournaments and
    arena replay): run the same command again, or --resume ID, after an interruption.
    """
    from arena.hosting.catalog import load_catalog
    from arena.tournament.match import (
        DEFAULT_GAMES,
        DEFAULT_MAX_GAMES,
        MatchError,
        pairs_for,
        parse_sprt,
    )
    from arena.tournament.runner import (
        DEFAULT_MAX_FAULTS,
        TournamentSpec,
        plan_resume,
        plan_tournament,
    )
    from leaderboard.store import Store

    if sprt is not None and games is not None:
        raise click.UsageError("--games fixes the number of games: it cannot go with --sprt")
    if sprt is None and max_games is not None:
        raise click.UsageError("--max-games bounds a sequential test: it needs --sprt")
    if resume_id is None and len(bots) != 2:
        raise click.UsageError(f"a match needs two bots, A and B; got {len(bots)}")
    if resume_id is not None and (
        bots or deck_spec is not None or secret is not None or teams is not None
    ):
        raise click.UsageError(
            "--resume ID plays the stored match's bots, decks, secret and teams: give none"
        )
    hypotheses = parse_sprt(sprt) if sprt is not None else None
    most = (max_games or DEFAULT_MAX_GAMES) if hypotheses else (games or DEFAULT_GAMES)
    if resume_id is None and len(set(bots)) == 1:
        raise MatchError(f"bot {bots[0]!r} cannot play a match against itself: give two bots")
    store = Store(db_url)
    hide = hidden_paths(store.url, deck_spec)
    box = command_sandbox(sandbox, memory_mb, hide)
    catalog = load_catalog(box)
    if resume_id is not None:
        store.create_schema()
        plan = plan_resume(store, resume_id, catalog)
        if len(plan.entrants) != 2 or plan.spec.players != 2 or plan.spec.repeat != 1:
            raise MatchError(f"tournament {resume_id} is not a match of two bots")
    else:
        decks = deck_spec if deck_spec is not None else f"balanced:{pairs_for(most)}"
        limit = DEFAULT_MAX_FAULTS if max_faults is None else (max_faults or None)
        spec = TournamentSpec(
            decks=decks,
            bots=bots,
            variant=variant,
            players=2,
            seed=seed,
            secret=secret,
            move_time=move_time,
            max_faults=limit,
            name=f"match {bots[0]} vs {bots[1]}",
            teams=teams,
        )
        plan = plan_tournament(spec, catalog, store)
    _play(ctx, plan, store, box, catalog, hypotheses, alpha, beta, most, workers, quiet, as_json)


def _play(
    ctx: click.Context,
    plan: Any,
    store: Any,
    box: Any,
    catalog: Any,
    hypotheses: tuple[float, float] | None,
    alpha: float,
    beta: float,
    most: int,
    workers: int | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Play what the match of ``plan`` still needs and print its verdict."""
    from arena.tournament.match import MATCH_BLOCK, MatchProgress, MatchTally, match_test, pairs_for
    from arena.tournament.memory import budget
    from arena.tournament.pool import LocalPool
    from arena.tournament.runner import run_tournament, start, worker_setup

    pairs = min(pairs_for(most), len(plan.decks))
    if pairs < pairs_for(most):
        click.echo(
            f"arena: note: {len(plan.decks)} decks: the match plays {2 * pairs} games at most",
            err=True,
        )
    a, b = (e.name for e in plan.entrants)
    tally = MatchTally(a, b, match_test(hypotheses, alpha, beta, pairs), pairs)
    for entrant in plan.entrants:
        box.check(entrant.name, entrant.distribution)
    memory_mb = ctx.params["memory_mb"]
    count, host_memory = budget(workers, plan.spec.players, memory_mb)
    tid = start(plan, store)
    tally.load(store.stored_games(tid))
    interrupted = False
    if not tally.done:
        entries = [catalog.bots[e.bot] for e in plan.entrants if e.bot in catalog.bots]
        compile_trusted(box, entries, plan.spec.variant)
        store.record_sandbox(tid, box.enforcement())
        setup = worker_setup(plan, box, memory_mb, ctx.params["restart_time"], host_memory)
        kind = "public" if plan.public_decks else "secret"
        click.echo(
            f"match {tid}: {a} vs {b}, {len(plan.decks)} {kind} decks, at most {2 * pairs} "
            f"games, {count} workers",
            err=True,
        )
        progress = None if quiet else MatchProgress(tally)
        summary = run_tournament(
            plan,
            store,
            lambda: LocalPool(setup, count),
            progress,
            tournament_id=tid,
            block_size=MATCH_BLOCK,
            stop=tally.add,
        )
        if progress is not None:
            progress.update(summary.total, summary.total, summary.faults)
            progress.finish()
        interrupted = summary.interrupted
    if interrupted:
        click.echo(
            f"arena: interrupted: {tally.games} games of match {tid} counted; run the same "
            f"command again (or arena match --resume {tid}) to go on",
            err=True,
        )
        sys.exit(130)
    if as_json:
        from leaderboard.settings import with_settings

        test = {
            "a": a,
            "b": b,
            "sprt": list(hypotheses) if hypotheses else None,
            "alpha": alpha if hypotheses else None,
            "beta": beta if hypotheses else None,
            "max_games": 2 * pairs,
        }
        data = with_settings(store.tournament(tid), tally.to_dict(), extra=test)
        click.echo(json.dumps(data, default=str))
        return
    click.echo(f"match {tid}: {tally.verdict_line()}")
    for line in tally.detail_lines():
        click.echo(line)


COMMANDS: tuple[click.Command, ...] = (match,)
