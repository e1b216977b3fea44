"""Holding Ctrl-C back while something must not be cut in the middle.

A Ctrl-C (SIGINT) that arrives inside :func:`ctrl_c_held` is kept and raised where the block
ends: a worker being started, or a block of games being written to the store. A
``KeyboardInterrupt`` in the middle of the store's transaction would leave its lock to be waited
out (SQLite's busy timeout, 30 s) by the final status write, and the run would end in "database
is locked" instead of within seconds.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Run the block with SIGINT blocked; a Ctrl-C that came meanwhile is raised when it ends
    (as the ``KeyboardInterrupt`` of the handler in place before). Outside the main thread,
    where no Ctrl-C is delivered, the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[bool] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: came.append(True))
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        signal.signal(signal.SIGINT, handler)
        if came:
            signal.raise_signal(signal.SIGINT)
