"""What happens to an upload after the server accepted it: built in the sandbox
(:func:`arena.hosting.build.submit`, the distribution claimed for its participant under the
submissions store's lock), then each bot it registers checked by ``arena check`` in a process of
its own, one upload at a time, in a thread of the server.

The server process never runs submitted code: the build runs in bubblewrap, the plugin is listed
by a sandboxed host, and the checks play sandboxed hosts in a separate ``arena check`` process.
The queue is the database (uploads ``queued``), so a server stopped at any moment picks up
where it was when started again (:func:`leaderboard.participants.requeue_unfinished`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from leaderboard import participants as P
from leaderboard.store import Store


@dataclass(frozen=True)
class Limits:
    """What one upload may take: bytes, seconds of build, uploads per participant per hour,
    and the rounds ``arena check`` plays per variant and player count."""

    upload_bytes: int = 20 * 1024 * 1024
    build_seconds: float = 300.0
    per_hour: int = 10
    check_rounds: int = 50


#: Seconds ``arena check`` may take for one upload's bots.
CHECK_SECONDS = 900.0


class Pipeline:
    """Builds and checks queued uploads of ``store`` from files under ``spool``
    (``spool/ID/FILENAME``), one at a time, in a thread started by :meth:`start`; an upload
    that passes goes to ``placing`` and ``checked`` is called (the ladder's wake-up)."""

    def __init__(
        self, store: Store, spool: Path, limits: Limits, checked: Callable[[], None]
    ) -> None:
        self.store = store
        self.spool = spool
        self.limits = limits
        self.checked = checked
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Requeue what a stopped server left half done, and start working."""
        P.requeue_unfinished(self.store)
        self._thread = threading.Thread(target=self._run, name="uploads", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Say a new upload is queued."""
        self._wake.set()

    def stop(self) -> None:
        """Stop after the upload at hand (its status stays as it is, requeued on restart)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            for upload in P.uploads(self.store, status="queued"):
                if self._stop.is_set():
                    return
                self.process(upload)
            self._wake.wait(timeout=2.0)
            self._wake.clear()

    def process(self, upload: P.UploadInfo) -> None:
        """Build and check ``upload``, recording each step; any failure is the upload's, with
        its reason, never the server's. Its file is removed once it is decided."""
        try:
            self._process(upload)
        except Exception as exc:  # the server keeps serving whatever one upload does
            P.set_upload(self.store, upload.id, "failed", reason=f"internal error: {exc}"[:2000])
        if not self._stop.is_set():
            shutil.rmtree(self.spool / str(upload.id), ignore_errors=True)

    def _process(self, upload: P.UploadInfo) -> None:
        from arena.hosting.build import read_log, submit

        path = self.spool / str(upload.id) / upload.filename
        P.set_upload(self.store, upload.id, "building")
        try:
            done = submit(
                path,
                timeout=self.limits.build_seconds,
                claim=lambda distribution: P.claim(self.store, distribution, upload.participant_id),
            )
        except ArenaError as exc:
            P.set_upload(self.store, upload.id, "failed", reason=str(exc)[:2000])
            return
        record = done.record
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

    def _check(self, bots: list[str]) -> tuple[str | None, str]:
        """Run ``arena check`` on ``bots``: (why they failed, or None; its output)."""
        command = [
            sys.executable,
            "-c",
            "from arena.cli.main import main; main()",
            "check",
            *bots,
            "--rounds",
            str(self.limits.check_rounds),
            "--json",
        ]
        try:
            run = subprocess.run(
                command, capture_output=True, text=True, timeout=CHECK_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            return f"arena check took over {CHECK_SECONDS:g} s", ""
        output = (run.stdout + run.stderr)[-P.LOG_CHARS :]
        try:
            reports = json.loads(run.stdout)
        except ValueError:
            last = run.stderr.strip().splitlines()[-1:] or ["no report"]
            return f"arena check failed: {last[0]}", output
        reports = reports if isinstance(reports, list) else [reports]
        for report in reports:
            for check in report.get("checks", []):
                if not check.get("passed", False):
                    return (
                        f"{report.get('bot')}: {check.get('name')}: {check.get('detail')}",
                        output,
                    )
        return (None if run.returncode == 0 else f"arena check exited {run.returncode}"), output
