"""The ``arena`` commands that use the database: tournament, tournaments, leaderboard, report,
replay. They are added to the ``arena`` group by :mod:`arena.cli.main`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli.options import (
    anchor_option,
    command_sandbox,
    db_option,
    executor_options,
    given,
    hidden_paths,
    isolation_options,
    json_option,
    move_time_option,
    parse_anchor,
    report_compile_errors,
    restart_time_option,
    secret_option,
    seed_option,
    start_compiling,
    teams_option,
    tournament_id_option,
    variant_option,
)
from arena.errors import ArenaError, printable

if TYPE_CHECKING:
    from arena.referee.records import GameRecord


@click.command()
@click.option(
    "--decks",
    "deck_spec",
    default="fixed36",
    show_default=True,
    help="Deck set: fixed36, balanced:N[:SEED], random:N[:SEED], file:PATH or a plugin's "
    "deck set. balanced:N and random:N are drawn from a secret seed for each tournament "
    "(published in its report once it is finished): use balanced:36 for ranked play.",
)
@click.option(
    "--bots",
    "bot_lists",
    multiple=True,
    metavar="LIST",
    help="Entrants, comma-separated: NAME or NAME[param=value,...] (may be repeated). "
    "Default: every installed bot that plays the variant at this table size.",
)
@variant_option
@click.option(
    "--players",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="Players per table: every pair (2) or every table of 3 or 4 entrants.",
)
@seed_option
@secret_option
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Play every deck this many times (with other bot seeds).",
)
@move_time_option
@isolation_options
@restart_time_option
@executor_options
@click.option("--name", default=None, help="A name for a new tournament.")
@click.option(
    "--gauntlet",
    metavar="BOT",
    default=None,
    help="A new tournament that plays BOT against every other entrant and no other pair "
    "(a new version against the field): only the tables that seat BOT. BOT joins the "
    "--bots entrants (default: every installed bot).",
)
@teams_option
@click.option(
    "--resume",
    "resume_id",
    type=int,
    default=None,
    metavar="ID",
    help="Finish stored tournament ID (with its own settings).",
)
@click.option(
    "--add",
    "add_lists",
    multiple=True,
    metavar="LIST",
    help="With --resume ID: add these entrants (comma-separated, as --bots) to the stored "
    "tournament and play only their games, on its decks with its settings.",
)
@anchor_option
@db_option
@click.option("--quiet", is_flag=True, help="No progress line.")
@json_option
@click.pass_context
def tournament(
    ctx: click.Context,
    deck_spec: str,
    bot_lists: tuple[str, ...],
    variant: str,
    players: int,
    seed: int,
    secret: int | None,
    repeat: int,
    move_time: float,
    sandbox: str,
    memory_mb: int,
    max_faults: int | None,
    restart_time: float | None,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    name: str | None,
    gauntlet: str | None,
    teams: str | None,
    resume_id: int | None,
    add_lists: tuple[str, ...],
    anchor: str | None,
    db_url: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Play a round-robin tournament on fixed decks and print the leaderboard.

    Every pair of entrants (or every table of --players) plays every deck in every seat
    rotation. Finished games are stored block by block: run the same command again (or use
    --resume ID) after an interruption and only the missing games are played. Ctrl-C stops
    cleanly. --resume ID --add BOT adds an entrant and plays only its games; --gauntlet BOT
    plays one entrant against the field and then prints its score against each opponent with
    its 95% interval. One runner plays a tournament at a time.
    """
    from arena.botspec import split_specs
    from arena.hosting.catalog import load_catalog
    from arena.tournament.lease import RunnerLease
    from arena.tournament.memory import budget
    from arena.tournament.progress import ProgressLine
    from arena.tournament.runner import (
        DEFAULT_MAX_FAULTS,
        FIRST_BLOCK,
        TournamentSpec,
        add_entrants,
        hold,
        plan_resume,
        plan_tournament,
        run_tournament,
        start,
        worker_setup,
    )
    from leaderboard.store import Store

    pinned = parse_anchor(anchor)
    if executor == "ray":
        from arena.tournament.ray_executor import require_ray

        require_ray()
    elif ray_address is not None:
        raise click.UsageError("--ray-address needs --executor ray")
    if resume_id is not None:
        own = {
            "deck_spec": "--decks",
            "bot_lists": "--bots",
            "variant": "--variant",
            "players": "--players",
            "seed": "--seed",
            "secret": "--secret",
            "repeat": "--repeat",
            "move_time": "--move-time",
            "max_faults": "--max-faults",
            "name": "--name",
            "gauntlet": "--gauntlet",
            **({} if add_lists else {"teams": "--teams"}),
        }
        clash = [flag for param, flag in own.items() if given(ctx, param)]
        if clash:
            raise click.UsageError(
                f"--resume ID plays a stored tournament with its own settings; {clash[0]} "
                "cannot be given with it"
            )
    elif add_lists:
        raise click.UsageError("--add needs --resume ID, the tournament to add the bots to")
    adding = tuple(spec for text in add_lists for spec in split_specs(text))
    if add_lists and not adding:
        raise click.UsageError("--add needs at least one bot")
    if executor != "ray":  # its first worker loads the engine while this process plans
        from arena.tournament.memory import protect_arena
        from arena.tournament.pool import discard_prestarted, prestart

        protect_arena()  # before any worker starts: the workers inherit it
        prestart()
        ctx.call_on_close(discard_prestarted)
    store = Store(db_url)
    lease = None
    tid: int | None = None
    held = False  # this run holds the tournament and stored what it adds
    if resume_id is not None:  # a runner already on it turns this one away before any work
        store.create_schema()
        lease = RunnerLease.take(store, resume_id)
    try:
        hide = hidden_paths(store.url, None if resume_id else deck_spec)
        box = command_sandbox(sandbox, memory_mb, hide)
        catalog = load_catalog(box)
        if resume_id is not None and adding:
            plan = add_entrants(store, resume_id, adding, catalog, teams)
        elif resume_id is not None:
            plan = plan_resume(store, resume_id, catalog)
        else:
            bots = tuple(spec for text in bot_lists for spec in split_specs(text))
            limit = DEFAULT_MAX_FAULTS if max_faults is None else (max_faults or None)
            spec = TournamentSpec(
                decks=deck_spec,
                bots=bots,
                variant=variant,
                players=players,
                seed=seed,
                secret=secret,
                repeat=repeat,
                move_time=move_time,
                max_faults=limit,
                name=name,
                gauntlet=gauntlet,
                teams=teams,
            )
            plan = plan_tournament(spec, catalog, store)
        for bot, reason in plan.left_out:
            click.echo(f"arena: note: {bot} left out: {reason}", err=True)
        for entrant in plan.entrants:
            box.check(entrant.name, entrant.distribution)
        host_memory = None
        if executor != "ray":  # a cluster's nodes plan their own
            asked = workers
            workers, host_memory = budget(workers, plan.spec.players, memory_mb)
            if asked is None:  # no more workers than first blocks: each one imports the engine
                workers = min(workers, max(1, -(-len(plan.schedule) // FIRST_BLOCK)))
        tid = start(plan, store)
        lease = hold(plan, store, tid, lease)
        held = True
        # the kernels compile while the first games are played: bots in order of first play
        first: dict[str, int] = {}
        for game in plan.schedule:
            for name in game.seats:
                first.setdefault(name, game.index)
        order = sorted(plan.entrants, key=lambda e: first.get(e.name, len(first)))
        entries = [catalog.bots[e.bot] for e in order if e.bot in catalog.bots]
        compiling = start_compiling(box, entries, plan.spec.variant)
        store.record_sandbox(tid, box.enforcement())
        setup = replace(
            worker_setup(plan, box, memory_mb, restart_time, host_memory),
            await_kernels=compiling.names,
        )
        factory, where = _executor(plan, setup, executor, ray_address, workers, sandbox, hide)
        click.echo(f"tournament {tid} ({plan.name}): {_describe(plan)}, {where}", err=True)
        progress = None
        if not quiet:
            progress = ProgressLine(
                waiting=lambda: "compiling kernels" if compiling.running else None
            )
        try:
            summary = run_tournament(plan, store, factory, progress, tournament_id=tid, lease=lease)
        finally:
            compiling.terminate()
        report_compile_errors(compiling.errors)
    except KeyboardInterrupt:
        if tid is None:
            raise
        click.echo(
            f"arena: interrupted: tournament {tid} keeps what is stored; run "
            f"{_again(tid, plan.added, held)} to play the rest",
            err=True,
        )
        sys.exit(130)
    finally:
        if lease is not None:
            lease.release()
    if progress is not None:
        progress.finish()
    stored = summary.total - summary.left
    if summary.interrupted or not summary.complete:
        click.echo(
            f"arena: interrupted: {stored} of {summary.total} games of tournament {tid} are "
            f"stored; run {_again(tid, plan.added, held)} to play the rest",
            err=True,
        )
    else:
        extra = f", {summary.skipped} skipped" if summary.skipped else ""
        click.echo(
            f"tournament {tid}: {summary.played} games played in {summary.seconds:.1f} s"
            f"{extra}; {summary.total} of {summary.total} stored",
            err=True,
        )
    if stored or not summary.interrupted:  # an interrupted run with no game has no standings
        _print_standings(store, tid, pinned, as_json, snapshot=True)
    if summary.interrupted:
        sys.exit(130)
    failed = arena_failures(summary)
    if failed is not None:
        click.echo(f"arena: {failed}", err=True)
        sys.exit(1)


def arena_failures(summary: Any) -> str | None:
    """What to say of the games of a run that could not be played for the arena's own reasons
    (:attr:`~arena.tournament.runner.RunSummary.arena_failed`): stored without a result, not
    rated, and counted against no bot; ``None`` when there were none."""
    if not summary.arena_failed:
        return None
    what = (
        "the machine ran short of memory (use fewer --workers, or a smaller --memory-mb)"
        if summary.arena_failure.startswith("shortage")
        else "the arena failed (a bug: please report it with the game's `arena replay ID`)"
    )
    return (
        f"{summary.arena_failed} of {summary.total} games could not be played for the arena's "
        f"own reasons, not any bot's: {what}; they are stored without a result and not rated. "
        f"First: {printable(summary.arena_failure)[:300]}"
    )


def _again(tournament_id: int, added: Any, held: bool) -> str:
    """How to go on with an interrupted run: the same command, or ``--resume ID`` once the
    entrants it adds are stored (the same ``--add`` again would add them twice)."""
    resume = f"arena tournament --resume {tournament_id}"
    if not added:
        return f"the same command again (or {resume})"
    return resume if held else "the same command again"


def _executor(
    plan: Any,
    setup: Any,
    kind: str,
    ray_address: str | None,
    workers: int | None,
    sandbox: str,
    hide: tuple[str, ...],
) -> tuple[Callable[[], Any], str]:
    """What makes the executor of ``plan`` (worker processes here, or Ray actors), and where
    the start line says it plays."""
    if kind == "ray":
        from arena.tournament.ray_executor import RayExecutor, plan_versions

        versions = plan_versions(plan)
        where = f"Ray at {ray_address}" if ray_address else "a local Ray instance"
        if workers:
            where += f", {workers} actors"

        def ray() -> Any:
            return RayExecutor(
                setup, ray_address, workers, sandbox_mode=sandbox, hide=hide, versions=versions
            )

        return ray, where
    from arena.tournament.pool import LocalPool, default_workers

    count = workers or default_workers()
    return lambda: LocalPool(setup, count), f"{count} workers"


def _describe(plan: Any) -> str:
    """What the start line says of ``plan``: its entrants (a gauntlet's, those it adds), its
    decks and games."""
    text = f"{len(plan.entrants)} bots ({_names([e.name for e in plan.entrants])})"
    if plan.spec.gauntlet is not None:
        text = f"gauntlet of {plan.spec.gauntlet}, {text}"
    if plan.added:
        new = {e.name for e in plan.added}
        games = sum(1 for game in plan.schedule if not new.isdisjoint(game.seats))
        text += f", adding {_names(sorted(new))} ({games} new games)"
    kind = "public" if plan.public_decks else "secret"
    return f"{text}, {len(plan.decks)} {kind} decks, {len(plan.schedule)} games"


def _names(names: list[str], width: int = 72) -> str:
    """``names`` joined by commas, cut short at about ``width`` characters (with how many
    more there are)."""
    shown: list[str] = []
    used = 0
    for k, name in enumerate(names):
        rest = len(names) - k
        if shown and used + len(name) > width and rest > 1:
            return ", ".join(shown) + f" and {rest} more"
        shown.append(name)
        used += len(name) + 2
    return ", ".join(shown)


def _standings(
    store: Any,
    tournament_id: int | None,
    anchor: tuple[str, float] | None,
    fault_messages: bool = True,
) -> Any:
    """The stored tournament (the latest one by default), its games and its standings; without
    ``fault_messages``, every fault's message left out of the games (and so of all that is
    made of them)."""
    from leaderboard.standings import compute_standings

    detail = store.tournament(tournament_id)
    games = store.stored_games(detail.id)
    if not fault_messages:
        games = [replace(g, record=g.record.with_messages_of(())) for g in games]
    try:
        standings = compute_standings(
            games,
            detail.entrants,
            anchor=anchor[0] if anchor else None,
            anchor_elo=anchor[1] if anchor else 1500.0,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--anchor") from None
    except RuntimeError as exc:  # the rating fit failed: say so on one line
        raise ArenaError(f"tournament {detail.id}: {exc}") from None
    return detail, games, standings


def _print_standings(
    store: Any,
    tournament_id: int | None,
    anchor: tuple[str, float] | None,
    as_json: bool,
    snapshot: bool = False,
) -> None:
    """Print the leaderboard (as a table or JSON rows); with ``snapshot``, store it too. A
    gauntlet's standings are followed by its bot's score against each opponent (``gauntlet``
    in the JSON)."""
    from leaderboard.gauntlet import format_gauntlet, gauntlet_json
    from leaderboard.report import format_table

    detail, games, standings = _standings(store, tournament_id, anchor)
    gauntlet = detail.configuration.get("gauntlet")
    if snapshot and games:
        store.save_ratings(detail.id, standings.to_dict(), len(games))
    if as_json:
        from leaderboard.settings import with_settings

        rows = [line.to_dict() for line in standings.standings]
        data: dict[str, Any] = {"standings": rows}
        if gauntlet is not None:
            data["gauntlet"] = gauntlet_json(standings, gauntlet)
        click.echo(json.dumps(with_settings(detail, data), indent=2))
        return
    click.echo(f"tournament {detail.id}: {detail.name} [{detail.status}], {len(games)} games")
    click.echo(format_table(standings))
    if gauntlet is not None:
        click.echo("")
        click.echo(format_gauntlet(standings, gauntlet))


@click.command()
@db_option
@json_option
def tournaments(db_url: str | None, as_json: bool) -> None:
    """List the stored tournaments: id, name, status (and who runs it now), when it was
    created, deck set, games stored of those scheduled, entrants (a gauntlet's bot, the bots
    added since it was created). --json gives all of it, every entrant included."""
    from arena.tournament.runner import scheduled_games
    from leaderboard.store import Store

    store = Store.open_existing(db_url)
    rows = store.tournaments()
    if as_json:
        click.echo(json.dumps([_listed(t, scheduled_games(t)) for t in rows], indent=2))
        return
    if not rows:
        click.echo("no tournaments stored")
        return
    for t in rows:
        config = t.configuration
        held = _held(t.runner)
        click.echo(
            f"{t.id:4d}  {t.name}  [{t.status}]  created {t.created:%Y-%m-%d %H:%M} UTC{held}"
        )
        kind = "secret" if t.secret_decks else "public"
        click.echo(
            f"      decks {config.get('decks', '?')} ({t.deck_count} {kind}), {t.variant}, "
            f"{t.players} per table, seed {t.seed}; {t.games} of {scheduled_games(t)} games"
        )
        entrants = f"{len(t.entrants)} bots: {_names(t.entrants)}"
        if config.get("gauntlet") is not None:
            entrants = f"gauntlet of {config['gauntlet']}; {entrants}"
        additions = config.get("additions") or []
        if additions:
            entrants += "; added: " + ", then ".join(_names(list(a), 40) for a in additions)
        click.echo(f"      {entrants}")


def _held(runner: Any) -> str:
    """What the listing says of the runner holding a tournament (``None``: nobody)."""
    if runner is None:
        return ""
    said = f"  run by {runner.holder} since {runner.since:%H:%M:%S} UTC"
    if runner.alive is False:
        said += " (dead: the next run takes it over at once)"
    return said


def _listed(t: Any, scheduled: int) -> dict[str, Any]:
    """What ``arena tournaments --json`` says of stored tournament ``t``."""
    from leaderboard.settings import tournament_settings

    config = t.configuration
    runner = t.runner
    return {
        "id": t.id,
        "name": t.name,
        "status": t.status,
        "runner": None
        if runner is None
        else {
            "holder": runner.holder,
            "since": runner.since.isoformat(),
            "expires": runner.expires.isoformat(),
            "alive": runner.alive,
        },
        "created": t.created.isoformat(),
        "updated": t.updated.isoformat(),
        "decks": config.get("decks"),
        "deck_count": t.deck_count,
        "secret_decks": t.secret_decks,
        "variant": t.variant,
        "players": t.players,
        "seed": t.seed,
        "repeat": config.get("repeat", 1),
        "entrants": t.entrants,
        "gauntlet": config.get("gauntlet"),
        "additions": config.get("additions") or [],
        "games": t.games,
        "scheduled": scheduled,
        "arena_version": t.arena_version,
        "settings": tournament_settings(t),
    }


class GameIdType(click.ParamType):
    """A stored game's id: a whole number from 1, refused on one line otherwise (``-1`` too,
    which click would take for an option unless the command lets it through)."""

    name = "game_id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """``value`` as a game id."""
        try:
            number = int(str(value).strip())
        except ValueError:
            number = 0
        if number < 1:
            self.fail(
                f"{value} is not a game id: game ids are whole numbers from 1 "
                "(arena games lists them)",
                param,
                ctx,
            )
        return number


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("game_id", type=GameIdType())
@click.option("--reveal", is_flag=True, help="Show hidden cards (deals, draws, private looks).")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a self-contained page that steps through the game, as every seat saw it.",
)
@db_option
@json_option
def replay(
    game_id: int, reveal: bool, html_path: Path | None, db_url: str | None, as_json: bool
) -> None:
    """Print stored game GAME_ID as `arena play` does.

    A game of a tournament on secret decks that is not finished yet shows only what every
    seat saw (its deck and hidden cards are shown once the tournament is finished).
    --html FILE writes a page instead that steps through the game move by move, with the
    table as each seat saw it (docs/replay.md).
    """
    from leaderboard.store import Store

    if html_path is not None and as_json:
        raise click.UsageError("--html writes a page and --json prints the record: choose one")
    store = Store.open_existing(db_url)
    tid, game = store.game(game_id)
    record = game.record
    detail = store.tournament(tid)
    hidden = not detail.decks_revealed
    if hidden and reveal:
        raise ArenaError(
            f"game {game_id} belongs to tournament {tid}, which plays secret decks and is not "
            f"finished: its deck and hidden cards are shown once it is (arena replay {game_id} "
            "shows what every seat saw)"
        )
    if html_path is not None:
        _write_replay_page(html_path, record, game_id, tid, hidden)
        return
    if as_json:
        from leaderboard.exports import game_json
        from leaderboard.settings import with_settings

        click.echo(json.dumps(with_settings(detail, game_json(tid, game, hidden)), indent=2))
        return
    seats = ", ".join(f"seat {s}: {n}" for s, n in enumerate(record.seats))
    click.echo(f"game {game.id} of tournament {tid} ({game.key}); {seats}")
    if reveal:
        click.echo("deck (top first): " + " ".join(str(c) for c in record.deck))
    for line in record.log_lines(reveal):
        click.echo(line)


def _write_replay_page(
    path: Path, record: GameRecord, game_id: int, tournament_id: int, hidden: bool
) -> None:
    """Write the replay page of a stored game (--html), or exit 2 with one line."""
    from leaderboard.replay_page import replay_page_html

    page = replay_page_html(record, game_id=game_id, tournament_id=tournament_id, hidden=hidden)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
    click.echo(f"wrote {path}", err=True)


@click.command()
@tournament_id_option
@anchor_option
@db_option
@json_option
def leaderboard(
    tournament_id: int | None, anchor: str | None, db_url: str | None, as_json: bool
) -> None:
    """Print the standings of a stored tournament: rank, bot, Elo with its 95% interval,
    games, wins/draws/losses, score with its 95% interval, faults.

    The ratings are one maximum-likelihood fit over every stored game (docs/ratings.md), so
    the leaderboard of an unfinished tournament covers the games played so far.
    """
    from leaderboard.store import Store

    _print_standings(Store.open_existing(db_url), tournament_id, parse_anchor(anchor), as_json)


@click.command()
@tournament_id_option
@anchor_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write one self-contained HTML report (plots included) to this file, with the "
    "replay pages of its games in FILE's name + '-games/'.",
)
@click.option(
    "--pages",
    type=click.Choice(["sample", "faults", "all", "none"]),
    default=None,
    help="Which games get a replay page next to the --html report: games with faults and a "
    "spread of each pair's games (sample, the default), games with faults, every game, or none.",
)
@click.option(
    "--fault-messages/--no-fault-messages",
    default=True,
    show_default=True,
    help="Show what each bot said in its faults (an exception's text, its last output), or "
    "only each fault's kind: for a report read by others than the bots' authors.",
)
@db_option
@json_option
def report(
    tournament_id: int | None,
    anchor: str | None,
    html_path: Path | None,
    pages: str | None,
    fault_messages: bool,
    db_url: str | None,
    as_json: bool,
) -> None:
    """Report a stored tournament: standings, head-to-head scores, likelihood of superiority,
    faults and provenance (configuration, versions, how the bots ran, entrants)
    (docs/reports.md). --json prints all of it, with how the ratings settled as games came
    in, results by seat and the cards each bot played; --html FILE writes a page of all of it
    to read and share, linked to the replay pages of its games (--pages)."""
    from leaderboard.report import analyse, report_json, report_text
    from leaderboard.store import Store

    if pages is not None and html_path is None:
        raise click.UsageError("--pages chooses the replay pages of an --html report: give --html")
    detail, games, standings = _standings(
        Store.open_existing(db_url), tournament_id, parse_anchor(anchor), fault_messages
    )
    analysis = analyse(games, standings, detail.players) if html_path or as_json else None
    if html_path is not None:
        _write_report_page(html_path, pages or "sample", detail, games, standings, analysis)
    if as_json:
        click.echo(report_json(detail, games, standings, analysis))
    elif html_path is None:
        click.echo(report_text(detail, games, standings))


def _write_report_page(
    path: Path, pages: str, detail: Any, games: Any, standings: Any, analysis: Any
) -> None:
    """Write the HTML report and its replay pages (--html, --pages), or exit with one line."""
    from leaderboard.report_html import render_html
    from leaderboard.report_pages import pages_dir, plan_pages, write_pages

    plan = plan_pages(games, pages)
    try:
        links, failed = write_pages(path, detail, plan.games if pages != "none" else ())
        path.write_text(
            render_html(detail, games, standings, analysis, plan=plan, links=links),
            encoding="utf-8",
        )
    except OSError as exc:
        where = exc.filename or path
        raise click.ClickException(f"cannot write {where}: {exc.strerror or exc}") from None
    for line in failed:
        click.echo(f"no replay page for {line}", err=True)
    if links:
        click.echo(f"wrote {path} and {len(links)} replay pages in {pages_dir(path)}", err=True)
    else:
        click.echo(f"wrote {path}", err=True)


#: The commands this module adds to the ``arena`` group.
COMMANDS: tuple[click.Command, ...] = (tournament, tournaments, leaderboard, report, replay)
