"""The organizer's class list (``arena serve participants``): who is in, what each has
uploaded and where its ranked bot stands, and removing a participant with its bots."""

from __future__ import annotations

import contextlib
from typing import Any

from arena.hosting import submissions
from arena.hosting.submissions import SubmissionError
from leaderboard import competition as C
from leaderboard import participants as P
from leaderboard.store import Store

#: Upload statuses a removal withdraws: in the competition, or still to be built or checked.
WITHDRAWN_ON_REMOVAL = ("queued", "building", "checking", "placing", "ranked")


def remove(store: Store, name: str) -> int:
    """Remove participant ``name`` (:func:`leaderboard.participants.remove_participant`) and
    withdraw every upload of its still in the competition or on its way there: its bots leave
    the ladder, their games stay. Returns how many uploads were withdrawn."""
    found = P.find_participant(store, name)
    mine = [u for u in P.uploads(store, found.id) if u.status in WITHDRAWN_ON_REMOVAL]
    P.remove_participant(store, name)
    kept = submissions.Store()
    for upload in mine:
        if upload.distribution and upload.version is not None:
            # one never stored (its build failed or has not ended) has nothing to take out
            with contextlib.suppress(SubmissionError):
                kept.withdraw(upload.distribution, upload.version)
        P.set_upload(store, upload.id, "withdrawn")
    return len(mine)


def roster(store: Store, competition: str) -> list[dict[str, Any]]:
    """Each participant (not removed), in the order they were added: ``name``, ``added``,
    ``uploads`` (how many), ``latest_status`` (of its latest upload, ``None`` before any),
    ``ranked`` (its voice, ``NAME@VERSION``, or ``None``) and that player's ``rank`` in the
    latest standings (``None`` until it has one)."""
    voices = P.voices(store)
    latest = C.latest_snapshot(store, competition)
    ranks = {} if latest is None else {str(r["bot"]): r.get("rank") for r in latest.standings}
    mine: dict[int, list[P.UploadInfo]] = {}
    for upload in P.uploads(store):
        mine.setdefault(upload.participant_id, []).append(upload)
    rows = []
    for p in P.participants(store, removed=False):
        uploads = mine.get(p.id, [])
        voice = voices.get(p.id)
        rows.append(
            {
                "name": p.name,
                "added": p.created.isoformat(),
                "uploads": len(uploads),
                "latest_status": uploads[-1].status if uploads else None,
                "ranked": None if voice is None else voice.player,
                "rank": None if voice is None else ranks.get(voice.player),
            }
        )
    return rows
