"""The competition's standings, kept fresh: whenever games were stored since the latest
snapshot (:mod:`leaderboard.competition`), one rating fit over every ladder game is stored as the
next. The fit runs in an ``arena serve standings`` process of its own, so that refitting many
games never holds up a page or the ladder; pages read the snapshots only."""

from __future__ import annotations

import time

from arena.serve.background import Background
from arena.serve.ladder import LadderSettings, ladder_games
from leaderboard import competition as C
from leaderboard.standings import compute_standings
from leaderboard.store import Store

#: Seconds a refit may take before it is given up (and tried again later).
REFIT_SECONDS = 600.0
#: Seconds between two looks for new games, at least.
IDLE_SECONDS = 5.0


def refresh_standings(store: Store, settings: LadderSettings) -> C.Snapshot | None:
    """Fit the ladder's standings again if games were stored since the latest snapshot, and
    store them as the next one (an empty one while the ladder has no game); the latest
    snapshot (``None``: nothing stored at all yet)."""
    newest = store.latest_game_id()
    latest = C.latest_snapshot(store, settings.name)
    if latest is not None and latest.through_game >= newest:
        return latest
    games = ladder_games(store, settings)
    if latest is not None and latest.games == len(games):
        C.looked_through(store, latest.id, newest)
    else:
        fit = compute_standings(games).to_dict() if games else {}
        C.save_snapshot(store, settings.name, fit, len(games), newest)
    return C.latest_snapshot(store, settings.name)


class StandingsRefresher(Background):
    """Runs ``arena serve standings`` whenever a game was stored after the latest snapshot
    (checked every few seconds and when woken)."""

    idle = IDLE_SECONDS

    def __init__(self, store: Store, db_url: str, settings: LadderSettings) -> None:
        super().__init__("standings")
        self.store = store
        self.db_url = db_url
        self.settings = settings
        self.last_error: str | None = None
        self._rested = 0.0  # no refit before this moment (time.monotonic())

    def stale(self) -> bool:
        """Whether a game was stored after the latest snapshot looked."""
        looked = C.looked_up_to(self.store, self.settings.name)
        newest = self.store.latest_game_id()
        return newest > 0 and (looked is None or looked < newest)

    def work(self) -> bool:
        """Refit if the standings are stale; never goes on at once (a refit a few seconds
        later takes every game stored meanwhile). The next look waits at least as long as the
        refit took, so refitting a large competition takes at most half of one core from its
        games."""
        if time.monotonic() < self._rested or not self.stale():
            return False
        begun = time.monotonic()
        code, _, err = self.run_arena(
            "serve",
            "--db",
            self.db_url,
            "--name",
            self.settings.name,
            "standings",
            "--quiet",
            timeout=REFIT_SECONDS,
        )
        last = (err.strip().splitlines() or [""])[-1]
        self.last_error = None if code == 0 else self.failed(f"standings exited {code}", last)
        took = time.monotonic() - begun
        self.idle = max(IDLE_SECONDS, took)
        self._rested = time.monotonic() + took
        return False
