"""The ``arena`` command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
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
            message = " ".join(exc.format_message().split())  # one line, even for a Choice
            click.echo(f"arena: error: {message}", err=True)
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


#: The largest seed: seeds are stored as signed 64-bit integers and feed unsigned 64-bit
#: generators, so they are whole numbers from 0 to 2**63 - 1.
MAX_SEED = 2**63 - 1


class SeedType(click.ParamType):
    """A seed: a whole number from 0 to :data:`MAX_SEED`, refused on one line otherwise."""

    name = "seed"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """``value`` as a seed; a click error naming the allowed range for anything else."""
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip(), 10)
            except ValueError:
                self.fail(f"{value!r} is not a whole number (seeds are 0 to 2**63-1)", param, ctx)
        if not 0 <= number <= MAX_SEED:
            shown = str(number) if len(str(number)) <= 40 else f"a {len(str(number))}-digit number"
            self.fail(f"{shown} is out of range (seeds are 0 to 2**63-1 = {MAX_SEED})", param, ctx)
        return number


def seed_option(f: F) -> F:
    """``--seed``: a :class:`SeedType`."""
    return click.option(
        "--seed", type=SeedType(), default=0, show_default=True, help="Random seed (0 to 2**63-1)."
    )(f)


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


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    ctx.meta[f"arena.{param.name}"] = value
    return value


def isolation_options(f: F) -> F:
    """``--sandbox``, the limits of each bot (``--memory-mb``, ``--processes``,
    ``--scratch-mb``) and ``--max-faults``: how bot hosts run. The command passes ``sandbox``
    and ``memory_mb`` to :func:`_sandbox`, which reads the other limits itself."""
    f = click.option(
        "--max-faults",
        type=click.IntRange(min=0),
        default=None,
        help="Disqualify a bot after this many faults (its later games are forfeits); 0: "
        "never. Default: never for play and check, 10 for a tournament.",
    )(f)
    f = click.option(
        "--scratch-mb",
        type=click.IntRange(min=1),
        default=64,
        show_default=True,
        expose_value=False,
        callback=_keep,
        help="Scratch space (a private /tmp) of each sandboxed bot in MiB; it counts towards "
        "the bot's memory.",
    )(f)
    f = click.option(
        "--processes",
        type=click.IntRange(min=1),
        default=64,
        show_default=True,
        expose_value=False,
        callback=_keep,
        help="Processes and threads each sandboxed bot may have at once.",
    )(f)
    f = click.option(
        "--memory-mb",
        type=click.IntRange(min=0),
        default=2048,
        show_default=True,
        help="Memory limit of each bot in MiB: all its processes together with its scratch "
        "space where control groups can be used (docs/sandbox.md), else per process; 0 for none.",
    )(f)
    return click.option(
        "--sandbox",
        type=click.Choice(["auto", "bwrap", "none"]),
        default="auto",
        show_default=True,
        help="Run bots in the bubblewrap sandbox (auto: when it works here; without it only "
        "the arena's own bots run), or every bot unsandboxed (none).",
    )(f)


def compile_trusted(box: Any, entries: Sequence[Any], variant: str | None = None) -> None:
    """Run the trusted compile step (:mod:`arena.kernels`) for the arena's own bots among
    ``entries``, with its progress on standard error, and wait for it."""
    report_compile_errors(start_compiling(box, entries, variant).wait())


def start_compiling(box: Any, entries: Sequence[Any], variant: str | None = None) -> Any:
    """Start the trusted compile step for the arena's own bots among ``entries`` (in that order:
    the first to play first) in the background, with its progress on standard error; returns
    the :class:`~arena.kernels.Compilation`."""
    from arena.kernels import Compilation, trusted_bots

    def say(text: str) -> None:
        click.echo(f"arena: {text}", err=True)

    return Compilation(trusted_bots(entries, variant), box, say)


def report_compile_errors(failed: dict[str, str]) -> None:
    """One warning line per bot the compile step could not compile."""
    for name, why in failed.items():
        click.echo(f"arena: warning: could not compile the kernels of {name}: {why}", err=True)


def _sandbox(mode: str, memory_mb: int = 2048, hide: tuple[str, ...] = ()) -> Any:
    """The sandbox for ``mode`` with the limits of the command's options, printing its warning
    (if any) on one line; ``hide`` are paths bots must not see (checked, see
    :func:`~arena.sandbox.choose_sandbox`)."""
    from arena.sandbox import Limits, choose_sandbox

    meta = click.get_current_context().meta
    limits = Limits(
        memory_mb=memory_mb,
        processes=meta.get("arena.processes", 64),
        scratch_mb=meta.get("arena.scratch_mb", 64),
    )
    sandbox = choose_sandbox(mode, limits, hide)
    if sandbox.warning:
        click.echo(f"arena: warning: {sandbox.warning}", err=True)
    return sandbox


@click.group(cls=ArenaGroup)
@click.version_option(package_name="loveletter-arena", prog_name="arena")
def cli() -> None:
    """Play, measure and rank Love Letter bots."""


@cli.command()
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
    help="Write what each bot printed (its last 64 KiB) to DIR/seatN-NAME.log.",
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
    from arena.catalog import load_catalog
    from arena.game import Variant, parse_deck
    from arena.hosted import HostHandle
    from arena.referee import Referee
    from arena.starts import StartWatch, start_failures

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
    box = _sandbox(sandbox, memory_mb)
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
                path.write_text(handle.log.text())


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
    from arena.human import LeftTable, play_human

    options = {"deck": cards, "seed": seed, "first": first, "opening": opening}
    try:
        play_human(referee, handles, seat, whole_match, options, say=click.echo)
    except LeftTable as exc:
        click.echo()
        click.echo(f"arena: you left the table ({exc}); the game was not finished", err=True)
        sys.exit(1)


@cli.command()
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "none"]),
    default="auto",
    show_default=True,
    help="Where plugins are asked what they register (see `arena play --help`).",
)
@json_option
def bots(sandbox: str, as_json: bool) -> None:
    """List every bot installed here: its plugin, distribution, version, description and
    parameters, and every plugin error: a plugin that failed to load, or a bot name it may not
    use (a name belongs to one distribution; the arena's own bots keep theirs).

    Plugins are found through the `arena.bots` entry points and asked in their own processes,
    so a broken plugin cannot break this command or the others. The first line says how bots
    run here: the sandbox, and which limits hold and what enforces them.
    """
    from arena.catalog import load_catalog

    box = _sandbox(sandbox)
    catalog = load_catalog(box)
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
    click.echo(f"bots run in: {box.describe()}")
    for entry in sorted(catalog.bots.values(), key=lambda b: b.name):
        origin = f"{entry.distribution} {entry.version}".strip() or "unknown distribution"
        click.echo(f"{entry.name:<14} {entry.description}")
        click.echo(f"{'':<14} plugin {entry.plugin!r} from {origin}")
        if entry.params:
            click.echo(f"{'':<14} parameters: {entry.describe_params()}")
        plays = ", ".join(entry.variants) + "; " + "/".join(map(str, entry.players)) + " players"
        click.echo(f"{'':<14} plays: {plays}")
    for error in catalog.errors:
        origin = f" of {error.distribution}" if error.distribution else ""
        click.echo(f"error: plugin {error.plugin!r}{origin}: {error.error}")
    if not catalog.bots:
        click.echo("no bots installed")


@cli.command()
@click.option("--only", multiple=True, help="Run only this benchmark (repeatable).")
@click.option(
    "--seconds",
    type=click.FloatRange(min=0.05),
    default=2.0,
    show_default=True,
    help="Time per benchmark.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Workers of the field benchmarks (default: one per core).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Executor of the field benchmarks (ray: a local Ray instance, the [ray] extra).",
)
@json_option
def bench(
    only: tuple[str, ...], seconds: float, workers: int | None, executor: str, as_json: bool
) -> None:
    """Measure the project's speed figures, each on one core except the tournament and field
    benchmarks, which use every core: fields of 5 to 300 copies of the scaffolded pure-Python
    bot play fixed36 for at least a minute each (games per second with the hosts' starts, and the
    peak memory of every process together), and first_game_seconds_cold runs the README's main
    command with empty caches. Each figure is marked against its goal (met, missed, or no
    goal; --json gives the goal and the mark per figure). docs/benchmarks.md has the figures
    measured here."""
    from collections import Counter

    from arena.bench import BENCHMARKS, FIELD, machine, run
    from arena.benchgoals import judge

    FIELD.workers = workers
    FIELD.executor = executor

    unknown = [k for k in only if k not in BENCHMARKS]
    if unknown:
        raise click.BadParameter(
            f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})",
            param_hint="--only",
        )
    results = run(list(only), seconds)
    verdicts = {key: judge(BENCHMARKS[key].goal, value, results) for key, value in results.items()}
    if as_json:
        figures = {}
        for key, value in results.items():
            goal = BENCHMARKS[key].goal
            figures[key] = {
                "value": value,
                "unit": BENCHMARKS[key].unit,
                "goal": None if goal is None else goal.to_json(),
                "bound": verdicts[key].bound,
                "status": verdicts[key].status,
            }
        click.echo(json.dumps({"figures": figures, "machine": machine()}, indent=2))
        return
    info = machine()
    click.echo(
        f"machine: {info['cpu']}, {info['cores']} cores, "
        f"Python {info['python']}, numba {info['numba']}"
    )

    def shown(value: float) -> str:
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"

    for key, value in results.items():
        b, verdict = BENCHMARKS[key], verdicts[key]
        if b.goal is None:
            mark = "no goal"
        elif verdict.status == "unchecked":
            mark = f"unchecked: goal {b.goal}, and {b.goal.of} was not measured"
        elif b.goal.of is not None and verdict.bound is not None:
            mark = f"{verdict.status}: goal {b.goal} ({shown(verdict.bound)})"
        else:
            mark = f"{verdict.status}: goal {b.goal}"
        click.echo(f"{key:<40} {shown(value):>12} {b.unit:<12} {mark}")
    counts = Counter(v.status for v in verdicts.values())
    click.echo(
        f"goals: {counts['met']} met, {counts['missed']} missed"
        + (f", {counts['unchecked']} unchecked" if counts["unchecked"] else "")
        + f"; {counts['no goal']} without a goal"
    )


@cli.command()
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


@cli.command()
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


@cli.command("new-bot")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write the package (default: ./loveletter-NAME).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "none"]),
    default="auto",
    show_default=True,
    help="Where plugins are asked which names they use (see `arena play --help`).",
)
def new_bot(name: str, directory: Path | None, sandbox: str) -> None:
    """Write a ready bot package NAME: pyproject with the entry point, a bot module and a test.

    NAME must not be taken: a bot name belongs to one distribution, so a name already installed
    is refused. `pip install -e DIR` the package and the bot shows up in `arena bots` at once.
    """
    from arena.catalog import load_catalog
    from arena.scaffold import check_name, check_name_free, write_bot_package

    check_name(name)
    check_name_free(name, load_catalog(_sandbox(sandbox)))
    root = write_bot_package(name, directory)
    click.echo(f"wrote a bot package in {root}")
    click.echo(f"next: pip install -e {root} && arena check {name}")


@cli.command()
@click.argument("bot")
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Random rounds per variant and player count the bot claims.",
)
@seed_option
@move_time_option
@isolation_options
@json_option
def check(
    bot: str,
    rounds: int,
    seed: int,
    move_time: float,
    sandbox: str,
    memory_mb: int,
    max_faults: int | None,
    as_json: bool,
) -> None:
    """Conformance run for BOT before you submit it: legal answers within the time limit over
    many random rounds in every variant and player count it claims, the same play for the same
    seed, and a whole match survived. Exit code 1 if anything failed; the report says what.
    """
    from arena.catalog import load_catalog
    from arena.conformance import run_checks

    box = _sandbox(sandbox, memory_mb)
    catalog = load_catalog(box)
    spec, entry = catalog.resolve(bot)
    box.check(str(spec), entry.distribution)
    compile_trusted(box, [entry])
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
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    if not report.passed:
        sys.exit(1)


@cli.group()
def decks() -> None:
    """Deck sets: fixed36, balanced:N[:SEED], random:N[:SEED], file:PATH and plugin deck
    sets."""


@decks.command("generate")
@click.argument("name", type=click.Choice(["fixed36"]))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the decks (default: the package's arena/data/fixed36.txt).",
)
def decks_generate(name: str, out: Path | None) -> None:
    """Generate the deck set NAME from its fixed seed and write it (the same file every time)."""
    from arena.decks import default_fixed36_path, fixed36_text

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
    from arena.decks import balance, is_builtin_spec, load_deck_set

    catalog = None
    if not is_builtin_spec(spec):
        from arena.catalog import load_catalog

        catalog = load_catalog(_sandbox("auto"))
    deck_set = load_deck_set(spec, variant, catalog)
    figures = balance(deck_set)
    if as_json:
        click.echo(json.dumps({**deck_set.to_json(), "balance": figures}, indent=2))
        return
    click.echo(f"{deck_set.name} ({deck_set.variant}, public): {deck_set.description}")
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


from arena.cli_games import COMMANDS as GAMES_COMMANDS  # noqa: E402 - uses the options above
from arena.cli_match import COMMANDS as MATCH_COMMANDS  # noqa: E402 - they use the options above
from arena.cli_tournament import COMMANDS  # noqa: E402 - the commands use the options above

for _command in (*COMMANDS, *MATCH_COMMANDS, *GAMES_COMMANDS):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    cli()
