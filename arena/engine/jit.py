"""``njit``: numba's decorator, imported after the arena's kernel cache is configured.

Every module of the kernel packages takes ``njit`` from here, so that numba's cache directory and
freshness stamps (:mod:`arena.engine.jitcache`) are in place before the first kernel is defined,
while modules that define no kernel (the engine's layout, the typed face a bot host needs) can be
imported without numba at all.
"""

from arena.engine.jitcache import configure

configure()

from numba import njit  # noqa: E402 - numba must see the configured cache

__all__ = ["njit"]
