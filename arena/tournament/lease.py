"""A runner's lease on its tournament, kept alive by a thread: one runner per tournament.

:meth:`RunnerLease.take` takes the lease in the database
(:meth:`leaderboard.store.Store.take_lease`, refused with one line naming the holder while
another runner holds it) and starts a thread that renews it every third of its length,
whatever the runner is doing (compiling kernels, starting hosts, waiting for a long block).
:meth:`RunnerLease.release` stops the thread and deletes the lease. A runner killed outright
cannot: the lease records its process (:func:`leaderboard.runners.this_process`), so the next
runner on the same machine sees that it is gone and takes the tournament over at once; a runner
on another machine (or where /proc cannot tell) waits for the lease to expire. See
``docs/tournaments.md``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from types import TracebackType

from arena.errors import ArenaError
from leaderboard.runners import this_process
from leaderboard.store import Store, StoreError

#: How long a lease lasts after its last renewal (seconds): how long a killed runner keeps
#: runners on other machines from its tournament (one on its own machine takes it over at once).
LEASE_SECONDS = 30.0
#: Renewals per lease length: a lease of 30 s is renewed every 10 s.
RENEWALS = 3
#: The environment variable that sets the lease's length in seconds (for tests and operators,
#: e.g. a shorter lease where runners are often killed).
ENV_VAR = "ARENA_LEASE_SECONDS"


def lease_seconds() -> float:
    """The length of a lease: :data:`ENV_VAR` when it is set, else :data:`LEASE_SECONDS`."""
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return LEASE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 86400:
        raise ArenaError(f"{ENV_VAR}={text!r} is not a number of seconds between 0 and 86400")
    return seconds


def holder() -> str:
    """Who this runner is, as a lease names it: ``pid N on HOST``."""
    return f"pid {os.getpid()} on {socket.gethostname()}"


class RunnerLease:
    """This process's lease on tournament ``tournament_id`` (see the module's docstring); a
    context manager that releases it. Writes of the runner pass :attr:`token` to the store."""

    def __init__(self, store: Store, tournament_id: int, token: str, seconds: float) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.token = token
        self.seconds = seconds
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._renew, name=f"lease-{tournament_id}", daemon=True
        )

    @classmethod
    def take(cls, store: Store, tournament_id: int, seconds: float | None = None) -> RunnerLease:
        """Take the lease of ``tournament_id`` (recording this process, so that a runner after
        it here can tell when it is gone) and start renewing it; raises
        :class:`~leaderboard.runners.TournamentBusyError` while another runner holds it."""
        length = lease_seconds() if seconds is None else seconds
        token = store.take_lease(tournament_id, holder(), length, this_process())
        lease = cls(store, tournament_id, token, length)
        lease._thread.start()
        return lease

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / RENEWALS):
            try:
                if not self.store.renew_lease(self.tournament_id, self.token):
                    self.lost = True  # the runner's next write says so and stops it
                    return
            except StoreError:
                pass  # a database hiccup: the next renewal tries again

    def release(self) -> None:
        """Stop renewing and give the lease up (a lost lease is left to its new holder)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)
        if not self.lost:
            with contextlib.suppress(StoreError):  # if it cannot be deleted, it expires
                self.store.release_lease(self.tournament_id, self.token)

    def __enter__(self) -> RunnerLease:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
