"""A small counter-free random generator (SplitMix64) for the engine's kernels.

The generator's whole state is one ``uint64`` in a length-1 array, so a kernel's randomness is
fully determined by the seed it is handed, independent of numba's or numpy's global state.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


def new_rng(seed: int) -> np.ndarray:
    """Return a generator state (a length-1 ``uint64`` array) seeded with ``seed``."""
    return np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


@njit(cache=True)
def next_u64(rng: np.ndarray) -> np.uint64:
    """Advance the generator and return 64 random bits."""
    z = rng[0] + _GAMMA
    rng[0] = z
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@njit(cache=True)
def rand_below(rng: np.ndarray, n: int) -> int:
    """Return a uniform integer in ``[0, n)`` for ``1 <= n < 2**32`` (Lemire's multiply-shift)."""
    hi = next_u64(rng) >> _S32
    return int((hi * np.uint64(n)) >> _S32)


@njit(cache=True)
def rand_unit(rng: np.ndarray) -> float:
    """Return a uniform float in ``[0, 1)``."""
    return float(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def shuffle(rng: np.ndarray, values: np.ndarray, start: int, stop: int) -> None:
    """Shuffle ``values[start:stop]`` in place (Fisher-Yates)."""
    for i in range(stop - 1, start, -1):
        j = start + rand_below(rng, i - start + 1)
        t = values[i]
        values[i] = values[j]
        values[j] = t
