"""The competition's ladder: each checked upload's bots play a placement set, and one rating fit
over every placement game ranks them.

A placement set is a gauntlet tournament of its own (``arena tournament --gauntlet BOT@VERSION``)
on fresh secret decks: the new bot against the current field (the reference bots of
:attr:`LadderSettings.field` and the latest ranked version of every other submitted bot), both
seatings of every deck. A tournament on secret decks publishes them when it is finished, so the
ladder never adds to a finished one: every placement draws new decks, and a new version of a bot
is simply the next placement of that name. The standings (:func:`ladder_standings`) are one
maximum-likelihood fit over the games of every placement tournament of the competition, each
submitted bot's version a player of its own (``NAME@VERSION``), the decks of different
tournaments independent units.

Each tournament is an ``arena tournament`` process of its own (the same runner, workers, sandbox
and lease as the command), so the server process never plays a bot; a server stopped in the
middle finds the placement tournament by its name when it starts again and resumes it.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from arena.hosting import submissions
from arena.serve.background import Background
from leaderboard import competition as C
from leaderboard import participants as P
from leaderboard.store import Store, StoredGame, StoreError

#: Deck positions of different placement tournaments are kept apart by this much.
DECK_SPAN = 1_000_000
#: Times the ladder tries to resume a tournament that fails, before it finishes it with the
#: games it had played.
ATTEMPTS = 3
#: The exit code of a command that refuses what it is asked (a withdrawn bot, say).
REFUSED = 2
#: The ladder's latest notes kept for ``/api/health``.
NOTES = 20


@dataclass(frozen=True)
class LadderSettings:
    """The ladder: the competition's name (its tournaments are named after it), the reference
    field, secret decks per placement, the rules, fresh secret decks per round of rated games,
    and the options of ``arena tournament`` saying where games are played (``--workers``,
    ``--executor``, ``--ray-address``)."""

    name: str = "ladder"
    field: tuple[str, ...] = ("random", "greedy")
    decks: int = 20
    variant: str = "classic"
    rated_decks: int = 20
    play: tuple[str, ...] = ()

    def placement(self, upload_id: int, bot: str) -> str:
        """The name of the tournament placing ``bot`` of upload ``upload_id``."""
        return f"{self.name}: placement of upload {upload_id}, {bot}"

    @property
    def rated_prefix(self) -> str:
        """How the names of the ladder's rounds of rated games begin."""
        return f"{self.name}: rated games "

    def rated(self, number: int) -> str:
        """The name of the ladder's ``number``-th round of rated games."""
        return f"{self.rated_prefix}{number}"

    @property
    def final_name(self) -> str:
        """The name of the competition's final round-robin."""
        return f"{self.name}: final round-robin"

    def is_ladder(self, tournament_name: str) -> bool:
        """Whether a tournament of that name is one of this ladder's (placements and rated
        rounds)."""
        return tournament_name.startswith((f"{self.name}: placement of upload ", self.rated_prefix))


class Ladder(Background):
    """Places ``placing`` uploads of ``store`` (``db_url`` for the tournament processes), one
    at a time, and plays rounds of rated games in between, in a thread started by
    :meth:`start` (what a stopped server left is resumed first)."""

    def __init__(
        self,
        store: Store,
        db_url: str,
        settings: LadderSettings,
        games_stored: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__("ladder")
        self.store = store
        self.db_url = db_url
        self.settings = settings
        self.games_stored = games_stored
        self.last_error: str | None = None
        #: What the ladder had to give up (a tournament finished with what it had played).
        self.notes: list[str] = []
        self._failures: dict[int, int] = {}

    def work(self) -> bool:
        """Place every participant's voice not placed yet, else play a round of rated games
        (True: go on at once); nothing once the competition is being finished."""
        if C.competition(self.store, self.settings.name).final:
            self.idle = 10.0
            return False
        voices = P.voices(self.store)
        finished = self._finished()
        waiting = [
            v
            for v in sorted(voices.values(), key=lambda v: v.upload_id)
            if self.settings.placement(v.upload_id, v.bot) not in finished
        ]
        for voice in waiting:
            if self.stopping or not self.place(voice):
                break
        self._settle(P.voices(self.store), self._finished())
        self.idle = 10.0 if self.last_error else 2.0
        return not waiting and not self.last_error and self.rate_one_pair()

    def _finished(self) -> set[str]:
        """The names of the finished tournaments."""
        return {name for _, name, status in self.store.tournament_names() if status == "finished"}

    def _settle(self, voices: dict[int, P.Voice], finished: set[str]) -> None:
        """Mark ``ranked`` each upload placing nothing more: its participant's voice is placed,
        or is none of its bots (they play no rated game)."""
        for upload in P.uploads(self.store, status="placing"):
            voice = voices.get(upload.participant_id)
            if (
                voice is None
                or voice.upload_id != upload.id
                or self.settings.placement(voice.upload_id, voice.bot) in finished
            ):
                P.set_upload(self.store, upload.id, "ranked", only_from="placing")

    def players(self, besides: int | None = None) -> list[str]:
        """Who is ranked now: the reference field and each participant's voice (but that of
        participant ``besides``): one bot per participant (docs/serve.md, "One participant,
        one voice")."""
        voices = P.voices(self.store)
        return [
            *self.settings.field,
            *(v.player for pid, v in sorted(voices.items()) if pid != besides),
        ]

    def rate_one_pair(self) -> bool:
        """Play one round of rated games (both seatings of ``rated_decks`` fresh secret decks)
        between the pair that most needs it (:func:`next_pair`, from the latest standings), or
        resume one a stopped server left; whether a round was played."""
        if self.settings.rated_decks <= 0:
            return False
        prefix = self.settings.rated_prefix
        rounds = self.store.tournament_names(prefix)
        unfinished = [tid for tid, _, status in rounds if status != "finished"]
        if unfinished:
            return self._resume(unfinished[0])
        pair = next_pair(C.latest_snapshot(self.store, self.settings.name), self.players())
        if pair is None:
            return False
        return self._tournament(
            [
                *("--name", self.settings.rated(len(rounds) + 1), "--seed", new_seed()),
                *("--decks", f"balanced:{self.settings.rated_decks}"),
                *("--variant", self.settings.variant, "--bots", ",".join(pair)),
                *("--teams", "owners"),
            ]
        )

    def place(self, voice: P.Voice) -> bool:
        """Play the placement set of a participant's voice (resuming any a stopped server
        left): a gauntlet of it against the reference field and every other participant's
        voice, never another bot of its own participant; whether it is finished."""
        name = self.settings.placement(voice.upload_id, voice.bot)
        found = [tid for tid, stored, _ in self.store.tournament_names(name) if stored == name]
        if found:
            return self._resume(found[0])
        field = self.players(besides=voice.participant_id)
        if not field:
            return False  # nobody to play yet: it waits for the next upload
        return self._tournament(
            [
                *("--name", name, "--seed", new_seed()),
                *("--decks", f"balanced:{self.settings.decks}"),
                *("--variant", self.settings.variant),
                *("--gauntlet", voice.player, "--bots", ",".join(field)),
                *("--teams", "owners"),
            ]
        )

    def _tournament(self, command: list[str]) -> bool:
        """Run ``arena tournament`` with ``command``; whether every game was stored."""
        code, said = self._run(command)
        if code == 0:
            return True
        self.last_error = self.failed(f"arena tournament exited {code}", said)
        return False

    def _run(self, command: list[str]) -> tuple[int, str]:
        """Run ``arena tournament`` with ``command``: its exit code and last line of error."""
        code, _, err = self.run_arena(
            "tournament", *command, *self.settings.play, "--db", self.db_url, "--quiet"
        )
        self.games_stored()
        if code == 0:
            self.last_error = None
        lines = err.strip().splitlines()
        return code, lines[-1] if lines else ""

    def _resume(self, tournament_id: int) -> bool:
        """Resume a ladder tournament a stopped server (or a failure) left unfinished; whether
        it is finished now. One that cannot be resumed (the command refuses it: a bot of it was
        withdrawn, or is not the version it played with after an upgrade) or that fails
        :data:`ATTEMPTS` times is finished with the games it had played (they count, the rest
        are not played), and said in :attr:`notes`: nothing stops rated play for good. One
        another runner still plays (started by hand, or on another machine) is waited for; a
        killed server's runners die with it, and their leases are taken over at once."""
        code, said = self._run(["--resume", str(tournament_id)])
        if code == 0:
            self._failures.pop(tournament_id, None)
            return True
        runner = self.store.runner(tournament_id)
        if runner is not None and runner.alive is not False:
            self.last_error = self.failed(
                f"tournament {tournament_id} is being played elsewhere", said
            )
            return False
        failures = self._failures.get(tournament_id, 0) + 1
        self._failures[tournament_id] = failures
        if code != REFUSED and failures < ATTEMPTS:
            self.last_error = self.failed(f"arena tournament exited {code}", said)
            return False
        self.abandon(tournament_id, said)
        return True

    def abandon(self, tournament_id: int, why: str) -> None:
        """Finish ladder tournament ``tournament_id`` with the games it has played, saying so in
        :attr:`notes` and, with ``why`` (what the tournament process wrote last), in the
        server's log."""
        played = len(self.store.finished_keys(tournament_id))
        self.store.set_status(tournament_id, "finished")
        self._failures.pop(tournament_id, None)
        note = (
            f"tournament {tournament_id} ({self.store.tournament_name(tournament_id)}) could "
            f"not be resumed: finished with the {played} games it had played"
        )
        self.notes.append(self.failed(note, why))
        del self.notes[:-NOTES]
        self.last_error = None
        self.games_stored()


def new_seed() -> str:
    """A fresh seed for a new tournament of the ladder: a stored tournament is found again by
    its settings, never by its name, so without it a second round between the same pair would
    resume the first, finished one."""
    return str(secrets.randbelow(2**63))


def next_pair(standings: C.Snapshot | None, players: list[str]) -> tuple[str, str] | None:
    """The pair of ``players`` whose next games sharpen the standings most: the fewest games
    between them first, then the closest ratings, then the widest intervals."""
    if len(players) < 2:
        return None
    rows = {} if standings is None else {str(r["bot"]): r for r in standings.standings}
    pairs = {} if standings is None else standings.pairs

    def need(a: str, b: str) -> tuple[int, float, float]:
        played = int(pairs.get(a, {}).get(b, {}).get("games", 0))
        ra, rb = rows.get(a, {}), rows.get(b, {})
        if ra.get("elo") is None or rb.get("elo") is None:
            return (played, 0.0, 0.0)
        width = sum(
            r["elo_hi"] - r["elo_lo"]
            for r in (ra, rb)
            if r.get("elo_lo") is not None and r.get("elo_hi") is not None
        )
        return (played, abs(ra["elo"] - rb["elo"]), -width)

    candidates = [(a, b) for i, a in enumerate(players) for b in players[i + 1 :]]
    return min(candidates, key=lambda p: need(*p))


def ladder_tournaments(store: Store, settings: LadderSettings) -> list[tuple[int, str, str]]:
    """``(id, name, stored status)`` of every tournament of the ladder, oldest first."""
    return [t for t in store.tournament_names(f"{settings.name}: ") if settings.is_ladder(t[1])]


def ladder_seats(store: Store, settings: LadderSettings) -> dict[int, dict[str, str]]:
    """Per ladder tournament, its entrants' ladder players: a submitted bot's seat is
    ``NAME@VERSION``, a reference bot's its name. Tournaments seen for the first time are
    looked up and recorded (:func:`leaderboard.competition.record_seats`)."""
    known = C.seats(store)
    versions: dict[str, int] | None = None
    for tid, _, _ in ladder_tournaments(store, settings):
        if tid in known:
            continue
        if versions is None:
            versions = {r.content: r.version for r in submissions.Store().records()}
        shown = entrant_players(store, tid, versions)
        C.record_seats(store, tid, shown)
        known[tid] = shown
    return known


def entrant_players(
    store: Store, tournament_id: int, versions: dict[str, int] | None = None
) -> dict[str, str]:
    """The entrants of tournament ``tournament_id`` as ladder players: a submitted bot's is
    ``NAME@VERSION``, a reference bot's its name. ``versions`` maps each stored snapshot's
    content hash to its version (read from the submissions store when not given)."""
    if versions is None:
        versions = {r.content: r.version for r in submissions.Store().records()}
    shown = {}
    for e in store.tournament(tournament_id).entrants:
        content = e.plugin[1:].partition(":")[0] if e.plugin.startswith("@") else None
        shown[e.name] = f"{e.name}@{versions[content]}" if content in versions else e.name
    return shown


def ladder_games(store: Store, settings: LadderSettings) -> list[StoredGame]:
    """Every game of the ladder, each seat named as its ladder player (:func:`ladder_seats`),
    keys and deck positions made distinct across tournaments (game ids are global already);
    never a game between two bots of one participant, which no rating may come from."""
    players = ladder_seats(store, settings)
    owner = P.owners(store)
    games: list[StoredGame] = []
    for tid, game in store.games_of(players):
        shown = players[tid]
        seats = [shown.get(s, s) for s in game.record.seats]
        owned = [owner[p] for p in seats if p in owner]
        if len(set(owned)) < len(owned):
            continue
        record = dataclasses.replace(game.record, seats=seats)
        deck = None if game.deck is None else tid * DECK_SPAN + game.deck
        games.append(dataclasses.replace(game, key=f"{tid}/{game.key}", deck=deck, record=record))
    return games


def is_ladder_game(store: Store, settings: LadderSettings, tournament_id: int) -> bool:
    """Whether tournament ``tournament_id`` is one of the competition's (its ladder's, or its
    final round-robin)."""
    try:
        name = store.tournament_name(tournament_id)
        return settings.is_ladder(name) or name == settings.final_name
    except StoreError:
        return False
