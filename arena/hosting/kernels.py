"""The trusted compile step: the arena's own bots' kernels are compiled before play, by the
arena, into the cache that sandboxed hosts only read.

A bot host in the sandbox cannot write the arena's numba cache (see :mod:`arena.engine.jitcache`):
whatever it compiles stays in its private ``/tmp`` and is lost with it. So before a command plays,
each of the arena's own bots that will play (distribution ``loveletter-arena``) is played once by
a real host run *outside* the sandbox (it is trusted code), for one short round against an
in-process bot: the host compiles exactly what a host of that bot needs, and numba stores it in
the arena's cache. A stamp per bot (a hash of its kernels' source files and the engine's) lets
later runs skip the step until that code changes. Third-party bots are never run outside the
sandbox: a bot that compiles its own kernels does so in its private cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine.jitcache import cache_dir
from arena.hosting.catalog import BotEntry
from arena.hosting.names import is_builtin
from arena.hosting.sandbox import Sandbox

#: Seconds one bot may take to compile.
COMPILE_TIME = 600.0


@dataclass(frozen=True)
class TrustedBot:
    """One of the arena's own bots to compile: its name, plugin, and the variant and table
    size to warm it up in."""

    name: str
    plugin: str
    variant: str
    players: int


def _kernel_files(name: str) -> list[Path]:
    """The source files whose kernels a host of bot ``name`` compiles: the engine's, and the
    bot's policy module with every kernel-package module it imports."""
    from arena.engine import jitcache

    engine = Path(jitcache.__file__).resolve().parent
    files = set(engine.glob("*.py"))
    from bots.policy import reference_bots

    info = reference_bots().get(name)
    if info is not None and info.path is not None:
        files.update(jitcache.closure(info.path))
    return sorted(files)


def stamp(name: str) -> str:
    """A hash of every source file bot ``name``'s host compiles kernels from."""
    from arena.engine.jitcache import files_stamp

    return files_stamp(_kernel_files(name))


def _stamp_path(name: str, suffix: str = "") -> Path:
    """The file that says bot ``name``'s kernels are compiled (``suffix=".failed"``: failed to
    compile) for its current source. One file per stamp, not per name: two installations of the
    arena on one machine (two checkouts, two virtual environments) have different stamps, as
    their sources' paths differ, so neither overwrites the other's and neither waits for a
    compile the other already did."""
    return cache_dir() / "numba" / "compiled" / f"{name}.{stamp(name)}{suffix}"


def is_compiled(name: str) -> bool:
    """Whether bot ``name``'s kernels are in the cache for its current source."""
    return _stamp_path(name).exists()


def _compile_one(
    bot: TrustedBot, sandbox: Sandbox, errors: dict[str, str], active: set[Any]
) -> None:
    from arena.hosting.hosted import HostHandle
    from arena.referee.play import InProcessHandle, Referee
    from bots.uniform import UniformBot

    trusted = Sandbox("none", sandbox.limits, kernels=sandbox.kernels)
    host = HostHandle(bot.name, bot.plugin, sandbox=trusted, startup_time=COMPILE_TIME)
    active.add(host)
    others = [InProcessHandle(UniformBot(), "uniform") for _ in range(bot.players - 1)]
    try:
        record = Referee(bot.variant, move_time=COMPILE_TIME).play_round([host, *others], seed=1)
        if record.faults and record.faults[0].seat == 0:
            errors[bot.name] = record.faults[0].message
            return
        path = _stamp_path(bot.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except Exception as exc:  # one bot's failure must not stop the others or the command
        errors[bot.name] = f"{type(exc).__name__}: {exc}"
    finally:
        host.close()
        active.discard(host)


class Compilation:
    """The trusted compile step for ``bots``, running in threads of this process (``workers``
    at a time, in the order given: the first bots to play first) while the caller goes on;
    :meth:`wait` waits for it, :meth:`terminate` stops it (Ctrl-C). ``errors`` holds the bots
    that failed, with why (they compile in their own hosts, slowly, or fault there)."""

    def __init__(
        self,
        bots: Sequence[TrustedBot],
        sandbox: Sandbox,
        progress: Callable[[str], None] | None = None,
        workers: int = 2,
    ) -> None:
        self.todo = [b for b in dict((b.name, b) for b in bots).values() if not is_compiled(b.name)]
        self.errors: dict[str, str] = {}
        self._sandbox = sandbox
        self._progress = progress
        self._begun = time.monotonic()
        self._lock = threading.Lock()
        self._pending = list(self.todo)
        self._active: set[Any] = set()  # the hosts compiling now
        self._threads = [
            threading.Thread(target=self._work, daemon=True)
            for _ in range(min(max(1, workers), len(self.todo)))
        ]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    return
                bot = self._pending.pop(0)
                if self._progress:
                    self._progress(
                        f"compiling kernels: {bot.name} ({len(self.todo) - len(self._pending)} "
                        f"of {len(self.todo)}, {time.monotonic() - self._begun:.0f} s so far)"
                    )
            _failed_path(bot.name).unlink(missing_ok=True)
            _compile_one(bot, self._sandbox, self.errors, self._active)
            if bot.name in self.errors:
                _mark_failed(bot.name)

    @property
    def running(self) -> bool:
        """Whether bots are still being compiled."""
        return any(thread.is_alive() for thread in self._threads)

    @property
    def names(self) -> tuple[str, ...]:
        """The bots this step compiles (those not compiled before it started)."""
        return tuple(b.name for b in self.todo)

    def wait(self) -> dict[str, str]:
        """Wait until every bot is compiled (or failed); returns :attr:`errors`. Ctrl-C while
        waiting stops the step (nothing goes on compiling behind the user's back)."""
        try:
            for thread in self._threads:
                thread.join()
        except KeyboardInterrupt:
            self.terminate()
            raise
        if self._progress and self.todo:
            seconds = time.monotonic() - self._begun
            self._progress(f"compiled the kernels of {len(self.todo)} bot(s) in {seconds:.0f} s")
        return self.errors

    def terminate(self) -> None:
        """Stop compiling now: no new bot starts, the hosts compiling are killed."""
        with self._lock:
            self._pending.clear()
        for host in list(self._active):
            host.terminate()


def compile_kernels(
    bots: Sequence[TrustedBot],
    sandbox: Sandbox,
    progress: Callable[[str], None] | None = None,
    workers: int = 2,
) -> dict[str, str]:
    """Compile the kernels of ``bots`` not compiled yet and wait (see :class:`Compilation`);
    returns the bots that failed, with why."""
    return Compilation(bots, sandbox, progress, workers).wait()


def _failed_path(name: str) -> Path:
    return _stamp_path(name, ".failed")


def _mark_failed(name: str) -> None:
    path = _failed_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def wait_compiled(name: str, timeout: float = COMPILE_TIME) -> bool:
    """Wait until the trusted step has compiled bot ``name``'s kernels (or failed to, or
    ``timeout`` passed): a worker calls this before starting the host of one of the arena's
    own bots with kernels, so that the host loads its kernels instead of compiling them privately
    while the step is still running. Returns whether they are compiled; at once for bots
    without kernels."""
    from bots.policy import compiled_bots

    if name not in compiled_bots():
        return True
    deadline = time.monotonic() + timeout
    done, failed = _stamp_path(name), _failed_path(name)
    while time.monotonic() < deadline:
        if done.exists():
            return True
        if failed.exists():
            return False
        time.sleep(0.2)
    return False


def trusted_bots(entries: Iterable[BotEntry], variant: str | None = None) -> list[TrustedBot]:
    """The arena's own bots with kernels among catalog ``entries`` (the policy bots, and plain
    ones such as ``ace``: :func:`bots.policy.compiled_bots`), each with the variant
    (``variant`` if it plays it) and the smallest table it plays."""
    from bots.policy import compiled_bots

    found = []
    for entry in entries:
        if not is_builtin(entry.distribution) or entry.name not in compiled_bots():
            continue  # not ours, or a bot without kernels
        chosen = variant if variant is not None and variant in entry.variants else entry.variants[0]
        found.append(TrustedBot(entry.name, entry.plugin, chosen, min(entry.players)))
    return found
