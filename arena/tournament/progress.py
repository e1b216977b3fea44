"""A one-line progress report for long runs: done of total, rate, ETA and faults.

On a terminal the line is redrawn in place (at most a few times a second); elsewhere (a log
file, CI) a line is printed every :data:`PLAIN_EVERY` seconds and at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

#: Seconds between lines when the output is not a terminal.
PLAIN_EVERY = 10.0
#: Seconds between redraws on a terminal.
REDRAW_EVERY = 0.2


def format_time(seconds: float) -> str:
    """A short time, as a move's: ``12.3 ms`` below a second, ``1.25 s`` above."""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def format_duration(seconds: float) -> str:
    """``seconds`` as ``H:MM:SS`` (or ``M:SS`` under an hour)."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressLine:
    """Reports ``done`` of ``total`` games to ``stream`` (standard error by default).

    The rate and the ETA count only the games of this run, so a resumed run does not look
    faster than it is, and start once games are being stored: they are measured from the first
    games stored on, so the time the workers take to start the bots' hosts does not make the
    first estimate hours long. Until the first game is stored the line says the bots are
    starting. ``waiting`` (optional) names what still holds play back (``"compiling kernels"``)
    or returns ``None``: while it names something the line says so instead of a rate, and the
    rate is measured from when it stops.
    """

    def __init__(
        self,
        label: str = "games",
        stream: TextIO | None = None,
        waiting: Callable[[], str | None] | None = None,
    ) -> None:
        self.label = label
        self.waiting = waiting
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.monotonic()
        self._first: int | None = None
        self._playing: tuple[float, int] | None = None  # when the first games were stored
        self._shown = -1.0
        self._last = ""

    def text(self, done: int, total: int, faults: int, now: float | None = None) -> str:
        """The progress line for these figures."""
        now = time.monotonic() if now is None else now
        if self._first is None:
            self._first = done
        elapsed = now - self._start
        width = len(str(total))
        percent = 100.0 * done / total if total else 100.0
        parts = [f"{self.label} {done:>{width}}/{total} ({percent:5.1f}%)"]
        held = self.waiting() if self.waiting is not None else None
        if held is not None:
            self._playing = None  # measure the rate from when nothing holds play back
            if done < total:
                parts.append(held)
        else:
            if done > self._first and self._playing is None:
                self._playing = (now, done)
            if self._playing is None:
                if done < total:
                    parts.append("starting the bots")
            elif done > self._playing[1] and now > self._playing[0]:
                rate = (done - self._playing[1]) / (now - self._playing[0])
                parts.append(f"{rate:,.1f}/s")
                if done < total:
                    parts.append(f"ETA {format_duration((total - done) / rate)}")
        parts.append(f"elapsed {format_duration(elapsed)}")
        if faults:
            parts.append(f"faults {faults}")
        return " · ".join(parts)

    def update(self, done: int, total: int, faults: int) -> None:
        """Show the figures (rate-limited; always when the run is complete)."""
        now = time.monotonic()
        line = self.text(done, total, faults, now)
        every = REDRAW_EVERY if self.tty else PLAIN_EVERY
        if done < total and now - self._shown < every:
            return
        if line == self._last and done >= total:
            return
        self._shown = now
        self._last = line
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the line on a terminal."""
        if self.tty and self._last:
            self.stream.write("\n")
            self.stream.flush()
