"""``njit`` for the kernels of :mod:`arena.rl`, cached under the engine's freshness rule.

:mod:`arena.engine.jitcache` stamps a cached kernel of the kernel packages with a hash of its
file and of every kernel-package file it imports, so that a changed rule never leaves a stale
compiled caller behind. ``arena.rl`` is not one of those packages, and its kernels call the
engine's; this module gives them the same rule: a kernel defined in a file of ``arena/rl`` is
stamped with every file of ``arena/rl`` and the kernel-package closure of each (the engine's
files, and the simulator's). Editing any of them recompiles the kernels of ``arena.rl``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from arena.engine.jit import njit
from arena.engine.jitcache import closure_stamp, files_stamp

_HERE = Path(__file__).resolve().parent


@cache
def rl_stamp() -> str:
    """The freshness stamp shared by every kernel of ``arena.rl``."""
    files = sorted(_HERE.glob("*.py"))
    return files_stamp(files) + "".join(closure_stamp(f) for f in files)


def _install_locator() -> None:
    from numba.core import caching

    class RLKernelLocator(caching.UserProvidedCacheLocator):
        """numba's locator for ``NUMBA_CACHE_DIR``, with :func:`rl_stamp` as freshness."""

        def get_source_stamp(self) -> str:
            return rl_stamp()

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if Path(py_file).resolve().parent != _HERE:
                return None
            return super().from_function(py_func, py_file)

    classes = caching.CacheImpl._locator_classes
    if not any(c.__name__ == RLKernelLocator.__name__ for c in classes):
        classes.insert(0, RLKernelLocator)


_install_locator()

__all__ = ["njit"]
