"""Seed derivation: every random choice in the arena comes from a seed derived from a parent seed
and a key, so a result never depends on the order or the process in which work was done."""

from __future__ import annotations

import hashlib
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
