"""The one implementation of the Love Letter rules: numba kernels over a compact integer state.

Modules: :mod:`~arena.engine.layout` (constants and array layouts), :mod:`~arena.engine.rng`
(seeded generator), :mod:`~arena.engine.rules` (dealing, legal actions, applying actions, the end
of a round), :mod:`~arena.engine.view` (what one seat knows) and :mod:`~arena.engine.playout`
(random rounds for benchmarks). The typed Python face is :mod:`arena.game`.

Kernel modules take ``njit`` from :mod:`arena.engine.jit`, which configures numba's cache first;
importing this package (or :mod:`~arena.engine.layout`) does not import numba.

May import: arena.errors.
"""
