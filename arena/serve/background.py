"""What the server's background workers (the builders and checkers of
:class:`~arena.serve.pipeline.Pipeline`, :class:`~arena.serve.ladder.Ladder`, the standings'
refresher) share: a thread that does a round of work whenever woken or every few seconds, and
the ``arena`` processes it runs, interrupted when the server stops.

Every process the server starts is started by :func:`spawn`, so none outlives it, however it
ends (``kill -9`` too): the kernel interrupts the child as Ctrl-C does when the thread that
started it ends (Linux's parent-death signal), and the child's own processes end with it
(docs/serve.md, "Nothing outlives the server")."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from arena.hosting import cgroups

#: The command line of ``arena`` in a process of its own.
ARENA = [sys.executable, "-c", "from arena.cli.main import main; main()"]
#: Seconds a child ``arena`` process has to stop after Ctrl-C (SIGINT) before it is killed.
CHILD_STOP_SECONDS = 20.0
#: The signal a child of the server gets from the kernel when the thread that started it ends
#: (the server died): Ctrl-C's, so that it ends its sandboxes and gives its lease back.
PARENT_GONE = signal.SIGINT
#: prctl(2)'s option setting the parent-death signal.
_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up before any fork (``None`` where there is none: not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _dies_with(parent: int) -> Callable[[], None] | None:
    """What a child of ``parent`` runs between fork and exec to get :data:`PARENT_GONE` when
    the thread that forked it ends, and to end at once if ``parent`` is gone already."""
    prctl = _PRCTL
    if prctl is None:
        return None

    def child() -> None:
        # a parent started with Ctrl-C ignored (`arena serve finish &` in a script) would pass
        # that on, and its children would ignore the signal that stops them
        signal.signal(PARENT_GONE, signal.SIG_DFL)
        prctl(_PR_SET_PDEATHSIG, int(PARENT_GONE), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was asked for
            os._exit(128 + int(PARENT_GONE))

    return child


def spawn(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """Start ``argv`` (one of the arena's own commands) as :class:`subprocess.Popen` does with
    ``options``, as a process that cannot outlive the thread starting it: the kernel sends it
    :data:`PARENT_GONE` when that thread ends (Linux; elsewhere nothing is asked). Start it
    from a thread that lives as long as the process (the main thread, a worker's)."""
    return subprocess.Popen(argv, preexec_fn=_dies_with(os.getpid()), **options)


class Background:
    """A worker thread named ``name``: :meth:`work` runs when :meth:`wake` is called or every
    :attr:`idle` seconds, and again at once while it answers True, until :meth:`stop`."""

    #: Seconds between two rounds of work when nobody wakes the worker.
    idle = 2.0

    def __init__(self, name: str) -> None:
        self.name = name
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._child: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None

    def work(self) -> bool:
        """One round of work; True to go on at once."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the thread."""
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Say there is work."""
        self._wake.set()

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Interrupt the ``arena`` process at hand as Ctrl-C does (what it stored stays, and a
        tournament's lease is given back) and stop the thread."""
        self._stop.set()
        self._wake.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGINT)
        if self._thread is not None:
            self._thread.join(timeout=CHILD_STOP_SECONDS)
        if child is not None and child.poll() is None:
            child.kill()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def failed(self, line: str, said: str) -> str:
        """``line``, a failure as ``/api/health`` tells it, once written with ``said`` (what the
        failing process wrote last, which may quote a bot: docs/serve.md, "Private output")
        to the server's log alone."""
        print(f"arena serve: {self.name}: {line}: {said}", file=sys.stderr, flush=True)
        return line

    def run_arena(self, *args: str, timeout: float | None = None) -> tuple[int, str, str]:
        """Run ``arena ARGS`` in a process of its own (see :meth:`run`)."""
        return self.run([*ARENA, *args], timeout)

    def run(self, argv: list[str], timeout: float | None = None) -> tuple[int, str, str]:
        """Run ``argv`` (one of the arena's own commands) in a process of its own: (exit code,
        output, error output); exit code 124 when it took over ``timeout`` seconds: it is then
        interrupted as Ctrl-C does (it ends its sandboxes and removes what it made), killed if
        it has not stopped within :data:`CHILD_STOP_SECONDS`, and whatever control groups it
        left are removed."""
        child = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._child = child
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGINT)
            try:
                out, err = child.communicate(timeout=CHILD_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                out, err = child.communicate()
            cgroups.sweep([child.pid])
            return 124, out, err
        finally:
            self._child = None
        return child.returncode, out, err

    def _loop(self) -> None:
        while not self.stopping:
            if self.work() and not self.stopping:
                continue
            self._wake.wait(timeout=self.idle)
            self._wake.clear()
