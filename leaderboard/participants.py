"""A competition server's people and uploads, kept in the arena's database
(:mod:`leaderboard.store`).

A participant is a name and a token: the organizer adds it (``arena serve participants add``),
the token is shown once, and only its SHA-256 is stored (tokens are 256 random bits, so a fast
hash is enough: nothing to guess from it). A submitted distribution belongs to the participant
that first submitted it (:func:`claim`). Each upload is a row that moves through
:data:`~leaderboard.models.UPLOAD_STATUSES`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import func, select, update

from arena.hosting.names import canonical, skeleton
from leaderboard.models import (
    UPLOAD_STATUSES,
    BotOwner,
    Participant,
    ParticipantRemoval,
    RankedChoice,
    Upload,
    utcnow,
)
from leaderboard.store import Store, StoreError

#: The most characters of build and check output an upload keeps.
LOG_CHARS = 200_000
#: Statuses of an upload whose bots are in the competition (built, checked, not withdrawn).
LIVE = ("placing", "ranked")


class ParticipantError(StoreError):
    """A participant that cannot be added, or a distribution that belongs to someone else."""


def token_hash(token: str) -> str:
    """What is stored of ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ParticipantInfo:
    """A participant as the server sees it."""

    id: int
    name: str
    created: dt.datetime


@dataclass(frozen=True)
class UploadInfo:
    """One upload and what became of it."""

    id: int
    participant: str
    participant_id: int
    filename: str
    size: int
    status: str
    reason: str | None
    log: str
    distribution: str | None
    version: int | None
    bots: list[str]
    created: dt.datetime
    updated: dt.datetime

    @property
    def players(self) -> list[str]:
        """Its bots as ladder players, ``NAME@VERSION`` (none before it is built)."""
        return [] if self.version is None else [f"{b}@{self.version}" for b in self.bots]

    def to_json(self, with_log: bool) -> dict[str, Any]:
        """The upload for the HTTP API (its log only for its own participant)."""
        out: dict[str, Any] = {
            "id": self.id,
            "participant": self.participant,
            "filename": self.filename,
            "size": self.size,
            "status": self.status,
            "reason": self.reason,
            "distribution": self.distribution,
            "version": self.version,
            "bots": self.bots,
            "created": self.created.isoformat(timespec="seconds"),
            "updated": self.updated.isoformat(timespec="seconds"),
        }
        if with_log:
            out["log"] = self.log
        return out


def _clean_name(name: str) -> str:
    """``name`` stripped, if it can name a participant (1 to 100 printable ASCII characters);
    else a :class:`ParticipantError`."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 100 or not cleaned.isascii() or not cleaned.isprintable():
        raise ParticipantError(
            f"bad participant name {name[:100]!r}: 1 to 100 printable ASCII characters"
        )
    return cleaned


def _refuse_taken(cleaned: str, names: Iterable[str]) -> None:
    """A :class:`ParticipantError` if ``cleaned`` is one of ``names`` or can be mistaken for
    one (:func:`~arena.hosting.names.skeleton`)."""
    for other in names:
        if other == cleaned:
            raise ParticipantError(f"a participant called {cleaned!r} exists already")
        if skeleton(other) == skeleton(cleaned):
            raise ParticipantError(
                f"participant name {cleaned!r} can be mistaken for participant {other!r}: "
                "choose another name"
            )


def _present_names(session: Any, besides: int | None = None) -> list[str]:
    """The names of the participants not removed (but ``besides``)."""
    removed = select(ParticipantRemoval.participant_id)
    query = select(Participant.name).where(Participant.id.not_in(removed))
    if besides is not None:
        query = query.where(Participant.id != besides)
    return list(session.scalars(query))


def add_participants(store: Store, names: Sequence[str]) -> list[tuple[str, str]]:
    """Add a participant for each of ``names`` (each 1 to 100 printable ASCII characters, none
    that can be mistaken for another participant's or another of ``names``:
    :func:`~arena.hosting.names.skeleton`), all or none; returns each one's name and token
    (shown once, never stored)."""
    cleaned = [_clean_name(name) for name in names]
    store.create_schema()
    added: list[tuple[str, str]] = []
    with store.transaction() as session:
        taken = _present_names(session)
        for name in cleaned:
            _refuse_taken(name, taken)
            token = secrets.token_urlsafe(32)
            session.add(Participant(name=name, token_hash=token_hash(token)))
            taken.append(name)
            added.append((name, token))
    return added


def add_participant(store: Store, name: str) -> str:
    """Add a participant called ``name`` (as :func:`add_participants`); returns its token."""
    return add_participants(store, [name])[0][1]


def _named(session: Any, name: str) -> Participant:
    """The participant (not removed) called ``name``; else a :class:`ParticipantError`."""
    removed = select(ParticipantRemoval.participant_id)
    row = session.scalar(
        select(Participant).where(Participant.name == name.strip(), Participant.id.not_in(removed))
    )
    if row is None:
        raise ParticipantError(f"no participant called {name.strip()[:100]!r}")
    return cast(Participant, row)


def find_participant(store: Store, name: str) -> ParticipantInfo:
    """The participant (not removed) called ``name``; else a :class:`ParticipantError`."""
    store.create_schema()
    with store.transaction() as session:
        row = _named(session, name)
        return ParticipantInfo(row.id, row.name, row.created)


def reset_token(store: Store, name: str) -> str:
    """Give participant ``name`` a new token (the old one stops working); returns it."""
    token = secrets.token_urlsafe(32)
    store.create_schema()
    with store.transaction() as session:
        _named(session, name).token_hash = token_hash(token)
    return token


def rename_participant(store: Store, name: str, new: str) -> None:
    """Call participant ``name`` ``new`` (checked as a new participant's name is)."""
    cleaned = _clean_name(new)
    store.create_schema()
    with store.transaction() as session:
        row = _named(session, name)
        _refuse_taken(cleaned, _present_names(session, besides=row.id))
        row.name = cleaned


def remove_participant(store: Store, name: str) -> ParticipantInfo:
    """Remove participant ``name``: its token stops working, its name is free again (the row
    keeps it with a mark, ``NAME (removed #ID)``, so that its games still say whose bots played)
    and it is listed no more. Withdrawing its uploads is the caller's (they leave the
    submissions store too). Returns it as it was."""
    store.create_schema()
    with store.transaction() as session:
        row = _named(session, name)
        found = ParticipantInfo(row.id, row.name, row.created)
        session.add(ParticipantRemoval(participant_id=row.id, name=row.name))
        row.name = f"{row.name[:80]} (removed #{row.id})"
        row.token_hash = token_hash(secrets.token_urlsafe(32))
    return found


def removed_participants(store: Store) -> set[int]:
    """The ids of the participants removed."""
    with store.transaction() as session:
        return set(session.scalars(select(ParticipantRemoval.participant_id)))


def participants(store: Store, removed: bool = True) -> list[ParticipantInfo]:
    """Every participant, in the order they were added (without ``removed``, those not
    removed)."""
    store.create_schema()
    with store.transaction() as session:
        query = select(Participant).order_by(Participant.id)
        if not removed:
            query = query.where(Participant.id.not_in(select(ParticipantRemoval.participant_id)))
        rows = session.scalars(query).all()
        return [ParticipantInfo(p.id, p.name, p.created) for p in rows]


def by_token(store: Store, token: str) -> ParticipantInfo | None:
    """The participant holding ``token``, if any."""
    with store.transaction() as session:
        p = session.scalar(select(Participant).where(Participant.token_hash == token_hash(token)))
        return None if p is None else ParticipantInfo(p.id, p.name, p.created)


def claim(store: Store, distribution: str, participant_id: int) -> None:
    """Make ``distribution`` (a canonical name) ``participant_id``'s if nobody holds it nor
    another participant holds one it can be mistaken for
    (:func:`~arena.hosting.names.skeleton`); a :class:`ParticipantError` naming the holder
    otherwise."""
    with store.transaction() as session:
        owner = session.get(BotOwner, distribution)
        if owner is None:
            others = session.scalars(
                select(BotOwner).where(BotOwner.participant_id != participant_id)
            )
            for other in others:
                if skeleton(other.distribution) == skeleton(distribution):
                    holder = session.get(Participant, other.participant_id)
                    raise ParticipantError(
                        f"{distribution} can be mistaken for {other.distribution}, which belongs "
                        f"to participant {holder.name if holder else other.participant_id!r}: "
                        "choose another name"
                    )
            session.add(BotOwner(distribution=distribution, participant_id=participant_id))
            return
        if owner.participant_id != participant_id:
            holder = session.get(Participant, owner.participant_id)
            raise ParticipantError(
                f"{distribution} belongs to participant "
                f"{holder.name if holder else owner.participant_id!r}: choose another name"
            )


class UploadLimitError(ParticipantError):
    """A participant has made as many uploads as it may in the last hour."""


def add_upload(
    store: Store,
    participant_id: int,
    filename: str,
    size: int,
    per_hour: int | None = None,
) -> int:
    """Record a new upload (``queued``); returns its id. With ``per_hour``, counted against the
    participant's uploads of the last hour in the same transaction, after taking a write lock on
    the participant (a row lock in PostgreSQL, the database's in SQLite), so that uploads sent
    at once are counted one after another: :class:`UploadLimitError` past the limit."""
    with store.transaction() as session:
        # a write first: whoever counts next waits for this transaction to end
        session.execute(
            update(Participant).where(Participant.id == participant_id).values(id=participant_id)
        )
        if per_hour is not None:
            since = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
            made = session.scalar(
                select(func.count(Upload.id)).where(
                    Upload.participant_id == participant_id, Upload.created >= since
                )
            )
            if int(made or 0) >= per_hour:
                raise UploadLimitError(f"at most {per_hour} uploads per participant per hour")
        row = Upload(participant_id=participant_id, filename=filename, size=size, log="", bots=[])
        session.add(row)
        session.flush()
        return int(row.id)


def set_upload(
    store: Store, upload_id: int, status: str, *, only_from: str | None = None, **fields: Any
) -> bool:
    """Move upload ``upload_id`` to ``status`` and set ``fields`` (``reason``, ``log``,
    ``distribution``, ``version``, ``bots``); a log is cut to :data:`LOG_CHARS`. With
    ``only_from``, only if the upload is in that status; whether it moved."""
    if status not in UPLOAD_STATUSES:
        raise ValueError(f"unknown upload status {status!r}")
    if "log" in fields:
        fields["log"] = fields["log"][-LOG_CHARS:]
    with store.transaction() as session:
        query = update(Upload).where(Upload.id == upload_id)
        if only_from is not None:
            query = query.where(Upload.status == only_from)
        moved = session.execute(query.values(status=status, updated=utcnow(), **fields))
        return bool(getattr(moved, "rowcount", 0))


def uploads(
    store: Store, participant_id: int | None = None, status: str | None = None
) -> list[UploadInfo]:
    """Uploads, oldest first: all, one participant's, or those in one ``status``."""
    query = select(Upload, Participant.name).join(Participant).order_by(Upload.id)
    if participant_id is not None:
        query = query.where(Upload.participant_id == participant_id)
    if status is not None:
        query = query.where(Upload.status == status)
    with store.transaction() as session:
        return [_info(u, name) for u, name in session.execute(query).all()]


def upload(store: Store, upload_id: int) -> UploadInfo | None:
    """Upload ``upload_id``, if it exists."""
    with store.transaction() as session:
        found = session.execute(
            select(Upload, Participant.name).join(Participant).where(Upload.id == upload_id)
        ).first()
        return None if found is None else _info(*found)


def uploads_since(store: Store, participant_id: int, since: dt.datetime) -> int:
    """How many uploads ``participant_id`` made since ``since``."""
    with store.transaction() as session:
        count = session.scalar(
            select(func.count(Upload.id)).where(
                Upload.participant_id == participant_id, Upload.created >= since
            )
        )
        return int(count or 0)


def requeue_unfinished(store: Store) -> int:
    """Put every upload a stopped server left ``building`` back in the queue (one left
    ``checking`` has its version stored: it stays, to be checked again, not built again);
    returns how many."""
    with store.transaction() as session:
        result = session.execute(
            update(Upload)
            .where(Upload.status == "building")
            .values(status="queued", updated=utcnow())
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]


def _info(row: Upload, participant: str) -> UploadInfo:
    return UploadInfo(
        id=int(row.id),
        participant=participant,
        participant_id=int(row.participant_id),
        filename=row.filename,
        size=int(row.size),
        status=row.status,
        reason=row.reason,
        log=row.log or "",
        distribution=row.distribution,
        version=row.version,
        bots=list(row.bots or []),
        created=_aware(row.created),
        updated=_aware(row.updated),
    )


def _aware(when: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes (stored in UTC): make them aware."""
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


# --- one participant, one voice --------------------------------------------------------------


@dataclass(frozen=True)
class Voice:
    """The one bot that speaks for a participant in rated play: ``bot`` of its upload
    ``upload_id``, at ``version``; ``chosen`` when the participant chose it (else it is the
    first bot of its latest upload)."""

    participant: str
    participant_id: int
    upload_id: int
    bot: str
    version: int
    chosen: bool

    @property
    def player(self) -> str:
        """The ladder player it is, ``NAME@VERSION``."""
        return f"{self.bot}@{self.version}"

    def to_json(self) -> dict[str, Any]:
        """For the HTTP API."""
        return {
            "participant": self.participant,
            "bot": self.bot,
            "version": self.version,
            "player": self.player,
            "upload": self.upload_id,
            "chosen": self.chosen,
        }


def voices(store: Store) -> dict[int, Voice]:
    """Each participant's voice (by participant id), among the bots of its uploads in the
    competition (:data:`LIVE`): the latest version of the bot it chose, else the first bot of
    its latest upload. Participants with no such upload have none."""
    live: dict[int, list[UploadInfo]] = {}
    for found in uploads(store):
        if found.status in LIVE and found.version is not None and found.bots:
            live.setdefault(found.participant_id, []).append(found)
    choices = ranked_choices(store)
    out: dict[int, Voice] = {}
    for participant_id, mine in live.items():
        chosen = choices.get(participant_id)
        picked = None
        if chosen is not None:
            matching = [(u, b) for u in mine for b in u.bots if canonical(b) == canonical(chosen)]
            picked = matching[-1] if matching else None
        upload_of, bot = picked if picked is not None else (mine[-1], mine[-1].bots[0])
        assert upload_of.version is not None
        out[participant_id] = Voice(
            upload_of.participant,
            participant_id,
            upload_of.id,
            bot,
            upload_of.version,
            picked is not None,
        )
    return out


def ranked_choices(store: Store) -> dict[int, str]:
    """The bot each participant chose to rank (by participant id), where it chose one."""
    with store.transaction() as session:
        return {
            int(pid): str(bot)
            for pid, bot in session.execute(select(RankedChoice.participant_id, RankedChoice.bot))
        }


def choose_ranked(store: Store, participant_id: int, bot: str) -> Voice:
    """Make ``bot`` (a name of one of the participant's bots in the competition; its latest
    version plays) the one that speaks for ``participant_id`` in rated play; its new voice. A
    :class:`ParticipantError` (one line) for a name that is none of its bots."""
    mine = {
        canonical(b): b
        for u in uploads(store, participant_id)
        if u.status in LIVE and u.version is not None
        for b in u.bots
    }
    name = mine.get(canonical(bot))
    if name is None:
        known = ", ".join(sorted(mine.values())) or "none yet"
        raise ParticipantError(
            f"{bot[:100]!r} is not one of your bots in the competition ({known})"
        )
    with store.transaction() as session:
        row = session.get(RankedChoice, participant_id)
        if row is None:
            session.add(RankedChoice(participant_id=participant_id, bot=name))
        else:
            row.bot = name
            row.since = utcnow()
    return voices(store)[participant_id]


def owners(store: Store) -> dict[str, int]:
    """The participant (its id) of every submitted bot that played or may play, by ladder
    player ``NAME@VERSION``: what tells a game between one participant's bots."""
    return {player: u.participant_id for u in uploads(store) for player in u.players}


def distribution_owners(store: Store) -> dict[str, str]:
    """The participant (its name) that submitted each distribution (by its canonical name):
    the submission owners ``arena tournament --teams owners`` plays by."""
    with store.transaction() as session:
        rows = session.execute(
            select(BotOwner.distribution, Participant.name).join(
                Participant, Participant.id == BotOwner.participant_id
            )
        ).all()
    return {distribution: name for distribution, name in rows}
