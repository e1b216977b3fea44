"""Reinforcement learning over the engine: a PettingZoo environment, a Gymnasium environment for
one seat against bots, and an OpenSpiel game, all stepping the engine's kernels and observing
through the per-seat view (docs/rl.md).

``arena.rl.env(players=2, variant="classic")`` is the PettingZoo AEC environment
(:mod:`~arena.rl.aec`, with ``raw_env``); :class:`~arena.rl.single_seat.SingleSeatEnv` the
Gymnasium one, :class:`~arena.rl.vector.SingleSeatVectorEnv` the same in batches (Gymnasium's
``VectorEnv``); importing :mod:`arena.rl.openspiel` registers ``python_love_letter`` with
pyspiel. They need the ``[rl]`` extra (``pip install 'loveletter-arena[rl]'``; without it they
fail with that line). :mod:`~arena.rl.encoding` (actions as indices, the observation vector)
needs only the arena itself, so a trained policy plays as a bot without the extra.

Modules: :mod:`~arena.rl.encoding`, :mod:`~arena.rl.round` (a round stepped by action index),
:mod:`~arena.rl.render`, :mod:`~arena.rl.aec`, :mod:`~arena.rl.seat_table` with
:mod:`~arena.rl.compiled_table` and :mod:`~arena.rl.hosted_table` (the other seats of the
Gymnasium environment), :mod:`~arena.rl.single_seat`, :mod:`~arena.rl.vector`,
:mod:`~arena.rl.openspiel`, :mod:`~arena.rl.extra`. Its kernels take ``njit`` from
:mod:`arena.engine.jit`, like every kernel package's
(:data:`arena.engine.jitcache.KERNEL_PACKAGES`).

May import: arena.errors, arena.seeds, arena.engine, arena.game, arena.botspec, arena.referee,
bots, arena.hosting.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.rl.aec import env, raw_env
    from arena.rl.single_seat import SingleSeatEnv
    from arena.rl.vector import SingleSeatVectorEnv

#: Names imported on first use (their libraries come with the ``[rl]`` extra), and their modules.
_LAZY = {
    "env": "arena.rl.aec",
    "raw_env": "arena.rl.aec",
    "SingleSeatEnv": "arena.rl.single_seat",
    "SingleSeatVectorEnv": "arena.rl.vector",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arena.rl' has no attribute {name!r}")


__all__ = ["SingleSeatEnv", "SingleSeatVectorEnv", "env", "raw_env"]
