"""The server's log stays small whatever its traffic: :class:`RateLimitedLog`, a logging filter
that lets through at most a few lines of each kind per interval and says afterwards how many
it held back, and :func:`server_log_limits`, the filters for the loggers of uvicorn and
asyncio (docs/serve.md, "Hostile traffic").

A line's kind is where it comes from, not what it says: its logger, its level, its message
before formatting, and for a line with an exception the exception's type and the line of code
that raised it. So 100,000 failed ``accept()`` calls are one kind, and an access log line per
request is one kind, whatever the paths asked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

#: Kinds remembered at most; beyond, the oldest are forgotten (after saying what they held back).
MAX_KINDS = 512
#: The logger summaries go to unless another is given: the server's error log.
SUMMARY_LOGGER = "uvicorn.error"
#: A record carrying this attribute (set true) is a summary and always passes.
SUMMARY_MARK = "arena_log_summary"


@dataclass
class _Window:
    """One kind's count in the current interval."""

    start: float
    example: str
    passed: int = 0
    held: int = 0


def kind_of(record: logging.LogRecord) -> Hashable:
    """The kind of ``record``: logger, level, unformatted message, and the exception's type
    and innermost line of code when it carries one."""
    message = record.msg if isinstance(record.msg, str) else type(record.msg).__qualname__
    where: tuple[str, str, int] | None = None
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        frame = error.__traceback__
        while frame is not None and frame.tb_next is not None:
            frame = frame.tb_next
        code = ("", 0) if frame is None else (frame.tb_frame.f_code.co_filename, frame.tb_lineno)
        where = (type(error).__qualname__, *code)
    return (record.name, record.levelno, message, where)


class RateLimitedLog(logging.Filter):
    """At most ``lines`` records of one kind (:func:`kind_of`) and ``total`` of all kinds pass
    in each interval of ``seconds``; the others are held back and counted. When an interval in
    which a kind was held back is over, one line (on the logger ``report_to``) says how many
    were and what the first of them said: :meth:`flush` writes those lines, and every record
    filtered calls it once an interval is over."""

    def __init__(
        self,
        lines: int,
        seconds: float,
        total: int | None = None,
        report_to: str = SUMMARY_LOGGER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        if lines < 1 or seconds <= 0:
            raise ValueError("a log limit needs at least one line per interval of some time")
        self.lines = lines
        self.seconds = seconds
        self.total = total if total is not None else 20 * lines
        self.report_to = report_to
        self.clock = clock
        self._windows: dict[Hashable, _Window] = {}
        self._lock = threading.Lock()
        self._all_start = clock()
        self._all_passed = 0
        self._next_flush = self._all_start + seconds

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is written (else it is counted)."""
        if getattr(record, SUMMARY_MARK, False):
            return True
        now = self.clock()
        if now >= self._next_flush:
            self.flush(now)
        summaries: list[str] = []
        with self._lock:
            passes = self._count(now, kind_of(record), record, summaries)
        for summary in summaries:
            self._report(summary)
        return passes

    def _count(
        self, now: float, key: Hashable, record: logging.LogRecord, summaries: list[str]
    ) -> bool:
        """Count ``record`` of kind ``key`` (the lock held): whether it passes; the summaries of
        intervals it closes are added to ``summaries``."""
        if now - self._all_start >= self.seconds:
            self._all_start, self._all_passed = now, 0
        window = self._windows.get(key)
        if window is None or now - window.start >= self.seconds:
            if window is not None and window.held:
                summaries.append(_summary(window, self.seconds))
            window = self._windows[key] = _Window(now, _example(record))
            while len(self._windows) > MAX_KINDS:
                oldest = self._windows.pop(next(iter(self._windows)))
                if oldest.held:
                    summaries.append(_summary(oldest, self.seconds))
        if window.passed < self.lines and self._all_passed < self.total:
            window.passed += 1
            self._all_passed += 1
            return True
        window.held += 1
        return False

    def flush(self, now: float | None = None) -> None:
        """Write the summary of every kind whose interval is over and held lines back (every
        kind's, at the end: ``now`` infinite)."""
        now = self.clock() if now is None else now
        summaries = []
        with self._lock:
            self._next_flush = now + self.seconds
            for key, window in list(self._windows.items()):
                if now - window.start >= self.seconds:
                    if window.held:
                        summaries.append(_summary(window, self.seconds))
                    del self._windows[key]
        for summary in summaries:
            self._report(summary)

    def _report(self, summary: str) -> None:
        logging.getLogger(self.report_to).warning("%s", summary, extra={SUMMARY_MARK: True})


def _example(record: logging.LogRecord) -> str:
    """The first line of ``record``'s message, at most 200 characters (for a summary)."""
    try:
        text = record.getMessage()
    except Exception:  # a record whose arguments do not fit its message: its template
        text = str(record.msg)
    first = text.splitlines()[0] if text else ""
    return first[:200]


def _summary(window: _Window, seconds: float) -> str:
    return (
        f"{window.held} more lines like this were not written "
        f"(at most {window.passed} of a kind every {seconds:g} s): {window.example}"
    )


#: The loggers whose lines hostile traffic can cause, and the limit of each: uvicorn's errors
#: and warnings (a malformed request each, an application's exception), asyncio's (a failed
#: accept each), and uvicorn's access log (a line per request).
SERVER_LOGS: dict[str, tuple[int, float]] = {
    "uvicorn.error": (1, 10.0),
    "asyncio": (1, 10.0),
    "uvicorn.access": (100, 10.0),
}


def server_log_limits() -> dict[str, RateLimitedLog]:
    """A :class:`RateLimitedLog` for each logger of :data:`SERVER_LOGS`, by logger name."""
    return {name: RateLimitedLog(lines, seconds) for name, (lines, seconds) in SERVER_LOGS.items()}


def install_log_limits(limits: dict[str, RateLimitedLog]) -> None:
    """Put each filter of ``limits`` on its logger (once logging is configured: configuring it
    again may take them off)."""
    for name, limit in limits.items():
        logging.getLogger(name).addFilter(limit)
