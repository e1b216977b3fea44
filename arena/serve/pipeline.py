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
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arena.errors import ArenaError
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


class Pipeline(Background):
    """Builds and checks queued uploads of ``store`` from files under ``spool``
    (``spool/ID/FILENAME``), one at a time, in a thread started by :meth:`start`; an upload
    that passes goes to ``placing`` and ``checked`` is called (the ladder's wake-up)."""

    def __init__(
        self, store: Store, spool: Path, limits: Limits, checked: Callable[[], None]
    ) -> None:
        super().__init__("uploads")
        self.store = store
        self.spool = spool
        self.limits = limits
        self.checked = checked

    def start(self) -> None:
        """Requeue what a stopped server left half done, and start working."""
        P.requeue_unfinished(self.store)
        super().start()

    def work(self) -> bool:
        """Build and check every queued upload, oldest first."""
        for upload in P.uploads(self.store, status="queued"):
            if self.stopping:
                break
            self.process(upload)
        return False

    def process(self, upload: P.UploadInfo) -> None:
        """Build and check ``upload``, recording each step; any failure is the upload's, with
        its reason, never the server's. Its file is removed once it is decided."""
        try:
            self._process(upload)
        except Exception as exc:  # the server keeps serving whatever one upload does
            P.set_upload(self.store, upload.id, "failed", reason=f"internal error: {exc}"[:2000])
        if not self.stopping:
            shutil.rmtree(self.spool / str(upload.id), ignore_errors=True)

    def _process(self, upload: P.UploadInfo) -> None:
        from arena.hosting.build import read_log, store_version

        path = self.spool / str(upload.id) / upload.filename
        P.set_upload(self.store, upload.id, "building")
        try:
            built = self._build(path)
            record = store_version(
                built,
                claim=lambda distribution: P.claim(self.store, distribution, upload.participant_id),
            )
        except ArenaError as exc:
            log = getattr(exc, "log", "")[-P.LOG_CHARS :]
            P.set_upload(self.store, upload.id, "failed", reason=str(exc)[:2000], log=log)
            return
        log = read_log(record)
        bots = list(record.bots)
        P.set_upload(
            self.store,
            upload.id,
            "checking",
            distribution=record.distribution,
            version=record.version,
            bots=bots,
            log=log,
        )
        failed, output = self._check([f"{bot}@{record.version}" for bot in bots])
        log = f"{log}\n--- arena check ---\n{output}"
        if failed:
            P.set_upload(self.store, upload.id, "failed", reason=failed, log=log)
        else:
            P.set_upload(self.store, upload.id, "placing", log=log)
            self.checked()

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
            *self.limits.build.options(),
        ]
        code, out, err = self.run(
            [*argv, "--missing-hint", MISSING_HINT],
            timeout=self.limits.build.time + BUILD_MARGIN,
        )
        if code == 124:
            raise SubmissionError(self.limits.build.line("time"))
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

    def _check(self, bots: list[str]) -> tuple[str | None, str]:
        """Run ``arena check`` on ``bots``: (why they failed, or None; its output)."""
        code, out, err = self.run_arena(
            "check", *bots, "--rounds", str(self.limits.check_rounds), "--json",
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
