"""The store: tournaments, their entrants and decks, finished games and rating snapshots.

A :class:`Store` wraps one database named by a SQLAlchemy URL (SQLite by default). The
engine is created on first use, never at import. Every method runs in its own transaction;
:meth:`Store.record_block` writes a whole block of games in one, so an interrupted run loses
at most the block in flight and resumes from :meth:`Store.finished_keys`.

A tournament keeps its secret seed here (:meth:`Store.secret`), where no bot host can see it:
every seed a bot is given derives from it, and so do the decks of a secret deck set.
:meth:`Store.tournament` publishes it only once the tournament is finished
(:attr:`TournamentDetail.published_seed`).

One runner plays a tournament at a time: it holds a lease (:meth:`Store.take_lease`, see
:mod:`leaderboard.runners`) and passes its token to every write it makes.

Commands that only read open the store with :meth:`Store.open_existing`: it never creates a
database or writes to one, and refuses on one line a database that is not there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    Engine,
    Select,
    Text,
    cast,
    create_engine,
    delete,
    event,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    text,
)
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

import arena
from arena.decks.specs import is_secret_spec
from arena.errors import ArenaError, printable
from arena.referee.records import GameRecord
from leaderboard import runners
from leaderboard.models import (
    STATUSES,
    Base,
    BotOutput,
    Deck,
    Entrant,
    Game,
    RatingSnapshot,
    Runner,
    RunSandbox,
    Tournament,
    TournamentSecret,
    utcnow,
)
from leaderboard.runners import RunnerInfo

#: The environment variable naming the database URL when none is given.
ENV_VAR = "ARENA_DB"
#: The SQLite file used when neither a URL nor :data:`ENV_VAR` is given (in the working directory).
DEFAULT_FILE = "arena.db"
#: How long (seconds) a SQLite connection waits for another writer before giving up.
SQLITE_BUSY_SECONDS = 30.0
#: How often :meth:`Store.create_schema` tries again when another process created a table
#: between its check and its ``CREATE TABLE``.
SCHEMA_ATTEMPTS = 8
#: The PostgreSQL advisory lock that makes schema creation one process at a time.
SCHEMA_LOCK = 0x4C4C4152454E41  # "LLARENA"


def _create_engine(parsed: URL, shown: str, **options: Any) -> Engine:
    """SQLAlchemy's engine for ``parsed`` (``shown`` is the URL as errors name it), a bad URL or
    a missing driver being a one-line :class:`StoreError`."""
    try:
        return create_engine(
            parsed, json_serializer=_to_json, json_deserializer=orjson.loads, **options
        )
    except NoSuchModuleError:
        raise StoreError(
            f"bad database URL {shown!r}: unknown database dialect {parsed.drivername!r}"
        ) from None
    except ImportError as exc:
        raise StoreError(
            f"database URL {shown!r} needs a driver that is not installed: {exc}"
        ) from None
    except (ArgumentError, ValueError, TypeError) as exc:
        raise StoreError(f"bad database URL {shown!r}: {_one_line(exc)}") from None


def _widen_seed(connection: Connection) -> None:
    """Make an older PostgreSQL database's 32-bit ``tournaments.seed`` a BIGINT (tables made
    before seeds ran to 2**63 - 1); SQLite's INTEGER holds 64 bits already."""
    if connection.dialect.name != "postgresql":
        return
    kind = connection.execute(
        text(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'tournaments' AND column_name = 'seed' "
            "AND table_schema = current_schema()"
        )
    ).scalar()
    if kind == "integer":
        connection.execute(text("ALTER TABLE tournaments ALTER COLUMN seed TYPE BIGINT"))


#: The column a ``runners`` table made before leases recorded their holder's process lacks.
RUNNER_PROCESS = "process"


def _runner_columns(connection: Connection) -> set[str]:
    """The columns of the database's ``runners`` table (none when it has no such table)."""
    from sqlalchemy import inspect

    inspector = inspect(connection)
    if not inspector.has_table(Runner.__tablename__):
        return set()
    return {column["name"] for column in inspector.get_columns(Runner.__tablename__)}


def _widen_runners(connection: Connection) -> None:
    """Give an older database's ``runners`` table the ``process`` column (tables made before
    leases recorded their holder's process): a nullable column, so older runners' rows stay
    as they are and a lease taken without it only expires."""
    if RUNNER_PROCESS not in _runner_columns(connection):
        connection.execute(text(f"ALTER TABLE runners ADD COLUMN {RUNNER_PROCESS} VARCHAR(200)"))


class StoreError(ArenaError):
    """The database cannot be used: a bad URL, a missing driver, an unreachable server, or a
    failed write. The message is one line."""


@dataclass(frozen=True)
class EntrantInfo:
    """A bot entered in a tournament: ``name`` is its canonical bot spec (unique within the
    tournament), ``bot`` the registered bot name, and where it comes from."""

    name: str
    bot: str
    parameters: dict[str, Any] = field(default_factory=dict)
    plugin: str = ""
    distribution: str = ""
    version: str = ""


class _DeckSecrecy:
    """What a stored tournament may show of its decks (for :class:`TournamentInfo` and
    :class:`TournamentDetail`)."""

    secret_decks: bool
    status: str

    @property
    def decks_revealed(self) -> bool:
        """Whether the deck orders may be shown: public decks, or a finished tournament."""
        return not self.secret_decks or self.status == "finished"


@dataclass(frozen=True)
class TournamentInfo(_DeckSecrecy):
    """A stored tournament as listed by :meth:`Store.tournaments`: ``entrants`` in the order
    they were entered, ``games`` stored, its deck set (``deck_count`` decks, secret or not),
    its configuration (with ``gauntlet`` and ``additions`` when it has them) and the runner
    holding it now, if any."""

    id: int
    name: str
    status: str
    variant: str
    players: int
    seed: int
    entrants: list[str]
    games: int
    created: datetime
    updated: datetime
    arena_version: str
    configuration: dict[str, Any] = field(default_factory=dict)
    deck_count: int = 0
    secret_decks: bool = False
    runner: RunnerInfo | None = None
    #: How bots ran in each run of the tournament (oldest first), as in
    #: :attr:`TournamentDetail.sandboxes`.
    sandboxes: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TournamentDetail(_DeckSecrecy):
    """Everything stored about one tournament except its games: the provenance of a report.

    ``entrants`` and ``decks`` are in the order they were entered; ``decks[i]`` is the deck at
    position ``i`` (card values from the top). ``secret_decks`` says the decks were drawn from
    the tournament's secret seed; ``published_seed`` is that seed once the tournament is
    finished (``None`` before, and for a tournament stored before tournaments had secrets):
    every game's seed derives from it, and a secret deck set's decks. While ``decks_revealed``
    is False, nothing shown to people may contain the deck orders.
    """

    id: int
    name: str
    status: str
    variant: str
    players: int
    seed: int
    configuration: dict[str, Any]
    entrants: list[EntrantInfo]
    decks: list[list[int]]
    created: datetime
    updated: datetime
    arena_version: str
    secret_decks: bool = False
    published_seed: int | None = None
    #: How bots ran in each run of the tournament (oldest first): sandbox, limits, enforcement.
    sandboxes: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class StoredGame:
    """One stored game: its id (global in the database), schedule key, deck position (``None``
    when it was played on no stored deck), seat rotation, when it was stored, and its record."""

    id: int
    key: str
    deck: int | None
    rotation: int
    created: datetime
    record: GameRecord


#: A finished game to record: its schedule key, deck position (or None), seat rotation, record.
GameEntry = tuple[str, int | None, int, GameRecord]

#: Blocks' worth of a bot's output :meth:`Store.record_output` keeps per entrant name.
OUTPUT_KEPT = 200

#: How many games :meth:`Store.iter_games` and :meth:`Store.iter_game_rows` read at a time.
BATCH = 500


@dataclass(frozen=True)
class GameRow:
    """A stored game without its record, as :meth:`Store.find_games` lists it: id, tournament,
    schedule key, deck position (``None``: no stored deck) and the deck's cards (top first, as
    digits; not to be shown while the tournament's decks are not revealed), seat rotation,
    entrant names by seat, winning seats, how the round ended, faults (as
    :meth:`arena.referee.records.Fault.to_json`), seconds each seat thought, when it was stored."""

    id: int
    tournament: int
    key: str
    deck: int | None
    cards: str | None
    rotation: int
    seats: list[str]
    winners: list[int]
    end_reason: str
    faults: list[dict[str, Any]]
    times: list[float]
    created: datetime


@dataclass(frozen=True)
class GameQuery:
    """Which stored games :meth:`Store.find_games` lists: those of ``tournament`` (``None``:
    every tournament) and of one of ``tournaments`` (empty: any), seating one of the entrants
    ``seated`` (empty: anyone) and one of ``against`` in another seat (empty: anyone), with at
    least one fault if ``faulted``.
    Entrant names are exact (see :meth:`Store.entrant_names`); ``seated`` and ``against``
    share none."""

    tournament: int | None = None
    seated: frozenset[str] = frozenset()
    against: frozenset[str] = frozenset()
    faulted: bool = False
    tournaments: frozenset[int] = frozenset()


def resolve_url(url: str | None = None) -> str:
    """The database URL to use: ``url`` if given, else ``$ARENA_DB`` if set and not empty, else
    a SQLite file ``arena.db`` in the current working directory (as an absolute path)."""
    if url:
        return url
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    return f"sqlite:///{Path.cwd() / DEFAULT_FILE}"


def _mask(url: str) -> str:
    """``url`` with any password replaced by ``***``, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's message, preferring the driver's own error."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    line = text.splitlines()[0].strip() if text else ""
    return line or type(exc).__name__


#: What :func:`fingerprint` puts in place of the deck orders of a secret deck set.
SECRET_DECKS = "secret"


def secret_deck_set(configuration: dict[str, Any]) -> bool:
    """Whether a tournament of ``configuration`` with a secret drew its decks from it: its
    deck set is ``balanced:N`` or ``random:N`` without a seed. (One without a secret, stored
    before secret deck sets, played ``random:N`` as ``random:N:0``: public decks.)"""
    return is_secret_spec(str(configuration.get("decks", "")))


def fingerprint(
    configuration: dict[str, Any],
    seed: int,
    variant: str,
    players: int,
    entrants: Sequence[EntrantInfo],
    decks: Sequence[Sequence[int]] | None,
) -> str:
    """A hash of everything that decides a tournament's game records (not its name).

    ``decks`` is ``None`` for decks drawn from a secret seed: they are then left out (the
    configuration names the deck set, and the seed stored with the tournament decides the
    orders), so the same settings find the tournament again with its secret."""
    canonical = {
        "configuration": configuration,
        "seed": seed,
        "variant": variant,
        "players": players,
        "entrants": [
            [e.name, e.bot, e.parameters, e.plugin, e.distribution, e.version] for e in entrants
        ],
        "decks": SECRET_DECKS if decks is None else [_cards(d) for d in decks],
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _entrant_row(entrant: EntrantInfo) -> Entrant:
    """The stored row of ``entrant``."""
    return Entrant(
        name=entrant.name,
        bot=entrant.bot,
        parameters=dict(entrant.parameters),
        plugin=entrant.plugin,
        distribution=entrant.distribution,
        version=entrant.version,
    )


def _cards(deck: Sequence[int]) -> str:
    """A deck order as a string of card values (one digit each, top first)."""
    values = [int(c) for c in deck]
    if any(not 0 <= v <= 9 for v in values):
        raise StoreError(f"deck {values} has a card value that is not one digit")
    return "".join(str(v) for v in values)


class Store:
    """The database at ``url`` (see :func:`resolve_url`); the engine opens on first use.

    With ``read_only`` (see :meth:`open_existing`) the database must exist and hold the arena's
    tables, and nothing is written to it: SQLite opens it read-only (``mode=ro``), and one in a
    directory this process cannot write, whose write-ahead log is checkpointed, as immutable;
    PostgreSQL sessions are read-only transactions."""

    def __init__(self, url: str | None = None, read_only: bool = False) -> None:
        self.url = resolve_url(url)
        self.read_only = read_only
        self._engine: Engine | None = None
        self._sessions: sessionmaker[Session] | None = None
        self._schema_ready = False
        self._runner_processes = True  # the runners table has the process column

    @classmethod
    def open_existing(cls, url: str | None = None) -> Store:
        """The store at ``url`` for reading only: a database that is not there (or holds no
        arena tables) is a one-line :class:`StoreError` when it is first used, and no file is
        ever created."""
        return cls(url, read_only=True)

    def __repr__(self) -> str:
        return f"Store({_mask(self.url)!r})"

    # -- connection ---------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, created (and checked with one connection) on first use."""
        if self._engine is None:
            self._engine = self._connect()
            self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        return self._engine

    def _connect(self) -> Engine:
        shown = _mask(self.url)
        try:
            parsed: URL = make_url(self.url)
        except (ArgumentError, ValueError) as exc:
            raise StoreError(f"bad database URL {shown!r}: {_one_line(exc)}") from None
        sqlite = parsed.get_backend_name() == "sqlite"
        if self.read_only:
            return self._connect_read_only(parsed, sqlite)
        if sqlite:
            _check_directory(parsed.database or "", shown)
        engine = _create_engine(
            parsed, shown, connect_args={"timeout": SQLITE_BUSY_SECONDS} if sqlite else {}
        )
        if sqlite:
            event.listen(engine, "connect", _sqlite_pragmas)
        try:
            with engine.connect():
                pass
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot open database {shown!r}: {_one_line(exc)}") from None
        return engine

    def _connect_read_only(self, parsed: URL, sqlite: bool) -> Engine:
        """An engine that reads the existing database ``parsed`` names and never writes."""
        from sqlalchemy import inspect

        shown = _mask(self.url)
        if sqlite:
            engine = _sqlite_read_only(parsed.database or "", shown)
        else:
            engine = _create_engine(parsed, shown).execution_options(postgresql_readonly=True)
        try:
            with engine.connect() as connection:
                tables = set(inspect(connection).get_table_names())
                # an older runners table, which no schema creation widens here
                self._runner_processes = RUNNER_PROCESS in _runner_columns(connection)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot open database {shown!r}: {_one_line(exc)}") from None
        if Tournament.__tablename__ not in tables:
            engine.dispose()
            raise StoreError(f"no arena database at {shown!r} (it holds no tournaments)")
        return engine

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """A session in one transaction: committed at the end, rolled back on any error."""
        self.engine  # noqa: B018 - opens the engine and the session factory
        assert self._sessions is not None
        try:
            with self._sessions() as session, session.begin():
                yield session
        except StoreError:
            raise
        except SQLAlchemyError as exc:
            raise StoreError(f"database {_mask(self.url)!r}: {_one_line(exc)}") from None

    def transaction(self) -> AbstractContextManager[Session]:
        """A session in one transaction (committed at the end, rolled back on any error), for
        the modules that keep their own tables here (:mod:`leaderboard.participants`)."""
        return self._session()

    def close(self) -> None:
        """Close every pooled connection (the store opens again on next use)."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
            self._sessions = None
            self._schema_ready = False

    def create_schema(self) -> None:
        """Create any missing table (existing tables and their rows are left alone). Safe when
        several processes do it at once: on PostgreSQL one at a time (an advisory lock held
        for the transaction, DDL being transactional there), elsewhere by trying again when
        another process created a table between the check and the ``CREATE``."""
        if self._schema_ready:
            return
        if self.read_only:
            raise StoreError(f"database {_mask(self.url)!r} is open read-only: no schema is made")
        for attempt in range(SCHEMA_ATTEMPTS):
            try:
                with self.engine.begin() as connection:
                    if connection.dialect.name == "postgresql":
                        connection.execute(
                            text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK}
                        )
                    Base.metadata.create_all(connection)
                    _widen_seed(connection)
                    _widen_runners(connection)
            except SQLAlchemyError as exc:
                said = _one_line(exc)
                raced = isinstance(exc, IntegrityError) or "already exists" in said
                raced = raced or "duplicate column" in said  # SQLite's ALTER TABLE, raced
                if not raced or attempt == SCHEMA_ATTEMPTS - 1:
                    raise StoreError(f"database {_mask(self.url)!r}: {_one_line(exc)}") from None
                time.sleep(0.02 * (attempt + 1))
            else:
                self._schema_ready = True
                return

    # -- tournaments --------------------------------------------------------------------------

    def start_tournament(
        self,
        name: str,
        configuration: dict[str, Any],
        seed: int,
        variant: str,
        players: int,
        entrants: Sequence[EntrantInfo],
        decks: Sequence[Sequence[int]],
        secret: int | None = None,
    ) -> int:
        """The id of a new tournament, or of the stored one with the same fingerprint (see
        :func:`fingerprint`): a resume. A stored tournament is left as it is (its runner marks
        it running once it holds it, see :meth:`take_lease`); of processes starting the same
        new tournament at once, one stores it and all get its id.

        ``secret`` is the tournament's secret seed, which every game's seed derives from (and
        ``decks``, when the configuration's deck set is secret: the fingerprint then leaves the
        decks out, see :func:`secret_deck_set`). It is stored with the tournament. A stored
        tournament with the same settings but another secret raises :class:`StoreError` (take
        the secret from :meth:`find_secret` to resume it)."""
        names = [e.name for e in entrants]
        if len(set(names)) != len(names):
            raise StoreError(f"entrant names are not unique: {names}")
        hidden = secret is not None and secret_deck_set(configuration)
        mark = fingerprint(
            configuration, seed, variant, players, entrants, None if hidden else decks
        )
        found = self._resume(mark, secret)
        if found is not None:
            return found
        tournament = Tournament(
            name=name,
            fingerprint=mark,
            configuration=configuration,
            seed=seed,
            variant=variant,
            players=players,
            status="running",
            arena_version=arena.__version__,
            entrants=[_entrant_row(e) for e in entrants],
            decks=[Deck(position=i, cards=_cards(d)) for i, d in enumerate(decks)],
            secret=None if secret is None else TournamentSecret(seed=str(int(secret))),
        )
        try:
            with self._session() as session:
                session.add(tournament)
                session.flush()
                return tournament.id
        except StoreError as exc:
            # Another process may have started the same tournament at the same moment.
            if isinstance(exc.__context__, IntegrityError):
                found = self._resume(mark, secret)
                if found is not None:
                    return found
            raise

    def _resume(self, mark: str, secret: int | None) -> int | None:
        with self._session() as session:
            tournament = session.scalars(
                select(Tournament).where(Tournament.fingerprint == mark)
            ).one_or_none()
            if tournament is None:
                return None
            stored = tournament.secret
            if secret is not None and (stored is None or int(stored.seed) != int(secret)):
                raise StoreError(
                    f"tournament {tournament.id} was started with the same settings and another "
                    f"secret (by another run?); resume it with --resume {tournament.id}"
                )
            return tournament.id

    def find_tournament(
        self,
        configuration: dict[str, Any],
        seed: int,
        variant: str,
        players: int,
        entrants: Sequence[EntrantInfo],
        decks: Sequence[Sequence[int]] | None,
    ) -> int | None:
        """The id of the stored tournament created with these settings (see
        :func:`fingerprint`; ``decks`` is ``None`` for a secret deck set), or ``None``."""
        mark = fingerprint(configuration, seed, variant, players, entrants, decks)
        with self._session() as session:
            return session.scalars(
                select(Tournament.id).where(Tournament.fingerprint == mark)
            ).one_or_none()

    def add_entrants(
        self,
        tournament_id: int,
        entrants: Sequence[EntrantInfo],
        configuration: dict[str, Any],
        lease: str,
    ) -> None:
        """Add ``entrants`` to tournament ``tournament_id`` (by its runner, holding ``lease``)
        and store its grown ``configuration``, whose ``bots`` must be the stored entrants
        followed by ``entrants``: otherwise the tournament changed since it was read and
        :class:`StoreError` is raised. The fingerprint stays the creation's. The tournament is
        then ``interrupted`` (its new games are to be played) until its runner marks it
        running."""
        with self._session() as session:
            runners.hold(session, tournament_id, lease)
            tournament = self._tournament(session, tournament_id)
            stored = [e.name for e in tournament.entrants]
            if list(configuration.get("bots", [])) != stored + [e.name for e in entrants]:
                raise StoreError(
                    f"tournament {tournament_id} changed since this run read it (its entrants "
                    f"are now {', '.join(stored)}); run the command again"
                )
            tournament.entrants.extend(_entrant_row(e) for e in entrants)
            tournament.configuration = dict(configuration)
            tournament.status = "interrupted"

    def find_secret(
        self,
        configuration: dict[str, Any],
        seed: int,
        variant: str,
        players: int,
        entrants: Sequence[EntrantInfo],
    ) -> int | None:
        """The secret seed of the stored tournament that a secret deck set with these settings
        resumes (see :func:`fingerprint`), or ``None`` when there is none: then a new secret is
        to be drawn."""
        mark = fingerprint(configuration, seed, variant, players, entrants, None)
        with self._session() as session:
            found = session.scalars(
                select(TournamentSecret.seed)
                .join(Tournament, TournamentSecret.tournament_id == Tournament.id)
                .where(Tournament.fingerprint == mark)
            ).one_or_none()
        return None if found is None else int(found)

    def secret(self, tournament_id: int) -> int | None:
        """Tournament ``tournament_id``'s secret seed, whatever its status (``None``: stored
        before tournaments had secrets). For resuming; never show it to anyone before the
        tournament is finished (:attr:`TournamentDetail.published_seed` follows that rule)."""
        with self._session() as session:
            tournament = self._tournament(session, tournament_id)
            return None if tournament.secret is None else int(tournament.secret.seed)

    def set_status(self, tournament_id: int, status: str, lease: str | None = None) -> None:
        """Mark a tournament running, finished or interrupted (by its runner, when ``lease``
        is given: :class:`~leaderboard.runners.LeaseLostError` if that lease is lost)."""
        if status not in STATUSES:
            raise StoreError(f"unknown tournament status {status!r} (one of {', '.join(STATUSES)})")
        with self._session() as session:
            if lease is not None:
                runners.hold(session, tournament_id, lease)
            self._tournament(session, tournament_id).status = status

    # -- the runner's lease -------------------------------------------------------------------

    def take_lease(
        self, tournament_id: int, holder: str, seconds: float, process: str | None = None
    ) -> str:
        """Become the runner of tournament ``tournament_id``: take its lease for ``seconds``
        (extended by each :meth:`renew_lease` and each write made with it) and return the
        lease's token. ``process`` is the taker's process
        (:func:`~leaderboard.runners.this_process`; ``None``: its lease can only expire).

        Raises :class:`~leaderboard.runners.TournamentBusyError` (one line naming the holder,
        since when, and whether its process still runs here or when its lease expires) while
        another runner holds an unexpired lease, unless that runner's process ran on this
        machine and is gone (:func:`~leaderboard.runners.process_alive`): its lease is then
        taken over at once. Of runners taking it at once, exactly one gets it: a conditional
        UPDATE of an expired lease or of the gone process's lease, or an INSERT that the
        primary key lets succeed once."""
        claim = runners.Claim(holder, process, secrets.token_hex(16), seconds)
        for _ in range(3):  # the lease may expire or be released between the steps
            with self._session() as session:
                if runners.take_expired(session, tournament_id, claim):
                    return claim.token
                self._tournament(session, tournament_id)
            try:
                with self._session() as session:
                    runners.take_free(session, tournament_id, claim)
                return claim.token
            except StoreError as exc:
                if not isinstance(exc.__context__, IntegrityError):
                    raise
            with self._session() as session:
                held = runners.live(session, tournament_id).get(tournament_id)
                if held is not None and held.alive is False and held.process is not None:
                    if runners.take_dead(session, tournament_id, held.process, claim):
                        return claim.token
                elif held is not None:
                    raise runners.busy(session, tournament_id, held)
        raise StoreError(f"tournament {tournament_id}: its lease changed hands while taking it")

    def renew_lease(self, tournament_id: int, token: str) -> bool:
        """Extend the lease held with ``token``; False when another runner took it over."""
        with self._session() as session:
            return runners.renew(session, tournament_id, token)

    def release_lease(self, tournament_id: int, token: str) -> None:
        """Give up the lease held with ``token`` (if it still is)."""
        with self._session() as session:
            runners.release(session, tournament_id, token)

    def runner(self, tournament_id: int) -> RunnerInfo | None:
        """Who runs tournament ``tournament_id`` now (an unexpired lease), or ``None``; its
        ``alive`` says whether that runner's process still runs here, is gone (the next runner
        takes the lease over at once) or cannot be told."""
        with self._session() as session:
            return runners.live(session, tournament_id, self._runner_processes).get(tournament_id)

    def status(self, tournament_id: int) -> str:
        """A tournament's status: ``running`` only while its runner is (see
        :func:`~leaderboard.runners.shown_status`)."""
        with self._session() as session:
            status = self._tournament(session, tournament_id).status
            if status != "running":
                return status
            held = runners.live(session, tournament_id, self._runner_processes)
            return runners.shown_status(status, held.get(tournament_id))

    @staticmethod
    def _tournament(session: Session, tournament_id: int) -> Tournament:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise StoreError(f"no tournament with id {tournament_id}")
        return tournament

    def tournaments(self) -> list[TournamentInfo]:
        """Every stored tournament, oldest first, with its entrants and number of games."""
        with self._session() as session:
            counts = dict(
                session.execute(
                    select(Game.tournament_id, func.count(Game.id)).group_by(Game.tournament_id)
                ).all()
            )
            rows = session.scalars(select(Tournament).order_by(Tournament.id)).all()
            decks = dict(
                session.execute(
                    select(Deck.tournament_id, func.count(Deck.id)).group_by(Deck.tournament_id)
                ).all()
            )
            secret = set(session.scalars(select(TournamentSecret.tournament_id)))
            held = runners.live(session, processes=self._runner_processes)
            sandboxes: dict[int, list[dict[str, Any]]] = {}
            for tid, sandbox in session.execute(
                select(RunSandbox.tournament_id, RunSandbox.sandbox).order_by(RunSandbox.id)
            ):
                sandboxes.setdefault(tid, []).append(dict(sandbox))
            return [
                TournamentInfo(
                    id=t.id,
                    name=t.name,
                    status=runners.shown_status(t.status, held.get(t.id)),
                    variant=t.variant,
                    players=t.players,
                    seed=t.seed,
                    entrants=[e.name for e in t.entrants],
                    games=int(counts.get(t.id, 0)),
                    created=t.created,
                    updated=t.updated,
                    arena_version=t.arena_version,
                    configuration=dict(t.configuration),
                    deck_count=int(decks.get(t.id, 0)),
                    secret_decks=t.id in secret and secret_deck_set(t.configuration),
                    runner=held.get(t.id),
                    sandboxes=sandboxes.get(t.id, []),
                )
                for t in rows
            ]

    def tournament_names(self, prefix: str = "") -> list[tuple[int, str, str]]:
        """``(id, name, stored status)`` of every tournament whose name starts with ``prefix``,
        oldest first: one light query, for callers that must not load every tournament."""
        query = select(Tournament.id, Tournament.name, Tournament.status).order_by(Tournament.id)
        if prefix:
            query = query.where(Tournament.name.startswith(prefix, autoescape=True))
        with self._session() as session:
            return [(int(i), str(n), str(s)) for i, n, s in session.execute(query)]

    def tournament_name(self, tournament_id: int) -> str:
        """The name of tournament ``tournament_id`` (:class:`StoreError` when there is none)."""
        with self._session() as session:
            return self._tournament(session, tournament_id).name

    def latest_game_id(self) -> int:
        """The id of the newest stored game (0 when there is none)."""
        with self._session() as session:
            return int(session.scalar(select(func.max(Game.id))) or 0)

    def tournament(self, tournament_id: int | None = None) -> TournamentDetail:
        """The stored tournament ``tournament_id`` (the latest one when ``None``), without its
        games. Raises :class:`StoreError` when there is no such tournament."""
        with self._session() as session:
            if tournament_id is None:
                found = session.scalars(
                    select(Tournament).order_by(Tournament.id.desc()).limit(1)
                ).one_or_none()
                if found is None:
                    raise StoreError(f"no tournament stored in {_mask(self.url)!r}")
                t = found
            else:
                t = self._tournament(session, tournament_id)
            secret = t.secret
            held = runners.live(session, t.id, self._runner_processes).get(t.id)
            return TournamentDetail(
                id=t.id,
                name=t.name,
                status=runners.shown_status(t.status, held),
                variant=t.variant,
                players=t.players,
                seed=t.seed,
                configuration=dict(t.configuration),
                entrants=[
                    EntrantInfo(
                        e.name, e.bot, dict(e.parameters), e.plugin, e.distribution, e.version
                    )
                    for e in t.entrants
                ],
                decks=[[int(c) for c in d.cards] for d in t.decks],
                created=t.created,
                updated=t.updated,
                arena_version=t.arena_version,
                secret_decks=secret is not None and secret_deck_set(t.configuration),
                published_seed=(
                    int(secret.seed) if secret is not None and t.status == "finished" else None
                ),
                sandboxes=[
                    dict(r.sandbox)
                    for r in session.scalars(
                        select(RunSandbox)
                        .where(RunSandbox.tournament_id == t.id)
                        .order_by(RunSandbox.id)
                    )
                ],
            )

    def record_sandbox(self, tournament_id: int, sandbox: dict[str, Any]) -> None:
        """Keep how bots run in this run of tournament ``tournament_id`` (its provenance)."""
        with self._session() as session:
            self._tournament(session, tournament_id)
            session.add(RunSandbox(tournament_id=tournament_id, sandbox=dict(sandbox)))

    # -- games --------------------------------------------------------------------------------

    def finished_keys(self, tournament_id: int) -> set[str]:
        """The keys of the tournament's games already stored."""
        with self._session() as session:
            self._tournament(session, tournament_id)
            return set(session.scalars(select(Game.key).where(Game.tournament_id == tournament_id)))

    def record_block(
        self, tournament_id: int, games: Sequence[GameEntry], lease: str | None = None
    ) -> None:
        """Store a block of finished games ``(key, deck position, rotation, record)`` in one
        transaction: all of them or, on any error, none. Keys already stored (or repeated in the
        block) are skipped, so recording a block again is harmless. With ``lease`` (the
        runner's), the write first renews that lease and holds it until it commits, so no
        other runner writes meanwhile (:class:`~leaderboard.runners.LeaseLostError` when it
        was lost)."""
        try:
            self._record_block(tournament_id, games, lease)
        except StoreError as exc:
            if isinstance(exc.__context__, IntegrityError):
                raise StoreError(
                    f"tournament {tournament_id}: a game of this block was stored meanwhile by "
                    f"another writer (only a tournament's runner may write its games): {exc}"
                ) from None
            raise

    def _record_block(
        self, tournament_id: int, games: Sequence[GameEntry], lease: str | None
    ) -> None:
        with self._session() as session:
            if lease is not None:
                runners.hold(session, tournament_id, lease)
            self._tournament(session, tournament_id)
            keys = [key for key, _, _, _ in games]
            seen: set[str] = set()
            for start in range(0, len(keys), 500):  # bounded IN lists
                seen.update(
                    session.scalars(
                        select(Game.key).where(
                            Game.tournament_id == tournament_id,
                            Game.key.in_(keys[start : start + 500]),
                        )
                    )
                )
            decks = dict(
                session.execute(
                    select(Deck.position, Deck.id).where(Deck.tournament_id == tournament_id)
                ).all()
            )
            rows: list[dict[str, Any]] = []
            for key, position, rotation, record in games:
                if key in seen:
                    continue
                seen.add(key)
                deck_id = None
                if position is not None:
                    if position not in decks:
                        raise StoreError(
                            f"tournament {tournament_id} has no deck at position {position}"
                        )
                    deck_id = decks[position]
                data = record.to_json()
                try:  # the same check on every database, before any driver sees the row
                    _to_json(data)
                except (TypeError, ValueError) as exc:
                    raise StoreError(
                        f"game {key!r}: record is not JSON-serialisable: {exc}"
                    ) from None
                rows.append(
                    {
                        "tournament_id": tournament_id,
                        "key": key,
                        "deck_id": deck_id,
                        "rotation": rotation,
                        "seats": data["seats"],
                        "winners": data["winners"],
                        "end_reason": data["end_reason"],
                        "record": data,
                        "times": data["times"],
                        "faults": data["faults"],
                    }
                )
            if rows:  # one multi-row insert: several times faster than one ORM flush a game
                session.execute(insert(Game), rows)
            self._tournament(session, tournament_id).updated = utcnow()

    def keyed_games(self, tournament_id: int) -> list[tuple[str, GameRecord]]:
        """The tournament's games as ``(key, record)``, in the order they were stored."""
        with self._session() as session:
            self._tournament(session, tournament_id)
            rows = session.execute(
                select(Game.key, Game.record)
                .where(Game.tournament_id == tournament_id)
                .order_by(Game.id)
            ).all()
        return [(key, GameRecord.from_json(record)) for key, record in rows]

    def stored_games(self, tournament_id: int) -> list[StoredGame]:
        """The tournament's games with their ids, keys, deck positions and rotations, in the
        order they were stored."""
        with self._session() as session:
            self._tournament(session, tournament_id)
            rows = session.execute(
                self._stored_rows().where(Game.tournament_id == tournament_id).order_by(Game.id)
            ).all()
        return [_stored_game(row) for row in rows]

    def game(self, game_id: int) -> tuple[int, StoredGame]:
        """The game with id ``game_id`` (as :meth:`stored_games` gives it) and the id of its
        tournament. Raises :class:`StoreError` when there is no such game."""
        with self._session() as session:
            row = session.execute(self._stored_rows().where(Game.id == game_id)).one_or_none()
        if row is None:
            raise StoreError(f"no game with id {game_id} in {_mask(self.url)!r}")
        return int(row.tournament_id), _stored_game(row)

    def games(self, tournament_id: int) -> list[GameRecord]:
        """The tournament's game records, rebuilt from JSON, in the order they were stored."""
        return [record for _, record in self.keyed_games(tournament_id)]

    # -- finding and exporting games -----------------------------------------------------------

    def entrant_names(self, names: Collection[str], tournament_id: int | None = None) -> list[str]:
        """The entrants that ``names`` stand for, sorted: an entrant of one of these names, or
        every entrant of a registered bot of one of these names (whatever its parameters), in
        tournament ``tournament_id`` or in any tournament."""
        query = select(Entrant.name).where(or_(Entrant.name.in_(names), Entrant.bot.in_(names)))
        if tournament_id is not None:
            query = query.where(Entrant.tournament_id == tournament_id)
        with self._session() as session:
            return sorted(set(session.scalars(query)))

    def count_games(self, query: GameQuery) -> int:
        """How many stored games ``query`` matches."""
        with self._session() as session:
            where = self._game_filter(query)
            return int(session.scalar(select(func.count(Game.id)).where(*where)) or 0)

    def find_games(self, query: GameQuery, limit: int | None = None) -> list[GameRow]:
        """The stored games ``query`` matches (at most ``limit``), filtered by the database:
        the latest tournament first, each tournament's games in the order they were stored."""
        with self._session() as session:
            select_ = (
                self._game_rows()
                .where(*self._game_filter(query))
                .order_by(Game.tournament_id.desc(), Game.id)
            )
            if limit is not None:
                select_ = select_.limit(limit)
            return [GameRow(*row) for row in session.execute(select_)]

    def iter_game_rows(self, tournament_id: int, batch: int = BATCH) -> Iterator[GameRow]:
        """Every game of tournament ``tournament_id`` as :meth:`find_games` lists it, in the
        order they were stored, read ``batch`` at a time (each batch in its own transaction),
        so that a tournament of any size streams."""
        self.status(tournament_id)  # no such tournament: StoreError before anything is yielded
        last = 0
        while True:
            with self._session() as session:
                rows = session.execute(
                    self._game_rows()
                    .where(Game.tournament_id == tournament_id, Game.id > last)
                    .order_by(Game.id)
                    .limit(batch)
                ).all()
            yield from (GameRow(*row) for row in rows)
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def iter_games(self, tournament_id: int, batch: int = BATCH) -> Iterator[StoredGame]:
        """Every game of tournament ``tournament_id`` with its record (as :meth:`stored_games`
        gives them, in the same order), read ``batch`` at a time like :meth:`iter_game_rows`."""
        self.status(tournament_id)
        last = 0
        while True:
            with self._session() as session:
                rows = session.execute(
                    self._stored_rows()
                    .where(Game.tournament_id == tournament_id, Game.id > last)
                    .order_by(Game.id)
                    .limit(batch)
                ).all()
            yield from (_stored_game(row) for row in rows)
            if len(rows) < batch:
                return
            last = rows[-1].id

    def games_of(
        self, tournament_ids: Collection[int], batch: int = BATCH
    ) -> Iterator[tuple[int, StoredGame]]:
        """Every game of the tournaments ``tournament_ids`` with its tournament's id, as
        :meth:`stored_games` gives them, in the order they were stored, read ``batch`` at a
        time (each batch in its own transaction)."""
        wanted = sorted(set(tournament_ids))
        if not wanted:
            return
        low, high = wanted[0], wanted[-1]
        chosen = set(wanted)
        last = 0
        while True:
            with self._session() as session:
                rows = session.execute(
                    self._stored_rows()
                    .where(Game.tournament_id.between(low, high), Game.id > last)
                    .order_by(Game.id)
                    .limit(batch)
                ).all()
            yield from (
                (row.tournament_id, _stored_game(row))
                for row in rows
                if row.tournament_id in chosen
            )
            if len(rows) < batch:
                return
            last = rows[-1].id

    @staticmethod
    def _stored_rows() -> Select[Any]:
        """The columns of a :class:`StoredGame` (read by :func:`_stored_game`) and the game's
        tournament."""
        return select(
            Game.tournament_id,
            Game.id,
            Game.key,
            Deck.position,
            Game.rotation,
            Game.created,
            Game.record,
        ).outerjoin(Deck, Game.deck_id == Deck.id)

    @staticmethod
    def _game_rows() -> Select[Any]:
        """The columns of a :class:`GameRow`, with the deck's cards."""
        return select(
            Game.id,
            Game.tournament_id,
            Game.key,
            Deck.position,
            Deck.cards,
            Game.rotation,
            Game.seats,
            Game.winners,
            Game.end_reason,
            Game.faults,
            Game.times,
            Game.created,
        ).outerjoin(Deck, Game.deck_id == Deck.id)

    def _game_filter(self, query: GameQuery) -> list[ColumnElement[bool]]:
        """The conditions of ``query`` on the ``games`` table, in this database's SQL."""
        dialect = self.engine.dialect.name
        where: list[ColumnElement[bool]] = []
        if query.tournament is not None:
            where.append(Game.tournament_id == query.tournament)
        if query.tournaments:
            where.append(Game.tournament_id.in_(sorted(query.tournaments)))
        if query.seated:
            where.append(_seats_one_of(dialect, query.seated))
        if query.against:
            if not query.seated.isdisjoint(query.against):
                raise StoreError("a game cannot seat the same entrant on both sides")
            where.append(_seats_one_of(dialect, query.against))
        if query.faulted:
            where.append(_has_elements(dialect, Game.faults))
        return where

    # -- what bots wrote -------------------------------------------------------------------

    def record_output(self, tournament_id: int, output: dict[str, str]) -> None:
        """Keep what each entrant's bot wrote during a block (entrant name to text), shown as
        :func:`~arena.errors.printable` (lines and tabs kept), and only the latest
        :data:`OUTPUT_KEPT` blocks' worth per entrant name, over every tournament (a bot that
        writes all it may in every block of a never-ending ladder stays bounded)."""
        if not output:
            return
        with self._session() as session:
            for entrant, text in output.items():
                shown = printable(text, keep="\n\t")
                session.add(BotOutput(tournament_id=tournament_id, entrant=entrant, text=shown))
                stale = session.scalars(
                    select(BotOutput.id)
                    .where(BotOutput.entrant == entrant)
                    .order_by(BotOutput.id.desc())
                    .offset(OUTPUT_KEPT)
                ).all()
                if stale:
                    session.execute(delete(BotOutput).where(BotOutput.id.in_(stale)))

    def bot_output(
        self, seats: Collection[tuple[int, str]], limit: int = 20
    ) -> list[tuple[int, str, datetime, str]]:
        """What the entrants ``seats`` (``(tournament id, entrant name)``) wrote, the latest
        ``limit`` blocks' worth, newest first: ``(tournament id, entrant, when, text)``."""
        if not seats:
            return []
        wanted = set(seats)
        tournaments = sorted({tid for tid, _ in wanted})
        with self._session() as session:
            rows = session.execute(
                select(
                    BotOutput.tournament_id, BotOutput.entrant, BotOutput.created, BotOutput.text
                )
                .where(BotOutput.tournament_id.in_(tournaments))
                .order_by(BotOutput.id.desc())
            ).all()
        found = [(int(t), str(e), c, str(x)) for t, e, c, x in rows if (t, e) in wanted]
        return found[:limit]

    # -- ratings ------------------------------------------------------------------------------

    def save_ratings(self, tournament_id: int, ratings_json: Any, games: int) -> int:
        """Store a snapshot of ratings computed from ``games`` games; returns its id."""
        with self._session() as session:
            self._tournament(session, tournament_id)
            snapshot = RatingSnapshot(
                tournament_id=tournament_id, games=games, ratings=ratings_json
            )
            session.add(snapshot)
            session.flush()
            return snapshot.id

    def latest_ratings(self, tournament_id: int) -> tuple[int, Any] | None:
        """The latest snapshot's ``(games, ratings)``, or None when there is none."""
        with self._session() as session:
            row = session.execute(
                select(RatingSnapshot.games, RatingSnapshot.ratings)
                .where(RatingSnapshot.tournament_id == tournament_id)
                .order_by(RatingSnapshot.id.desc())
                .limit(1)
            ).one_or_none()
        return None if row is None else (row[0], row[1])


def _stored_game(row: Any) -> StoredGame:
    """A row of :meth:`Store._stored_rows` as a :class:`StoredGame`."""
    return StoredGame(
        row.id, row.key, row.position, row.rotation, row.created, GameRecord.from_json(row.record)
    )


def _seats_one_of(dialect: str, names: Collection[str]) -> ColumnElement[bool]:
    """A game seats one of the entrants ``names``: a search of the JSON list ``games.seats``
    in the database (SQLite's ``json_each``, PostgreSQL's ``json_array_elements_text``; on
    other databases a match of the quoted name in the list's text)."""
    if dialect == "sqlite":
        seat = func.json_each(Game.seats).table_valued("value").alias("seat")
    elif dialect == "postgresql":
        seat = (
            func.json_array_elements_text(Game.seats).table_valued("value").render_derived("seat")
        )
    else:
        quoted = [_to_json(name) for name in names]
        escaped = [q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for q in quoted]
        return or_(*(cast(Game.seats, Text).like(f"%{e}%", escape="\\") for e in escaped))
    return exists(select(literal(1)).select_from(seat).where(seat.c.value.in_(list(names))))


def _has_elements(dialect: str, column: Any) -> ColumnElement[bool]:
    """The JSON list in ``column`` is not empty."""
    if dialect in ("sqlite", "postgresql"):
        return func.json_array_length(column) > 0
    return cast(column, Text) != "[]"


def _to_json(value: Any) -> str:
    """JSON text of ``value`` (orjson: several times faster than the standard library on game
    records, both ways: engines read JSON columns with ``orjson.loads``; raises ``TypeError``
    for what JSON cannot hold)."""
    return orjson.dumps(value).decode()


def _check_directory(database: str, shown: str) -> None:
    """Raise :class:`StoreError` naming the directory when SQLite file ``database`` would be
    made in a directory that does not exist (SQLite says only "unable to open database file")."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    directory = Path(database).expanduser().absolute().parent
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise StoreError(f"cannot make database {shown!r}: {what}: {directory}")


def _sqlite_read_only(database: str, shown: str) -> Engine:
    """An engine reading the existing SQLite file ``database`` without writing anything.

    It opens the file with SQLite's ``mode=ro``, which reads a database in write-ahead-log mode
    consistently while another process writes it (SQLite may create the ``-wal`` and ``-shm``
    files beside it to do so, as any reader does). Where that cannot work (a directory this
    process cannot write, so no ``-shm`` can be made) and no ``-wal`` file is there, every
    committed transaction is in the file itself and it is read as immutable; with a ``-wal``
    file it cannot read, the error says so."""
    import sqlite3
    import urllib.parse

    from sqlalchemy.pool import NullPool

    if database in ("", ":memory:") or database.startswith("file:"):
        raise StoreError(f"no database at {shown!r} (name a database file to read)")
    path = Path(database).absolute()
    if not path.is_file():
        raise StoreError(f"no database at {path}")
    uri = "file:" + urllib.parse.quote(str(path))

    def connect(flags: str) -> sqlite3.Connection:
        connection = sqlite3.connect(
            f"{uri}?{flags}", uri=True, timeout=SQLITE_BUSY_SECONDS, check_same_thread=False
        )
        connection.execute("PRAGMA query_only=ON")
        return connection

    flags = "mode=ro"
    try:
        probe = connect(flags)
        try:
            probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            probe.close()
    except sqlite3.DatabaseError as exc:
        log = Path(f"{path}-wal")
        if log.exists() or os.access(path.parent, os.W_OK):
            reason = f"{exc}" if not log.exists() else f"{exc} (with its write-ahead log {log})"
            raise StoreError(f"cannot read database {path}: {reason}") from None
        flags = "immutable=1"
    return create_engine(
        "sqlite://",
        creator=lambda: connect(flags),
        poolclass=NullPool,
        json_serializer=_to_json,
        json_deserializer=orjson.loads,
    )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Write-ahead logging (readers do not block the writer; a commit survives the process
    being killed, though not a power cut), a busy wait, foreign keys."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_SECONDS * 1000)}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe when a process is killed
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """Put the database in write-ahead logging once. Switching needs the file to itself, and
    where another connection is switching it at the same moment (two commands opening a new
    file at once) SQLite answers "database is locked" at once, without its busy wait: so it
    is tried again until :data:`SQLITE_BUSY_SECONDS` have passed (seen on a loaded machine)."""
    import sqlite3

    deadline = time.monotonic() + SQLITE_BUSY_SECONDS
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
