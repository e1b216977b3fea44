"""Who sees what of a bot's private output on the competition server (docs/serve.md, "Private
output"): the one place that decides it, for every page and call.

A bot's private output is what it said rather than what it did: its faults' messages (an
exception's text and where it was raised, the last output of a process that ended, a limit's
figures), what it wrote to stdout and stderr, and its upload's build and check log and failure
reason. All of it is its own participant's to read (a request carrying that participant's
token); anyone else sees a fault's kind, seat and move, with
:data:`~arena.referee.records.HIDDEN_MESSAGE` for its message. The arena's own bots belong to
no participant: their messages are shown to nobody. What the server says of a failed process
(``/api/health``) never quotes it (:meth:`~arena.serve.background.Background.failed`), and the
final report is written without any message (``arena report --no-fault-messages``).

Every route of the server is listed in :data:`CHANNELS` with how it keeps to this; a route
missing there fails the tests, so that a new one is looked at before it is served.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from arena.referee.records import HIDDEN_MESSAGE
from arena.serve.ladder import entrant_players
from leaderboard import participants as P
from leaderboard.store import Store, StoredGame

#: Every route of the server (its path as routed) and what of a bot's private output it may
#: carry, and how that is kept to the bot's participant.
CHANNELS: dict[str, str] = {
    "/": "the leaderboard: fault counts only",
    "/api/leaderboard": "the leaderboard: fault counts only",
    "/results.csv": "the results to grade: participant, bot, standing and status, no fault",
    "/api/health": "failures of the ladder and of the refit as one line each, never what the "
    "failed process wrote (that goes to the server's log)",
    "/bots/{name}": "a bot's faults by kind, and its examples' messages as :func:`faults` "
    "gives them to nobody; its uploads as :func:`upload` gives them to nobody",
    "/api/bots/{name}": "as /bots/{name}, to the viewer the token names (anyone without one)",
    "/games/{game_id}": "a replay: its record as :func:`game` gives it to nobody",
    "/api/games/{game_id}": "a game's record as :func:`game` gives it to the viewer the token "
    "names (anyone without one), with the private events and what the bots wrote beside their "
    "moves at the seats :func:`own_seats` gives that viewer",
    "/final": "the final round-robin's report, written without fault messages",
    "/submit": "the upload form: answers the upload's number, or the refusal",
    "/me": "the participant whose token was typed: its own uploads with their logs and "
    "reasons, what its bots wrote and their faults' messages; a game's replay as :func:`game` "
    "gives it to that participant, with the views (and what its bots wrote beside their "
    "moves) of the seats :func:`own_seats` gives it",
    "/api/submissions": "the token's participant's own uploads (another's: 403)",
    "/api/submissions/{upload_id}": "the token's participant's own upload with its log, "
    "output and faults (another's: 403)",
    "/api/ranked": "the token's participant's own ranked bot",
}


@dataclass(frozen=True)
class Viewer:
    """Who asks: a participant (by id), or nobody known (``participant_id`` ``None``)."""

    participant_id: int | None = None

    def sees(self, owner: int | None) -> bool:
        """Whether this viewer may read the private output of a bot of participant ``owner``
        (``None``: a bot of nobody's, such as the arena's own)."""
        return self.participant_id is not None and owner == self.participant_id


#: A viewer without a token.
ANONYMOUS = Viewer()


def game(store: Store, tournament_id: int, found: StoredGame, viewer: Viewer) -> StoredGame:
    """Game ``found`` of tournament ``tournament_id`` as ``viewer`` may see it: its faults'
    messages kept at the seats of the viewer's own bots only, and what a bot wrote beside its
    moves at the seats :func:`own_seats` gives (its own bots', once the tournament is
    finished: what a bot wrote may tell the cards it saw)."""
    if not found.record.faults and not found.record.output:
        return found
    owners = seat_owners(store, tournament_id)
    seats = found.record.seats
    shown = {seat for seat, entrant in enumerate(seats) if viewer.sees(owners.get(entrant))}
    record = found.record.with_messages_of(shown)
    if record.output:
        own = own_seats(store, tournament_id, found, viewer)
        record = dataclasses.replace(record, output=[o for o in record.output if o.seat in own])
    return dataclasses.replace(found, record=record)


def own_seats(
    store: Store, tournament_id: int, found: StoredGame, viewer: Viewer
) -> frozenset[int]:
    """The seats of game ``found`` (of tournament ``tournament_id``) whose own view ``viewer``
    may read where the game's hidden cards are otherwise kept (its hand, its draws, what it
    was shown): the seats of the viewer's own bots, once the tournament is finished, and
    none before.

    A finished tournament's decks are never dealt again: every tournament of the ladder (a
    placement, a rated round, the final) is played with a fresh seed
    (:func:`arena.serve.ladder.new_seed`) on secret decks (``balanced:N``) drawn from a secret
    of its own (:func:`arena.decks.specs.draw_secret_seed`), which only that tournament,
    resumed while unfinished, uses again. So what a seat saw of a finished tournament's deck
    tells its participant nothing of a deck any of its bots will be dealt."""
    if viewer.participant_id is None or store.tournament(tournament_id).status != "finished":
        return frozenset()
    owners = seat_owners(store, tournament_id)
    seats = found.record.seats
    return frozenset(s for s, entrant in enumerate(seats) if viewer.sees(owners.get(entrant)))


def seat_owners(store: Store, tournament_id: int) -> dict[str, int]:
    """The participant (its id) of each submitted entrant of tournament ``tournament_id``, by
    entrant name."""
    owner = P.owners(store)
    players = entrant_players(store, tournament_id)
    return {entrant: owner[p] for entrant, p in players.items() if p in owner}


def faults(summary: dict[str, Any] | None, owner: int | None, viewer: Viewer) -> Any:
    """A bot's fault summary (``total``, ``by_kind``, ``examples`` as
    :meth:`~leaderboard.standings.FaultSummary.to_dict` gives it) as ``viewer`` may see it: the
    examples' messages only for the bot's participant ``owner``."""
    if summary is None or viewer.sees(owner):
        return summary
    examples = [{**e, "message": HIDDEN_MESSAGE} for e in summary.get("examples", ())]
    return {**summary, "examples": examples}


def upload(found: P.UploadInfo, viewer: Viewer, with_log: bool = False) -> dict[str, Any]:
    """An upload as ``viewer`` may see it: for its own participant with its failure's
    ``reason`` (and its build and check ``log`` ``with_log``), for anyone else without
    either."""
    own = viewer.sees(found.participant_id)
    out = found.to_json(with_log=own and with_log)
    if not own:
        del out["reason"]
    return out
