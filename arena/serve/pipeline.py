"""What happens to an upload after the server accepted it: built in the sandbox by a process of
its own (``python -m arena.hosting.build``, :func:`arena.hosting.build.build`: the snapshot made,
the plugins listed), stored as a version by the server under the submissions store's lock with
the distribution claimed for its participant (:func:`arena.hosting.build.store_version`), then
each bot it registers checked by ``arena check`` in a process of its own, one upload at a time,
driven by a thread of the server.

The server process never runs submitted code, nor reads what a build produced but the build
process's bounded answer: the build runs in bubblewrap under its limits, in a separate process
that copies its output out, the plugin is listed by a sandboxed host, and the checks play
sandboxed hosts in a separate ``arena check`` process.
The queue is the database (uploads ``queued``), so a server stopped at any moment picks up
where it was when started again (:func:`leaderboard.participants.requeue_unfinished`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arena.errors import ArenaError
from arena.hosting import submissions as S
from arena.hosting.build import BuildLimits

if TYPE_CHECKING:
    from arena.hosting.build import Built
from arena.serve.background import Background
from leaderboard import participants as P
from leaderboard.store import Store


@dataclass(frozen=True)
class Limits:
    """What one upload may take: bytes, uploads per participant per hour, the rounds
    ``arena check`` plays per variant and player count, and its build's limits (time, memory,
    processes, output, log: :class:`~arena.hosting.build.BuildLimits`)."""

    upload_bytes: int = 20 * 1024 * 1024
    per_hour: int = 10
    check_rounds: int = 50
    build: BuildLimits = field(default_factory=BuildLimits)


#: Seconds a build process may take besides its build's own limit (starting, listing its
#: plugins, hashing): past that it is stopped.
BUILD_MARGIN = 300.0

#: Seconds ``arena check`` may take for one upload's bots.
CHECK_SECONDS = 900.0
#: What a failed build says to do about dependencies the arena's environment lacks: the server
#: builds without the network, and a participant cannot ask for it.
MISSING_HINT = (
    "this server builds without the network: make the package need only what the arena's "
    "environment has, or ask the organizer to install them there"
)


def default_builders(limits: Limits) -> int:
    """As many builders as the machine allows: one per core, and no more than the memory
    available holds builds at their memory limit (with half a GiB each besides)."""
    from arena.tournament.memory import available_memory

    cores = os.cpu_count() or 1
    found = available_memory()
    fits = cores if found is None else found.mb // (limits.build.memory_mb + 512)
    return max(1, min(cores, fits))


class FairQueue:
    """Which upload in ``status`` a worker takes next: never one of a participant another
    worker of the kind is busy with, and of the others the participant served longest ago (never
    served first: round-robin between participants), its oldest upload first. So a participant
    with many slow uploads holds one worker at a time, and another participant's upload waits at
    most for one of the uploads at hand to end."""

    def __init__(self, store: Store, status: str) -> None:
        self.store = store
        self.status = status
        self._lock = threading.Lock()
        self._busy: dict[int, int] = {}  # upload id -> participant id
        self._served: dict[int, int] = {}  # participant id -> when last served (a count)
        self._turns = 0

    def take(self) -> P.UploadInfo | None:
        """The next upload for a worker, now its (:meth:`done` gives it back); ``None`` when
        none may be taken."""
        with self._lock:
            busy = set(self._busy.values())
            waiting = [
                u
                for u in P.uploads(self.store, status=self.status)
                if u.participant_id not in busy and u.id not in self._busy
            ]
            if not waiting:
                return None
            chosen = min(waiting, key=lambda u: (self._served.get(u.participant_id, -1), u.id))
            self._busy[chosen.id] = chosen.participant_id
            self._turns += 1
            self._served[chosen.participant_id] = self._turns
            return chosen

    def done(self, upload: P.UploadInfo) -> None:
        """The worker is done with ``upload``."""
        with self._lock:
            self._busy.pop(upload.id, None)


class Pipeline:
    """Builds and checks queued uploads of ``store`` from files under ``spool``
    (``spool/ID/FILENAME``): ``builders`` threads (default :func:`default_builders`) build
    queued uploads, as many threads check built ones (``arena check``), each kind taking
    uploads fairly between participants (:class:`FairQueue`); an upload that passes goes to
    ``placing`` and ``checked`` is called (the ladder's wake-up). A build's worker is free once
    the build is stored, so another participant's build never waits for a check."""

    def __init__(
        self,
        store: Store,
        spool: Path,
        limits: Limits,
        checked: Callable[[], None],
        builders: int | None = None,
    ) -> None:
        self.store = store
        self.spool = spool
        self.limits = limits
        self.checked = checked
        count = builders if builders is not None else default_builders(limits)
        self.building = FairQueue(store, "queued")
        self.checking = FairQueue(store, "checking")
        self.workers: list[Background] = [
            *(Builder(self, number) for number in range(count)),
            *(Checker(self, number) for number in range(count)),
        ]

    def start(self) -> None:
        """Requeue what a stopped server left half built (a build stored and being checked is
        checked again, never built again), remove the control groups its killed children left
        (:func:`arena.hosting.cgroups.sweep`), and start working."""
        from arena.hosting import cgroups

        P.requeue_unfinished(self.store)
        cgroups.sweep()
        for worker in self.workers:
            worker.start()

    def wake(self) -> None:
        """Say there are uploads to build or check."""
        for worker in self.workers:
            worker.wake()

    def stop(self) -> None:
        """Interrupt the builds and checks at hand (their uploads are taken up again at the
        next start) and stop every worker."""
        threads = [threading.Thread(target=w.stop) for w in self.workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return any(w.stopping for w in self.workers)


class Builder(Background):
    """A thread of the pipeline that builds queued uploads."""

    def __init__(self, pipeline: Pipeline, number: int) -> None:
        super().__init__(f"builder-{number}")
        self.pipeline = pipeline

    def work(self) -> bool:
        """Build the next upload the queue gives (True: go on at once)."""
        upload = self.pipeline.building.take()
        if upload is None or self.stopping:
            return False
        try:
            self.build(upload)
        except Exception as exc:  # the server keeps serving whatever one upload does
            P.set_upload(
                self.pipeline.store, upload.id, "failed", reason=f"internal error: {exc}"[:2000]
            )
        finally:
            self.pipeline.building.done(upload)
        if not self.stopping:
            shutil.rmtree(self.pipeline.spool / str(upload.id), ignore_errors=True)
        return True

    def build(self, upload: P.UploadInfo) -> None:
        """Build ``upload`` and store its version (claimed for its participant): it goes on
        to ``checking``; any failure is the upload's, with its reason."""
        from arena.hosting.build import read_log, store_version

        pipeline = self.pipeline
        store = pipeline.store
        if not P.set_upload(store, upload.id, "building", only_from="queued"):
            return  # withdrawn or taken meanwhile
        path = pipeline.spool / str(upload.id) / upload.filename

        def claim(distribution: str) -> None:
            P.claim(store, distribution, upload.participant_id)

        try:
            built = self._build(path)
            record = stored_before(store, built, claim) or store_version(built, claim=claim)
        except ArenaError as exc:
            log = getattr(exc, "log", "")[-P.LOG_CHARS :]
            P.set_upload(store, upload.id, "failed", reason=str(exc)[:2000], log=log)
            return
        P.set_upload(
            store,
            upload.id,
            "checking",
            distribution=record.distribution,
            version=record.version,
            bots=list(record.bots),
            log=read_log(record),
        )
        pipeline.wake()

    def _build(self, path: Path) -> Built:
        """Build ``path`` in a process of its own (``python -m arena.hosting.build``) and read
        its answer: the :class:`~arena.hosting.build.Built` snapshot, or a
        :class:`~arena.hosting.submissions.SubmissionError` with its reason and log."""
        from arena.hosting.build import Built
        from arena.hosting.submissions import SubmissionError

        argv = [
            sys.executable,
            "-m",
            "arena.hosting.build",
            str(path),
            *self.pipeline.limits.build.options(),
        ]
        code, out, err = self.run(
            [*argv, "--missing-hint", MISSING_HINT],
            timeout=self.pipeline.limits.build.time + BUILD_MARGIN,
        )
        if code == 124:
            raise SubmissionError(self.pipeline.limits.build.line("time"))
        try:
            answer = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        except ValueError:
            answer = {}
        if "built" in answer:
            return Built.from_json(answer["built"])
        if "error" in answer:
            raise SubmissionError(str(answer["error"]), log=str(answer.get("log", "")))
        last = err.strip().splitlines()[-1:] or [f"exit code {code}"]
        raise SubmissionError(f"the build process failed: {last[0]}", log=err[-P.LOG_CHARS :])


def stored_before(store: Store, built: Built, claim: Callable[[str], None]) -> S.Record | None:
    """The version of ``built`` a server killed between storing it and recording it on its
    upload left (a stored version of its distribution with its content that no upload names),
    claimed again with ``claim``; ``None`` when there is none: so a build is stored once, and
    version numbers never skip."""
    from arena.hosting.names import canonical

    named = {
        (canonical(u.distribution), u.version)
        for u in P.uploads(store)
        if u.distribution is not None and u.version is not None
    }
    for record in S.Store().records(built.distribution):
        if record.content == built.content and (
            (canonical(record.distribution), record.version) not in named
        ):
            claim(canonical(record.distribution))
            return record
    return None


class Checker(Background):
    """A thread of the pipeline that checks built uploads' bots (``arena check``)."""

    def __init__(self, pipeline: Pipeline, number: int) -> None:
        super().__init__(f"checker-{number}")
        self.pipeline = pipeline

    def work(self) -> bool:
        """Check the next built upload the queue gives (True: go on at once)."""
        upload = self.pipeline.checking.take()
        if upload is None or self.stopping:
            return False
        try:
            self.check(upload)
        except Exception as exc:  # the server keeps serving whatever one upload does
            P.set_upload(
                self.pipeline.store, upload.id, "failed", reason=f"internal error: {exc}"[:2000]
            )
        finally:
            self.pipeline.checking.done(upload)
        return True

    def check(self, upload: P.UploadInfo) -> None:
        """Check each bot of ``upload`` at its version: ``placing`` if they pass, else
        ``failed`` with the first check that did not."""
        store = self.pipeline.store
        players = upload.players
        failed, output = self._check(players)
        if self.stopping:
            return  # interrupted: checked again at the next start
        log = f"{upload.log}\n--- arena check ---\n{output}"
        if failed:
            P.set_upload(store, upload.id, "failed", reason=failed, log=log, only_from="checking")
        elif P.set_upload(store, upload.id, "placing", log=log, only_from="checking"):
            self.pipeline.checked()

    def _check(self, bots: list[str]) -> tuple[str | None, str]:
        """Run ``arena check`` on ``bots``: (why they failed, or None; its output)."""
        code, out, err = self.run_arena(
            "check", *bots, "--rounds", str(self.pipeline.limits.check_rounds), "--json",
            timeout=CHECK_SECONDS,
        )  # fmt: skip
        if code == 124:
            return f"arena check took over {CHECK_SECONDS:g} s", ""
        output = (out + err)[-P.LOG_CHARS :]
        try:
            reports = json.loads(out)
        except ValueError:
            last = err.strip().splitlines()[-1:] or ["no report"]
            return f"arena check failed: {last[0]}", output
        reports = reports if isinstance(reports, list) else [reports]
        for report in reports:
            for check in report.get("checks", []):
                if not check.get("passed", False):
                    return (
                        f"{report.get('bot')}: {check.get('name')}: {check.get('detail')}",
                        output,
                    )
        return (None if code == 0 else f"arena check exited {code}"), output
