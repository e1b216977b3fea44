"""Options and helpers shared by the ``arena`` commands: the variant, seeds, ``--json``, the move
time, the isolation options with the sandbox they choose, the trusted compile step's progress and
the database options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from arena.errors import printable

F = TypeVar("F", bound=Callable[..., Any])


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


#: The largest secret ``--secret`` takes: the size of a secret the arena draws.
MAX_SECRET = 2**128 - 1


class SecretType(click.ParamType):
    """A tournament's secret seed: a whole number from 0 to :data:`MAX_SECRET`, refused on one
    line otherwise."""

    name = "secret"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """``value`` as a secret; a click error naming the allowed range for anything else."""
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            digits = text.isdigit() and text.isascii() and len(text) <= len(str(MAX_SECRET))
            number = int(text, 10) if digits else -1
        if not 0 <= number <= MAX_SECRET:
            self.fail("the secret is a whole number from 0 to 2**128-1", param, ctx)
        return number


def secret_option(f: F) -> F:
    """``--secret``: a :class:`SecretType`, or ``None`` (draw one)."""
    return click.option(
        "--secret",
        type=SecretType(),
        default=None,
        help="The tournament's secret seed, instead of one drawn for it (and published once "
        "it is finished): every bot's seed, and a balanced:N or random:N deck set, derive "
        "from it. To replay a published tournament, or for research runs: whoever knows it "
        "knows every bot's seed.",
    )(f)


def teams_option(f: F) -> F:
    """``--teams``: where the entrants' teams come from, or ``None`` (no teams)."""
    return click.option(
        "--teams",
        metavar="SOURCE",
        default=None,
        help="Who owns which bot, so that no table seats two bots of one team (no bot can "
        "feed a teammate): 'packages' (a distribution's bots are one team), 'owners' (the "
        "participants that submitted them to arena serve, in --db) or a teams file of lines "
        "'TEAM: bot, bot' (docs/tournaments.md, Teams). Without it the report says that "
        "bots of one owner may have played each other.",
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


#: The limits of a sandboxed build besides its time, as options: (option, the field of
#: :class:`arena.hosting.build.BuildLimits`, its default, the least, help). The defaults are
#: ``BuildLimits``' (a test holds them equal; the module is not imported here, so that every
#: command starts fast).
BUILD_LIMITS = (
    ("--build-memory-mb", "memory_mb", 1024, 64, "Memory of all the build's processes together "
     "with its /tmp (its scratch space), MiB (per process, as address space, where control "
     "groups cannot be used)."),
    ("--build-processes", "processes", 256, 1, "Processes and threads the build may have at "
     "once."),
    ("--output-mb", "output_mb", 256, 1, "MiB the build's output (the snapshot kept) may hold."),
    ("--output-files", "output_files", 20_000, 1, "Files and directories the build's output "
     "may hold."),
    ("--log-mb", "log_mb", 64, 1, "MiB the build may write to its log (its last MiB is kept) "
     "before it is stopped."),
)  # fmt: skip


def build_limit_options(f: F) -> F:
    """:data:`BUILD_LIMITS` as options (``arena submit``, ``arena serve``); :func:`build_limits`
    reads them."""
    for option, name, default, least, text in reversed(BUILD_LIMITS):
        f = click.option(
            option,
            name,
            type=click.IntRange(min=least),
            default=default,
            show_default=True,
            expose_value=False,
            callback=_keep,
            help=text,
        )(f)
    return f


def build_limits(seconds: float) -> Any:
    """The :class:`~arena.hosting.build.BuildLimits` of ``seconds`` and the command's
    :func:`build_limit_options`."""
    from arena.hosting.build import BuildLimits

    meta = click.get_current_context().meta
    return BuildLimits(
        time=seconds, **{name: meta[f"arena.{name}"] for _, name, *_ in BUILD_LIMITS}
    )


def restart_time_option(f: F) -> F:
    """``--restart-time``: how long a tournament's games wait for a bot's restart after its
    fault (:mod:`arena.tournament.start_budget`; ``None``: its default)."""
    return click.option(
        "--restart-time",
        type=click.FloatRange(min=0, min_open=True, max=86400),
        default=None,
        metavar="SECONDS",
        help="After a bot's fault its host restarts in the background while other games are "
        "played; its games wait for the restart at most this long after the fault, and each "
        "game it is due in while still starting is a timeout fault (its first start has "
        "120 s). Default: 10.",
    )(f)


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
    """Run the trusted compile step (:mod:`arena.hosting.kernels`) for the arena's own bots among
    ``entries``, with its progress on standard error, and wait for it."""
    report_compile_errors(start_compiling(box, entries, variant).wait())


def start_compiling(box: Any, entries: Sequence[Any], variant: str | None = None) -> Any:
    """Start the trusted compile step for the arena's own bots among ``entries`` (in that order:
    the first to play first) in the background, with its progress on standard error; returns
    the :class:`~arena.hosting.kernels.Compilation`."""
    from arena.hosting.kernels import Compilation, trusted_bots

    def say(text: str) -> None:
        click.echo(f"arena: {text}", err=True)

    return Compilation(trusted_bots(entries, variant), box, say)


def report_compile_errors(failed: dict[str, str]) -> None:
    """One warning line per bot the compile step could not compile."""
    for name, why in failed.items():
        click.echo(f"arena: warning: could not compile the kernels of {name}: {why}", err=True)


def command_sandbox(mode: str, memory_mb: int = 2048, hide: tuple[str, ...] = ()) -> Any:
    """The sandbox for ``mode`` with the limits of the command's options; ``hide`` are paths bots
    must not see (checked, see :func:`~arena.hosting.sandbox.choose_sandbox`).

    Where ``auto`` found no working bubblewrap, one warning line says so, naming what is lost,
    only if bots that are not the arena's own are installed: they cannot play (see
    :meth:`~arena.hosting.sandbox.Sandbox.refusal`). Whoever has only the arena's own bots loses
    nothing and is told nothing; ``arena bots`` says how bots run either way."""
    from arena.hosting.plugins import plugin_entry_points
    from arena.hosting.sandbox import Limits, choose_sandbox

    meta = click.get_current_context().meta
    limits = Limits(
        memory_mb=memory_mb,
        processes=meta.get("arena.processes", 64),
        scratch_mb=meta.get("arena.scratch_mb", 64),
    )
    sandbox = choose_sandbox(mode, limits, hide)
    if sandbox.fallback:
        refusal = sandbox.refusal(p.distribution for p in plugin_entry_points())
        if refusal:  # distribution names come from packages: shown as data
            click.echo(f"arena: warning: {printable(refusal)}", err=True)
    return sandbox


def executor_options(f: F) -> F:
    """``--workers``, ``--executor``, ``--ray-address``: where a tournament's blocks of games are
    played."""
    f = click.option(
        "--ray-address",
        metavar="ADDRESS",
        default=None,
        help="With --executor ray: the cluster to join (auto: the one this machine is part of, "
        "or HOST:PORT of its head). Default: start a Ray instance on this machine.",
    )(f)
    f = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where blocks of games are played: worker processes here, or Ray actors on a Ray "
        "cluster (docs/cluster.md; needs pip install 'loveletter-arena[ray]').",
    )(f)
    return click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        help="Worker processes (default: one per core, no more than a tournament's first "
        "blocks of games need); with --executor ray, Ray actors "
        "(default: one per CPU of the cluster).",
    )(f)


def db_option(f: F) -> F:
    """``--db``: the database URL."""
    return click.option(
        "--db",
        "db_url",
        metavar="URL",
        default=None,
        help="Database (any SQLAlchemy URL). Default: $ARENA_DB, else sqlite:///arena.db in "
        "the working directory.",
    )(f)


def anchor_option(f: F) -> F:
    """``--anchor BOT=RATING``."""
    return click.option(
        "--anchor",
        metavar="BOT=RATING",
        default=None,
        help="Pin BOT's Elo at RATING (default: the mean Elo is 1500).",
    )(f)


def tournament_id_option(f: F) -> F:
    """``--tournament ID``."""
    return click.option(
        "--tournament",
        "tournament_id",
        type=int,
        default=None,
        metavar="ID",
        help="Which stored tournament (default: the latest).",
    )(f)


def parse_anchor(text: str | None) -> tuple[str, float] | None:
    """``--anchor``'s ``BOT=RATING`` as ``(bot, rating)`` (``None`` when not given)."""
    if text is None:
        return None
    name, sep, value = text.rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = float("nan")
    if not sep or not name.strip() or rating != rating:
        raise click.BadParameter(f"expected BOT=RATING, got {text!r}", param_hint="--anchor")
    return name.strip(), rating


def hidden_paths(db_url: str, deck_spec: str | None) -> tuple[str, ...]:
    """What bots must not see: the SQLite database's directory and a deck file."""
    from sqlalchemy.engine import make_url

    hide: list[str] = []
    try:
        url = make_url(db_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            hide.append(str(Path(url.database).resolve().parent))
    except Exception:
        pass
    if deck_spec and deck_spec.startswith("file:"):
        hide.append(str(Path(deck_spec[len("file:") :]).resolve().parent))
    return tuple(hide)


def given(ctx: click.Context, name: str) -> bool:
    """Whether the option ``name`` of the running command was given (not left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source != click.core.ParameterSource.DEFAULT
