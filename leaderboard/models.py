"""SQLAlchemy 2.0 models of the arena's database: tournaments, entrants, decks, each tournament's
secret seed, the runner holding each tournament, games, how bots ran, ratings.

Importing this module creates no engine and touches no database; see :mod:`leaderboard.store`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: The states a tournament can be in.
STATUSES = ("running", "finished", "interrupted")


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Base class of the arena's tables."""


class Tournament(Base):
    """One tournament: its configuration, seed, rules and state.

    ``fingerprint`` is a hash of everything that decides the games' records (configuration,
    seed, variant, players per table, entrants with their versions, decks) as the tournament
    was created; starting a tournament with a fingerprint already stored resumes that
    tournament. Entrants added later are listed in the configuration (``additions``) and do not
    change the fingerprint.
    """

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    configuration: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Seeds run to 2**63 - 1 (``--seed``): a 32-bit INTEGER on PostgreSQL would refuse most.
    seed: Mapped[int] = mapped_column(BigInteger)
    variant: Mapped[str] = mapped_column(String(40))
    players: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20), default="running")
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )
    arena_version: Mapped[str] = mapped_column(String(40))

    entrants: Mapped[list[Entrant]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="Entrant.id"
    )
    decks: Mapped[list[Deck]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="Deck.position"
    )
    secret: Mapped[TournamentSecret | None] = relationship(
        back_populates="tournament", cascade="all, delete-orphan"
    )


class Entrant(Base):
    """A bot taking part in a tournament; ``name`` is its canonical bot spec."""

    __tablename__ = "entrants"
    __table_args__ = (UniqueConstraint("tournament_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(400))
    bot: Mapped[str] = mapped_column(String(200))
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON)
    plugin: Mapped[str] = mapped_column(String(200))
    distribution: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(80))

    tournament: Mapped[Tournament] = relationship(back_populates="entrants")


class Deck(Base):
    """One deck order of a tournament: ``cards`` is the card values from the top, as digits."""

    __tablename__ = "decks"
    __table_args__ = (UniqueConstraint("tournament_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    cards: Mapped[str] = mapped_column(String(32))

    tournament: Mapped[Tournament] = relationship(back_populates="decks")


class TournamentSecret(Base):
    """A tournament's secret seed, as decimal digits: every game's seed, and so every seed a bot
    is given, derives from it, and so do the decks of a secret deck set (``balanced:N``,
    ``random:N``). A table of its own rather than a column, so that ``create_all`` adds it to a
    database made before it existed; its name is from when only secret deck sets had a secret.
    A tournament without a row here was created before tournaments had secrets: its games' seeds
    derive from its public seed, and its decks are public."""

    __tablename__ = "deck_secrets"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    seed: Mapped[str] = mapped_column(String(80))

    tournament: Mapped[Tournament] = relationship(back_populates="secret")


class Runner(Base):
    """The runner holding a tournament: at most one row per tournament, a lease that its runner
    renews while it runs and deletes when it stops (``docs/tournaments.md``). ``since``,
    ``expires`` are seconds since the epoch by the database's clock (so that runners on
    machines whose clocks differ agree); ``seconds`` is how long a renewal extends it;
    ``token`` is the holder's secret proof that it still holds the lease; ``process`` names the
    holder's process for good (:func:`leaderboard.runners.this_process`; null where it could not
    be told), so that a runner on the same machine sees that it is gone. A table of its own,
    so that ``create_all`` adds it to an older database; ``process`` came later and
    :meth:`leaderboard.store.Store.create_schema` adds it to an older ``runners`` table."""

    __tablename__ = "runners"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    holder: Mapped[str] = mapped_column(String(300))
    token: Mapped[str] = mapped_column(String(64))
    since: Mapped[float] = mapped_column(Float)
    expires: Mapped[float] = mapped_column(Float)
    seconds: Mapped[float] = mapped_column(Float)
    process: Mapped[str | None] = mapped_column(String(200), nullable=True)


class Game(Base):
    """One finished round: its schedule key, seats, result and the full record for replay."""

    __tablename__ = "games"
    __table_args__ = (UniqueConstraint("tournament_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    key: Mapped[str] = mapped_column(String(400))
    deck_id: Mapped[int | None] = mapped_column(ForeignKey("decks.id"), nullable=True)
    rotation: Mapped[int] = mapped_column(Integer)
    seats: Mapped[list[Any]] = mapped_column(JSON)
    winners: Mapped[list[Any]] = mapped_column(JSON)
    end_reason: Mapped[str] = mapped_column(String(40))
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    times: Mapped[list[Any]] = mapped_column(JSON)
    faults: Mapped[list[Any]] = mapped_column(JSON)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunSandbox(Base):
    """How bots ran in one run of a tournament (each start or resume): the sandbox, the limits
    of each bot and what enforced them (:meth:`arena.hosting.sandbox.Sandbox.enforcement`). A table
    of its own, so that ``create_all`` adds it to an older database."""

    __tablename__ = "run_sandboxes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    sandbox: Mapped[dict[str, Any]] = mapped_column(JSON)


class BotOutput(Base):
    """What an entrant's bot wrote to stdout or stderr during one block of a tournament's games
    (the latest bytes of it; control characters shown as escapes)."""

    __tablename__ = "bot_output"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    entrant: Mapped[str] = mapped_column(String(400), index=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    text: Mapped[str] = mapped_column(Text)


class RatingSnapshot(Base):
    """Ratings of a tournament's entrants as computed from ``games`` games."""

    __tablename__ = "rating_snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    games: Mapped[int] = mapped_column(Integer)
    ratings: Mapped[Any] = mapped_column(JSON)


class Participant(Base):
    """Someone a competition server (``arena serve``) accepts submissions from: a name and the
    SHA-256 of the token the organizer handed out (the token itself is never stored)."""

    __tablename__ = "participants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class BotOwner(Base):
    """Which participant a submitted distribution (and so every bot name it registers) belongs
    to: the first one that submitted it."""

    __tablename__ = "bot_owners"

    distribution: Mapped[str] = mapped_column(String(200), primary_key=True)
    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id"), index=True)
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Upload(Base):
    """One package uploaded to a competition server and what became of it: ``status`` is one
    of :data:`UPLOAD_STATUSES`; ``reason`` says why it failed; ``log`` holds the build's and the
    checks' output (shown to its participant only)."""

    __tablename__ = "uploads"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id"), index=True)
    filename: Mapped[str] = mapped_column(String(300))
    size: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    reason: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    log: Mapped[str] = mapped_column(Text, default="")
    distribution: Mapped[str | None] = mapped_column(String(200), nullable=True)
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    bots: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    updated: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )


#: What an upload goes through: waiting, being built in the sandbox, its bots being checked
#: (``arena check``), the participant's ranked bot playing its placement games in the ladder
#: (where it is in the upload), then ``ranked`` (in the competition: its participant's ranked
#: bot, or bots that play no rated game); or ``failed`` with its reason; ``withdrawn`` by its
#: participant (out of the ladder, its games kept).
UPLOAD_STATUSES = ("queued", "building", "checking", "placing", "ranked", "failed", "withdrawn")


class RankedChoice(Base):
    """Which of its bots a participant of a competition server chose to speak for it in rated
    play (placement, rated rounds, the final): a bot name (its latest version plays); without
    a choice, the first bot of the participant's latest upload does."""

    __tablename__ = "ranked_choices"

    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id"), primary_key=True)
    bot: Mapped[str] = mapped_column(String(200))
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ParticipantRemoval(Base):
    """A participant the organizer removed (``arena serve participants remove``): its token no
    longer works, its uploads are withdrawn and its name is free again; its games stay."""

    __tablename__ = "participant_removals"

    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id"), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    removed: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CompetitionSchedule(Base):
    """When a competition server stops taking uploads by itself (``closes_at``) and the line
    its front page announces."""

    __tablename__ = "competition_schedules"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    announcement: Mapped[str] = mapped_column(String(500), default="")


class Competition(Base):
    """A competition server's state, by the competition's name: ``frozen`` (no new uploads
    accepted), ``final`` (its ladder stopped for the final round-robin) and that tournament's
    id once started."""

    __tablename__ = "competitions"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    frozen: Mapped[bool] = mapped_column(Boolean, default=False)
    final: Mapped[bool] = mapped_column(Boolean, default=False)
    final_tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="SET NULL"), nullable=True
    )
    updated: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )


class LadderSeat(Base):
    """Which ladder player (``NAME@VERSION`` for a submitted bot, else the entrant's name) an
    entrant of a ladder tournament is."""

    __tablename__ = "ladder_seats"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    entrant: Mapped[str] = mapped_column(String(400), primary_key=True)
    player: Mapped[str] = mapped_column(String(400), index=True)


class LadderSnapshot(Base):
    """A competition's standings as fit over its first ``games`` ladder games (every game
    stored up to id ``through_game`` was looked at): the leaderboard's rows, the head-to-head
    records and the fault summaries, as :meth:`~leaderboard.standings.Standings.to_dict` gives
    them."""

    __tablename__ = "ladder_snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    competition: Mapped[str] = mapped_column(String(200), index=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    games: Mapped[int] = mapped_column(Integer)
    through_game: Mapped[int] = mapped_column(Integer)
    standings: Mapped[Any] = mapped_column(JSON)
    pairs: Mapped[Any] = mapped_column(JSON)
    faults: Mapped[Any] = mapped_column(JSON)
