"""Seed derivation: every random choice in the arena comes from a seed derived from a parent seed
and a key, so a result never depends on the order or the process in which work was done."""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable


def derive_seed(seed: int, *key: object) -> int:
    """A 63-bit seed determined by ``seed`` and the parts of ``key`` (stable across runs)."""
    return _seed("/".join([str(int(seed))] + [str(k) for k in key]).encode())


def seed_deriver(seed: int, *prefix: object) -> Callable[[object], int]:
    """``derive_seed(seed, *prefix, last)`` as a function of ``last``: the same seeds, with the
    common part prepared once (a schedule derives millions)."""
    head = "/".join([str(int(seed))] + [str(k) for k in prefix]).encode() + b"/"

    def derive(last: object) -> int:
        return _seed(head + str(last).encode())

    return derive


def _seed(text: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


def seed_global_generators(seed: int) -> None:
    """Seed Python's global :mod:`random` and, where the bot has imported NumPy, NumPy's global
    generator (``numpy.random``) from a round's ``seed``. Every bot's host does this at the
    start of each round, before the bot's ``reset``, so code written with the global generators
    plays the same way for the same seed. NumPy is not imported for it (a host that does not use
    it should not pay for it); numba's generator inside compiled code is its own."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (1 << 32))
