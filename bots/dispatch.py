"""``decide``: one numba entry point that runs the policy of a bot by its id (bots.policy)."""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from bots.dp import dp_policy
from bots.greedy import greedy_policy
from bots.ismcts import ismcts_policy
from bots.knowledge import knowledge_policy
from bots.minimax import minimax_policy
from bots.montecarlo import montecarlo_policy
from bots.pimc import pimc_policy
from bots.policy import (
    DP,
    GREEDY,
    ISMCTS,
    KNOWLEDGE,
    MINIMAX,
    MONTECARLO,
    PIMC,
    RANDOM,
    RISKMATRIX,
    STRATEGIC,
)
from bots.random_player import random_policy
from bots.riskmatrix import riskmatrix_policy
from bots.strategic import strategic_policy


@njit(cache=True)
def decide(
    policy_id: int,
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The packed action the policy ``policy_id`` chooses. ``table`` is the Dynamic Programming
    table's policy array (:class:`solver.DPTable`), read by ``dp`` only (empty for the others)."""
    if policy_id == RANDOM:
        return random_policy(view, legal, nlegal, rng, params)
    if policy_id == STRATEGIC:
        return strategic_policy(view, legal, nlegal, rng, params)
    if policy_id == KNOWLEDGE:
        return knowledge_policy(view, legal, nlegal, rng, params)
    if policy_id == GREEDY:
        return greedy_policy(view, legal, nlegal, rng, params)
    if policy_id == RISKMATRIX:
        return riskmatrix_policy(view, legal, nlegal, rng, params)
    if policy_id == DP:
        return dp_policy(view, legal, nlegal, rng, params, table)
    if policy_id == MINIMAX:
        return minimax_policy(view, legal, nlegal, rng, params)
    if policy_id == MONTECARLO:
        return montecarlo_policy(view, legal, nlegal, rng, params)
    if policy_id == PIMC:
        return pimc_policy(view, legal, nlegal, rng, params)
    if policy_id == ISMCTS:
        return ismcts_policy(view, legal, nlegal, rng, params)
    return -1
