"""Starting arena commands for tests that press Ctrl-C (``from processes import interruptible``)."""

from __future__ import annotations

import signal


def interruptible() -> None:
    """A ``preexec_fn``: the command takes Ctrl-C as a terminal's foreground job does, even
    when the test runner itself was started in the background with SIGINT ignored (a
    disposition children inherit across ``exec``, and Python then never raises
    KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
