"""Tournaments: choose the entrants and decks, then play the schedule in blocks and store it.

:func:`plan_tournament` turns a :class:`TournamentSpec` and the installed bots into a
:class:`Plan` (entrants with their versions, decks, schedule); :func:`plan_resume` rebuilds the
plan of a stored tournament. :func:`run_tournament` plays whatever of a plan is not stored yet
through an executor (by default a :class:`~arena.tournament.pool.LocalPool`), storing each finished
block in one transaction from this process alone, so a run stopped at any moment (Ctrl-C or kill -9)
and started again ends with the records of an uninterrupted run. See ``docs/tournaments.md``.

Every tournament has a secret seed (``docs/tournaments.md``): drawn for it when it is created
(or given, ``TournamentSpec.secret``, to reproduce a run), kept in the database and published
once the tournament is finished. Every game's seed, so every seed a bot is given, derives from
it and the game's key; so do the decks of a secret deck set (``balanced:N``, ``random:N``,
``docs/decks.md``). The same settings resume the stored tournament with its secret.

A stored tournament grows with :func:`add_entrants`: its earlier games keep their places, keys
and seeds, and the games of the new entrants come after them
(:func:`~arena.tournament.schedule.grown_schedule`); a gauntlet (``TournamentSpec.gauntlet``) plays
one entrant against every other and no other pair. One runner plays a tournament at a time:
:func:`hold` takes its lease (:mod:`arena.tournament.lease`) before anything is written.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from arena.decks.sets import load_deck_set
from arena.decks.specs import draw_secret_seed, is_secret_spec
from arena.errors import ArenaError, UnknownBotError
from arena.game.variants import Variant
from arena.hosting.catalog import Catalog
from arena.hosting.hosted import MEMORY_MB
from arena.hosting.names import canonical
from arena.hosting.plugins import plugin_ref
from arena.hosting.sandbox import Sandbox
from arena.referee.records import ARENA_FAULTS
from arena.tournament.ctrl_c import ctrl_c_held
from arena.tournament.disqualification import DisqualificationLedger, Verdict
from arena.tournament.lease import RunnerLease
from arena.tournament.schedule import ScheduledGame, grown_schedule, schedule_size
from arena.tournament.teams import OWNERS, PACKAGES, resolve_teams
from arena.tournament.worker import BlockResult, BlockTask, WorkerSetup, faulted, skipped
from leaderboard.runners import LeaseLostError
from leaderboard.store import EntrantInfo, GameEntry, Store, TournamentInfo, secret_deck_set

#: Faults after which an entrant is disqualified, unless the spec says otherwise.
DEFAULT_MAX_FAULTS = 10
#: Seconds of play a block aims at: short enough for a lively progress bar and little loss on
#: Ctrl-C, long enough that storing blocks costs nothing.
BLOCK_SECONDS = 2.0
#: The size of the first blocks, before the speed of the games is known, and the largest.
FIRST_BLOCK, MAX_BLOCK = 4, 256
#: The largest field, and schedule, a tournament without ``--bots`` enters on its own (every
#: installed bot): past either, the entrants must be named.
DEFAULT_FIELD_BOTS = 100
DEFAULT_FIELD_GAMES = 5_000_000


class TournamentError(ArenaError):
    """A tournament that cannot be planned or resumed as asked."""


@dataclass(frozen=True)
class TournamentSpec:
    """What a tournament is: deck set, entrants (bot specs; empty: every bot that plays the
    variant at this table size), variant, table size, seed, repetitions and limits; for a
    gauntlet, the entrant every table seats (added to the entrants if they lack it); for a
    stored tournament that grew, the groups of entrants added to it (the last entrants of
    ``bots``, in order); ``teams``, where the teams come from (:mod:`arena.tournament.teams`:
    no table seats two entrants of one team) and, once resolved, ``team_of``, each entrant's
    team (entrants of no team left out).

    ``seed`` names the tournament (it is part of its fingerprint) and seeds nothing a bot sees;
    ``secret`` fixes the tournament's secret seed instead of drawing one (to reproduce a
    published tournament, or for research runs: whoever knows it knows every bot's seed, and
    the decks of a secret deck set). It is not part of the configuration."""

    decks: str = "fixed36"
    bots: tuple[str, ...] = ()
    variant: str = "classic"
    players: int = 2
    seed: int = 0
    repeat: int = 1
    move_time: float | None = 1.0
    max_faults: int | None = DEFAULT_MAX_FAULTS
    name: str | None = None
    gauntlet: str | None = None
    additions: tuple[tuple[str, ...], ...] = ()
    secret: int | None = field(default=None, repr=False)
    teams: str | None = None
    team_of: tuple[tuple[str, str], ...] = ()

    def configuration(self, entrants: Sequence[str]) -> dict[str, Any]:
        """The stored configuration: as the tournament was created, it is part of its
        fingerprint; ``bots`` then grows with every addition, listed in ``additions``."""
        config: dict[str, Any] = {
            "decks": self.decks,
            "bots": list(entrants),
            "players": self.players,
            "repeat": self.repeat,
            "move_time": self.move_time,
            "max_faults": self.max_faults,
        }
        if self.gauntlet is not None:
            config["gauntlet"] = self.gauntlet
        if self.additions:
            config["additions"] = [list(group) for group in self.additions]
        if self.teams is not None:
            config["teams"] = {"from": self.teams, "of": dict(self.team_of)}
        return config


@dataclass(frozen=True)
class Plan:
    """A tournament ready to run: its spec, entrants, plugins, decks and schedule, the
    installed bots left out of a default selection (with the reason), and the tournament's
    secret seed, which the games' seeds derive from (and the decks of a secret deck set;
    ``None`` only for a tournament stored before tournaments had secrets, whose games' seeds
    derive from its public seed). The secret stays in this process and the database: workers
    get the games' seeds and the decks, hosts only their seats' views and seeds.

    ``tournament_id`` is the stored tournament the plan continues (``None``: found by its
    fingerprint, or new); ``added`` are the entrants it adds to it, not stored yet (the last
    of ``entrants``)."""

    spec: TournamentSpec
    entrants: tuple[EntrantInfo, ...]
    decks: tuple[tuple[int, ...], ...]
    schedule: tuple[ScheduledGame, ...]
    left_out: tuple[tuple[str, str], ...] = ()
    secret: int | None = field(default=None, repr=False)
    tournament_id: int | None = None
    added: tuple[EntrantInfo, ...] = ()

    @property
    def public_decks(self) -> bool:
        """Whether a bot could know the decks in advance (every deck set but a secret one)."""
        return self.secret is None or not secret_deck_set(self.configuration)

    @property
    def deck_secret(self) -> int | None:
        """The secret seed the decks were drawn from (``None``: public decks)."""
        return None if self.public_decks else self.secret

    @property
    def name(self) -> str:
        """The tournament's name: the spec's, or one made of deck set, variant and table size
        (and the gauntlet's entrant)."""
        if self.spec.name:
            return self.spec.name
        name = f"{self.spec.decks} {self.spec.variant} {self.spec.players}p"
        return name if self.spec.gauntlet is None else f"{name}, gauntlet of {self.spec.gauntlet}"

    @property
    def configuration(self) -> dict[str, Any]:
        """The stored configuration."""
        return self.spec.configuration([e.name for e in self.entrants])


def _entrant(catalog: Catalog, text: str, variant: str, players: int) -> EntrantInfo:
    spec, entry = catalog.resolve(text)
    if variant not in entry.variants:
        raise UnknownBotError(
            f"bot {entry.name!r} does not play the {variant} variant "
            f"(it plays: {', '.join(entry.variants)})"
        )
    if players not in entry.players:
        raise UnknownBotError(
            f"bot {entry.name!r} does not play at tables of {players} "
            f"(it plays at: {', '.join(map(str, entry.players))})"
        )
    return EntrantInfo(
        name=str(spec),
        bot=entry.name,
        parameters=spec.settings(entry.params),
        plugin=entry.plugin,
        distribution=entry.distribution,
        version=entry.version,
    )


def plan_tournament(spec: TournamentSpec, catalog: Catalog, store: Store | None = None) -> Plan:
    """Resolve ``spec`` against the installed bots and deck sets. When ``store`` holds the
    tournament these settings created, the plan is that tournament's, with every entrant added
    to it since (:func:`plan_resume`): running the same command again goes on with it. A
    secret deck set takes that tournament's secret seed (the same decks as before an
    interruption), or a new one from :func:`~arena.decks.specs.draw_secret_seed` (or
    ``spec.secret``, when given), and so does every tournament's secret on public decks. A
    given secret that is not the stored tournament's is refused. Raises an
    :class:`~arena.errors.ArenaError` (one line) for an unknown bot or deck set, a bot that
    does not play the variant or table size, too few entrants, or, without ``spec.bots``, a
    field of every installed bot larger than :data:`DEFAULT_FIELD_BOTS` or a schedule of it
    longer than :data:`DEFAULT_FIELD_GAMES` games (refused before the schedule is made)."""
    rules = Variant.get(spec.variant)
    rules.check_players(spec.players)
    if spec.repeat < 1:
        raise TournamentError("--repeat must be at least 1")
    if spec.additions:
        raise TournamentError("a new tournament has no additions (see add_entrants)")
    left_out: list[tuple[str, str]] = []
    if spec.bots:
        entrants = [_entrant(catalog, text, rules.name, spec.players) for text in spec.bots]
    else:
        everyone = []
        for name in sorted(catalog.bots):
            entry = catalog.bots[name]
            if rules.name not in entry.variants:
                left_out.append((name, f"does not play the {rules.name} variant"))
            elif spec.players not in entry.players:
                left_out.append((name, f"does not play at tables of {spec.players}"))
            else:
                everyone.append(name)
        if len(everyone) > DEFAULT_FIELD_BOTS:
            raise TournamentError(
                f"{len(everyone)} installed bots play this tournament, more than the "
                f"{DEFAULT_FIELD_BOTS} a tournament enters without --bots; name the entrants "
                "with --bots"
            )
        entrants = [_entrant(catalog, name, rules.name, spec.players) for name in everyone]
    gauntlet = None
    if spec.gauntlet is not None:
        challenger = _entrant(catalog, spec.gauntlet, rules.name, spec.players)
        gauntlet = challenger.name
        if gauntlet not in [e.name for e in entrants]:
            entrants.append(challenger)
    names = [e.name for e in entrants]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TournamentError(f"bot {twice[0]!r} is entered twice")
    if len(entrants) < spec.players:
        raise TournamentError(
            f"a tournament at tables of {spec.players} needs at least {spec.players} bots, "
            f"got {len(entrants)}" + (f": {', '.join(names)}" if names else "")
        )
    spec = replace(spec, variant=rules.name, gauntlet=gauntlet)
    if store is not None:
        store.create_schema()
    if spec.teams is not None:
        teams = resolve_teams(spec.teams, entrants, sorted(catalog.bots), store)
        spec = replace(spec, team_of=tuple(sorted(teams.items())))
    secret = spec.secret
    if is_secret_spec(spec.decks) and store is not None:
        stored = store.find_secret(
            spec.configuration(names), spec.seed, spec.variant, spec.players, entrants
        )
        _check_given_secret(spec, stored)
        secret = stored if stored is not None else secret
    if secret is None:
        secret = draw_secret_seed()
    deck_set = load_deck_set(
        spec.decks, rules.name, catalog, secret if is_secret_spec(spec.decks) else None
    )
    if not spec.bots:
        games = schedule_size(
            names, len(deck_set.decks), spec.players, spec.repeat, gauntlet, dict(spec.team_of)
        )
        if games > DEFAULT_FIELD_GAMES:
            raise TournamentError(
                f"every installed bot makes a schedule of {games:,} games, more than the "
                f"{DEFAULT_FIELD_GAMES:,} a tournament plays without --bots; name the entrants "
                "with --bots"
            )
    plan = _plan(spec, entrants, deck_set.decks, tuple(left_out), secret)
    if not plan.schedule:
        raise TournamentError(
            f"every table of this tournament seats two bots of one team (--teams {spec.teams}"
            f"{_teams_said(spec)}): there is nothing to play"
        )
    if store is None:
        return plan
    found = store.find_tournament(
        plan.configuration,
        spec.seed,
        spec.variant,
        spec.players,
        entrants,
        None if not plan.public_decks else plan.decks,
    )
    if found is None:
        return plan
    resumed = plan_resume(store, found, catalog)
    _check_given_secret(spec, resumed.secret)
    return replace(resumed, left_out=plan.left_out)


def _teams_said(spec: TournamentSpec) -> str:
    """The teams of ``spec`` with two entrants or more, as the refusal of an empty schedule
    says them (``; TEAM: a, b``)."""
    members: dict[str, list[str]] = {}
    for name, team in spec.team_of:
        members.setdefault(team, []).append(name)
    return "".join(f"; {t}: {', '.join(m)}" for t, m in members.items() if len(m) > 1)


def _check_given_secret(spec: TournamentSpec, stored: int | None) -> None:
    """Refuse a secret given in ``spec`` that is not the one of the stored tournament these
    settings resume (``stored``; ``None``: none is stored)."""
    if spec.secret is not None and stored is not None and int(stored) != int(spec.secret):
        raise TournamentError(
            "a tournament with these settings is stored with another secret; give another "
            "--seed to start a new one"
        )


def _plan(
    spec: TournamentSpec,
    entrants: Sequence[EntrantInfo],
    decks: Sequence[Sequence[int]],
    left_out: tuple[tuple[str, str], ...] = (),
    secret: int | None = None,
    tournament_id: int | None = None,
    added: Sequence[EntrantInfo] = (),
) -> Plan:
    names = [e.name for e in entrants]
    grown = sum(len(group) for group in spec.additions)
    stages = [names[: len(names) - grown], *spec.additions]
    if [n for stage in stages for n in stage] != names or not stages[0]:
        raise TournamentError(
            f"tournament {tournament_id}: its stored additions {list(spec.additions)} do not "
            f"end its entrants {names}"
        )
    # A tournament stored before tournaments had secrets keeps its games' seeds and order.
    games_seed = spec.seed if secret is None else secret
    schedule = grown_schedule(
        stages,
        len(decks),
        spec.players,
        spec.repeat,
        games_seed,
        spec.gauntlet,
        secret is not None,
        dict(spec.team_of),
    )
    return Plan(
        spec,
        tuple(entrants),
        tuple(tuple(int(c) for c in d) for d in decks),
        tuple(schedule),
        left_out,
        secret,
        tournament_id,
        tuple(added),
    )


def plan_resume(store: Store, tournament_id: int, catalog: Catalog) -> Plan:
    """The plan of stored tournament ``tournament_id`` (with every entrant added to it), with
    the bots installed now; raises :class:`TournamentError` if one of them is missing, now
    belongs to another distribution, or is not the version it played with."""
    store.create_schema()  # a database made by an older arena may lack the secrets table
    detail = store.tournament(tournament_id)
    config = detail.configuration
    teams = config.get("teams") or {}
    entrants = []
    for stored in detail.entrants:
        try:
            spec, entry = catalog.resolve_played(stored.name, stored.plugin)
        except UnknownBotError as exc:
            raise TournamentError(f"tournament {tournament_id} cannot be resumed: {exc}") from None
        if canonical(entry.distribution) != canonical(stored.distribution):
            raise TournamentError(
                f"tournament {tournament_id} played bot {stored.name!r} of "
                f"{stored.distribution or 'no distribution'}, but the name now belongs to "
                f"{entry.distribution or 'no distribution'}; start a new tournament instead"
            )
        now = (entry.plugin, entry.version)
        then = (stored.plugin, stored.version)
        if now != then:
            raise TournamentError(
                f"tournament {tournament_id} played bot {stored.name!r} from "
                f"{stored.distribution or stored.plugin} {stored.version}, but "
                f"{entry.distribution or entry.plugin} {entry.version} is installed now; "
                "start a new tournament instead"
            )
        entrants.append(
            EntrantInfo(
                str(spec),
                entry.name,
                spec.settings(entry.params),
                entry.plugin,
                entry.distribution,
                entry.version,
            )
        )
    resumed = TournamentSpec(
        decks=str(config.get("decks", "")),
        bots=tuple(e.name for e in entrants),
        variant=detail.variant,
        players=detail.players,
        seed=detail.seed,
        repeat=int(config.get("repeat", 1)),
        move_time=config.get("move_time"),
        max_faults=config.get("max_faults"),
        name=detail.name,
        gauntlet=config.get("gauntlet"),
        additions=tuple(tuple(group) for group in config.get("additions", ())),
        teams=teams.get("from"),
        team_of=tuple(sorted(teams.get("of", {}).items())),
    )
    return _plan(
        resumed,
        entrants,
        detail.decks,
        secret=store.secret(tournament_id),
        tournament_id=tournament_id,
    )


def add_entrants(
    store: Store,
    tournament_id: int,
    bots: Sequence[str],
    catalog: Catalog,
    teams: str | None = None,
) -> Plan:
    """The plan of stored tournament ``tournament_id`` grown by the entrants ``bots`` (bot
    specs): the same decks and settings, its games as they are, and after them every game of a
    table that seats a new entrant (only with the gauntlet's entrant, in a gauntlet). Each new
    entrant passes the checks of a new tournament's: installed, playing the variant at this
    table size, and not entered already. A tournament on secret decks that is finished has
    published them (and its secret), so nothing may be added to it. One on public decks may
    grow after it is finished, its added games' seeds derived from its published secret: an
    entrant added then could know its opponents' seeds, as any bot can know public decks (not
    ranked play). A tournament of teams places the new entrants in teams from ``teams`` (when
    given: another teams file, or the stored source again) or its stored source: they play no
    teammate, and the entrants it had keep their teams. The additions are stored by
    :func:`hold`."""
    plan = plan_resume(store, tournament_id, catalog)
    if not bots:
        raise TournamentError("--add needs at least one bot")
    if plan.deck_secret is not None and store.status(tournament_id) == "finished":
        raise TournamentError(
            f"tournament {tournament_id} is finished and its secret decks are published: an "
            "entrant added now could know them and its opponents' seeds; start a new "
            "tournament on secret decks instead (--gauntlet BOT plays it against the field only)"
        )
    added = [_entrant(catalog, text, plan.spec.variant, plan.spec.players) for text in bots]
    entered = [e.name for e in plan.entrants]
    new = [e.name for e in added]
    for name in new:
        if name in entered:
            raise TournamentError(f"bot {name!r} is already entered in tournament {tournament_id}")
        if new.count(name) > 1:
            raise TournamentError(f"bot {name!r} is entered twice")
    spec = replace(
        plan.spec,
        bots=(*entered, *new),
        additions=(*plan.spec.additions, tuple(new)),
        team_of=_added_teams(store, tournament_id, plan, added, catalog, teams),
    )
    return _plan(
        spec,
        [*plan.entrants, *added],
        plan.decks,
        secret=plan.secret,
        tournament_id=tournament_id,
        added=added,
    )


def _added_teams(
    store: Store,
    tournament_id: int,
    plan: Plan,
    added: Sequence[EntrantInfo],
    catalog: Catalog,
    given: str | None,
) -> tuple[tuple[str, str], ...]:
    """The teams of tournament ``tournament_id`` grown by ``added`` (see :func:`add_entrants`)."""
    stored = plan.spec.teams
    if stored is None:
        if given is not None:
            raise TournamentError(
                f"tournament {tournament_id} was played without teams: --teams cannot be given "
                "when adding to it (its games may already seat two bots of one team)"
            )
        return plan.spec.team_of
    keywords = (PACKAGES, OWNERS)
    if given is not None and given != stored and (given in keywords or stored in keywords):
        raise TournamentError(
            f"tournament {tournament_id} plays by teams from {stored}, not {given}"
        )
    found = resolve_teams(given or stored, [*plan.entrants, *added], sorted(catalog.bots), store)
    new = {e.name for e in added}
    return tuple(sorted([*plan.spec.team_of, *((n, t) for n, t in found.items() if n in new)]))


# --- running -----------------------------------------------------------------------------------


class Executor(Protocol):
    """Where blocks are played: a :class:`~arena.tournament.pool.LocalPool`, or a cluster."""

    @property
    def idle(self) -> int:
        """How many more blocks it can take now."""

    @property
    def free(self) -> int:
        """How many workers have no block at all (a block handed to a busy one waits for it)."""

    @property
    def busy(self) -> int:
        """How many blocks it is playing (or holds, next in line)."""

    def submit(self, task: BlockTask) -> None:
        """Start playing ``task``."""

    def results(self, timeout: float | None = None) -> list[BlockResult]:
        """The blocks finished within ``timeout`` seconds (waiting for the first one only)."""

    def close(self) -> None:
        """Stop after the blocks in play (there are none when this is called normally)."""

    def terminate(self) -> None:
        """Stop at once."""


class Progress(Protocol):
    """Told how a run goes (see :class:`arena.tournament.progress.ProgressLine`)."""

    def update(self, done: int, total: int, faults: int) -> None:
        """``done`` of ``total`` games are stored; ``faults`` faults in this run so far."""


@dataclass
class RunSummary:
    """How a run went: the tournament, games scheduled, stored before, played and skipped now,
    blocks played again (see :mod:`arena.tournament.disqualification`), whether it was interrupted,
    and whether its ``stop`` hook ended it early (see :func:`run_tournament`)."""

    tournament_id: int
    total: int
    stored_before: int
    played: int = 0
    skipped: int = 0
    replays: int = 0
    faults: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    left: int = 0
    stopped: bool = False
    #: Games of this run stored without a result for the arena's own reasons (an ``internal``
    #: or ``shortage`` fault), and the first such fault's kind and message.
    arena_failed: int = 0
    arena_failure: str = ""

    @property
    def complete(self) -> bool:
        """Whether every scheduled game is now stored (a skipped one as its unplayed record)."""
        return self.left == 0


def worker_setup(
    plan: Plan,
    sandbox: Sandbox | None = None,
    memory_mb: int = MEMORY_MB,
    restart_time: float | None = None,
    host_memory_mb: int | None = None,
) -> WorkerSetup:
    """What the workers of ``plan`` need; ``restart_time`` and ``host_memory_mb`` (``None``:
    their defaults) as :class:`~arena.tournament.worker.WorkerSetup` describes them."""
    setup = WorkerSetup(
        variant=plan.spec.variant,
        move_time=plan.spec.move_time,
        max_faults=plan.spec.max_faults,
        entrants={e.name: plugin_ref(e.distribution, e.plugin) for e in plan.entrants},
        decks=plan.decks,
        sandbox=sandbox,
        memory_mb=memory_mb,
    )
    if restart_time is not None:
        setup = replace(setup, restart_time=restart_time)
    if host_memory_mb is not None:
        setup = replace(setup, host_memory_mb=host_memory_mb)
    return setup


def start(plan: Plan, store: Store) -> int:
    """Store the tournament of ``plan`` (or find it: a resume) and return its id. Nothing of
    a stored tournament changes before its runner holds it (:func:`hold`)."""
    store.create_schema()
    if plan.tournament_id is not None:
        return store.tournament(plan.tournament_id).id
    return store.start_tournament(
        plan.name,
        plan.configuration,
        plan.spec.seed,
        plan.spec.variant,
        plan.spec.players,
        plan.entrants,
        plan.decks,
        plan.secret,
    )


def hold(
    plan: Plan, store: Store, tournament_id: int, lease: RunnerLease | None = None
) -> RunnerLease:
    """Become the runner of stored tournament ``tournament_id``, planned as ``plan``: take its
    lease (unless ``lease`` is it already; :class:`~leaderboard.runners.TournamentBusyError`
    while another runner holds it), store the entrants the plan adds, and check that the
    stored entrants are the plan's (another run may have added some since the plan was made).
    The lease renews itself until it is released (it is a context manager; it is released
    here if anything goes wrong)."""
    if lease is None:
        lease = RunnerLease.take(store, tournament_id)
    try:
        want = [e.name for e in plan.entrants]
        stored = [e.name for e in store.tournament(tournament_id).entrants]
        if plan.added and stored == want[: len(want) - len(plan.added)]:
            store.add_entrants(tournament_id, plan.added, plan.configuration, lease.token)
            stored = want
        if stored != want:
            raise TournamentError(
                f"tournament {tournament_id} changed since this run planned it (its entrants "
                f"are now {', '.join(stored)}); run the command again"
            )
    except BaseException:
        lease.release()
        raise
    return lease


def scheduled_games(info: TournamentInfo) -> int:
    """How many games the schedule of stored tournament ``info`` has (a skipped one is stored
    unplayed, see :mod:`arena.tournament.disqualification`)."""
    config = info.configuration
    return schedule_size(
        list(info.entrants),
        info.deck_count,
        info.players,
        int(config.get("repeat", 1)),
        gauntlet=config.get("gauntlet"),
        teams=(config.get("teams") or {}).get("of"),
    )


def run_tournament(
    plan: Plan,
    store: Store,
    executor: Callable[[], Executor],
    progress: Progress | None = None,
    tournament_id: int | None = None,
    block_size: int | None = None,
    lease: RunnerLease | None = None,
    stop: Callable[[Sequence[GameEntry]], bool] | None = None,
) -> RunSummary:
    """Play what is missing of ``plan`` on the executor ``executor()`` makes (only when there
    is something to play) and store it block by block. Ctrl-C stops the run: what was stored
    stays, the tournament is marked ``interrupted``, and the summary says so. ``block_size``
    fixes the number of games per block (default: blocks of about :data:`BLOCK_SECONDS`).

    The run holds the tournament's ``lease`` (default: one taken with :func:`hold` and
    released at the end): every write goes with it, and a run that lost it stops with
    :class:`~leaderboard.runners.LeaseLostError` without writing anything more.

    ``stop`` is called with the entries of every block once they are stored; when it returns
    true the run ends there (blocks in play are dropped), ``stopped`` and ``finished``: how a
    match ends when its sequential test has decided."""
    tid = tournament_id if tournament_id is not None else start(plan, store)
    if lease is None:
        with hold(plan, store, tid) as own:
            return _run(plan, store, executor, progress, tid, block_size, own, stop)
    return _run(plan, store, executor, progress, tid, block_size, lease, stop)


def _run(
    plan: Plan,
    store: Store,
    executor: Callable[[], Executor],
    progress: Progress | None,
    tid: int,
    block_size: int | None,
    lease: RunnerLease,
    stop: Callable[[Sequence[GameEntry]], bool] | None = None,
) -> RunSummary:
    ledger = DisqualificationLedger(plan.schedule, plan.spec.max_faults)
    stored = {s.key: s.record for s in store.stored_games(tid)}
    for game in plan.schedule:
        if game.key in stored:
            ledger.resolve(game.index, faulted(stored[game.key]))
    pending = [g for g in plan.schedule if not ledger.resolved(g.index)]
    summary = RunSummary(tid, len(plan.schedule), len(plan.schedule) - len(pending))
    done = summary.stored_before
    if progress is not None:
        progress.update(done, summary.total, 0)
    if not pending:
        store.set_status(tid, "finished", lease.token)
        return summary

    begun = time.monotonic()
    cursor = 0
    next_block = 0
    size = block_size or FIRST_BLOCK
    per_game = 0.0
    blocks: dict[int, tuple[ScheduledGame, ...]] = {}
    held: dict[int, BlockResult] = {}
    replays: deque[int] = deque()
    pool: Executor | None = None
    lost = False
    try:
        store.set_status(tid, "running", lease.token)
        pool = executor()
        while cursor < len(pending) or replays or pool.busy or held:
            while pool.idle and (replays or cursor < len(pending)):
                if replays:
                    games = blocks[replays[0]]
                else:
                    # near the end, smaller blocks so that no worker is left idle for long
                    share = math.ceil((len(pending) - cursor) / (2 * (pool.idle + pool.busy)))
                    end = _run_end(pending, cursor, min(size, share))
                    games = tuple(pending[cursor:end])
                if not pool.free and ledger.at_risk(games):
                    break  # behind a block in play whose faults could disqualify one of its bots
                if replays:
                    number = replays.popleft()
                    summary.replays += 1
                else:
                    number = next_block
                    next_block += 1
                    blocks[number] = games
                    cursor = end
                pool.submit(BlockTask(number, games, ledger.known_counts(games[0].index)))
            if not pool.busy and not replays and cursor >= len(pending) and held:
                raise RuntimeError("finished blocks wait for nothing (a bug)")
            for result in pool.results(timeout=0.5):
                held[result.block] = result
                if block_size is None and result.outcomes:
                    # the latest block only: the first ones include starting the bots' hosts
                    per_game = result.seconds / len(result.outcomes)
                    size = max(1, min(MAX_BLOCK, round(BLOCK_SECONDS / max(per_game, 1e-6))))
            # blocks are stored and counted whole: a Ctrl-C in the store's transaction would leave
            # its lock for the final status write to wait out
            with ctrl_c_held():
                done += _settle(
                    store, tid, lease.token, ledger, blocks, held, replays, summary, stop
                )
            if progress is not None:
                progress.update(done, summary.total, summary.faults)
            if summary.stopped:
                break
    except KeyboardInterrupt:
        summary.interrupted = True
    except LeaseLostError:
        lost = True
        raise
    finally:
        if pool is not None:
            if summary.interrupted or summary.stopped or pool.busy:
                pool.terminate()
            else:
                pool.close()
        summary.seconds = time.monotonic() - begun
        summary.left = summary.total - done
        if not lost:
            ended = summary.complete or summary.stopped
            store.set_status(tid, "finished" if ended else "interrupted", lease.token)
    return summary


def _run_end(pending: Sequence[ScheduledGame], start: int, most: int) -> int:
    """Where a block of at most ``most`` games of ``pending`` from ``start`` ends: before the
    first gap in the schedule (a stored game in between), because a worker counts faults from
    the counts it is given through its block's games only; a block across a gap would not
    see the faults of the games stored in it, and would be played again the same way."""
    end = start + 1
    while end < min(start + most, len(pending)) and (
        pending[end].index == pending[end - 1].index + 1
    ):
        end += 1
    return end


def _settle(
    store: Store,
    tid: int,
    lease: str,
    ledger: DisqualificationLedger,
    blocks: dict[int, tuple[ScheduledGame, ...]],
    held: dict[int, BlockResult],
    replays: deque[int],
    summary: RunSummary,
    stop: Callable[[Sequence[GameEntry]], bool] | None = None,
) -> int:
    """Store (or send back, see :mod:`arena.tournament.disqualification`) every finished block that
    can be, until ``stop`` says so; returns how many games were resolved."""
    resolved = 0
    changed = True
    while changed:
        changed = False
        for number in sorted(held):
            games, result = blocks[number], held[number]
            outcomes = result.outcomes
            played = [(o.disqualified, faulted(o.record)) for o in outcomes]
            verdict = ledger.verdict(games, played)
            if verdict is Verdict.WAIT:
                continue
            del held[number]
            if verdict is Verdict.REPLAY:
                replays.append(number)
                continue
            entries: list[GameEntry] = []
            for game, outcome in zip(games, outcomes, strict=True):
                if outcome.index != game.index or (
                    outcome.record is not None and tuple(outcome.record.seats) != game.seats
                ):
                    raise RuntimeError(f"block {number} came back for other games (a bug)")
                if outcome.record is not None:
                    entries.append((game.key, game.deck, game.rotation, outcome.record))
            store.record_block(tid, entries, lease)
            store.record_output(tid, result.output)
            for game, (_, faults) in zip(games, played, strict=True):
                ledger.resolve(game.index, faults)
                summary.faults += len(faults)
            for outcome in outcomes:
                failed = [
                    f for f in (outcome.record.faults if outcome.record else []) if
                    f.kind in ARENA_FAULTS
                ]  # fmt: skip
                if failed:
                    summary.arena_failed += 1
                    summary.arena_failure = summary.arena_failure or (
                        f"{failed[0].kind}: {failed[0].message}"
                    )
            passed = sum(1 for o in outcomes if skipped(o.record))
            summary.played += len(games) - passed
            summary.skipped += passed
            resolved += len(games)
            del blocks[number]
            changed = True
            if stop is not None and stop(entries):
                summary.stopped = True
                return resolved
    return resolved
