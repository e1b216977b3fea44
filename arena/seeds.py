"""Seed derivation: every random choice in the arena comes from a seed derived from a parent seed
and a key, so a result never depends on the order or the process in which work was done."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *key: object) -> int:
    """A 63-bit seed determined by ``seed`` and the parts of ``key`` (stable across runs)."""
    text = "/".join([str(int(seed))] + [str(k) for k in key]).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1
