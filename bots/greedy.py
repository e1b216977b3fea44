"""``greedy``: to be written (a helper is implementing this policy)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def greedy_policy(
    view: np.ndarray, legal: np.ndarray, nlegal: int, rng: np.ndarray, params: np.ndarray
) -> int:
    """Placeholder: the first legal action (replaced by the real policy)."""
    return legal[0]
