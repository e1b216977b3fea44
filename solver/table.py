"""The solver's table: building it, and keeping it in the user's cache directory.

The file holds only the computed slots (their indices, chances and policy entries), about 14 MB
for the ``huibers`` table, and loads in a fraction of a second.
"""

from __future__ import annotations

import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from arena.errors import UnknownVariantError
from solver.build import COMPUTED, compute, discover
from solver.index import N_STATES, opening_counts, opening_hands, state_index

#: Bump when the model or the file layout changes: the cache file name carries it.
SOLVER_VERSION = 1

#: The variants the solver models.
VARIANTS = ("huibers",)


@dataclass
class DPTable:
    """The win chance and the choice for every slot the solver computed.

    ``chance[i]`` is f at slot ``i`` (see :func:`solver.index.state_index`), 0 where not computed.
    ``policy[i]`` packs the choice: bits 0-3 the card to play, bits 4-7 the Guard's guess (0 if
    none), bits 8-9 the Prince's target (1 the opponent, 2 itself, 0 if none), bit 10 set when the
    slot was computed. ``states`` counts the computed slots; ``build_seconds`` is the time the
    build took (compiled kernels, one core).
    """

    variant: str
    chance: np.ndarray
    policy: np.ndarray
    states: int
    build_seconds: float

    def computed(self, index: int) -> bool:
        """Whether slot ``index`` was computed."""
        return bool(self.policy[index] & COMPUTED)

    def choice(self, index: int) -> tuple[int, int, int]:
        """``(card, guess, target)`` at slot ``index`` (zeros where not computed)."""
        code = int(self.policy[index])
        return code & 15, (code >> 4) & 15, (code >> 8) & 3


def check_variant(variant: str) -> None:
    """Raise :class:`UnknownVariantError` unless the solver models ``variant``."""
    if variant not in VARIANTS:
        raise UnknownVariantError(
            f"the DP solver models only the 'huibers' variant (two players, no face-up cards), "
            f"not {variant!r}"
        )


def opening_roots() -> np.ndarray:
    """The slots of the first decision of a ``huibers`` round, one per possible hand."""
    return np.array(
        [state_index(b1, b2, 0, opening_counts(b1, b2), 0, 0, 0) for b1, b2 in opening_hands()],
        dtype=np.int64,
    )


def _warm_up() -> None:
    """Compile (or load) the kernels on a tiny problem, so a timed build times only the build."""
    a = np.zeros(9, dtype=np.int64)
    a[1] = a[8] = 1
    order, start, _ = discover(np.array([state_index(1, 2, 0, a, 0, 0, 0)]), False)
    compute(order, start, np.zeros(N_STATES), np.zeros(N_STATES, dtype=np.int16))


def build_table(variant: str = "huibers") -> DPTable:
    """Compute the table from every opening of ``variant`` (only ``huibers``)."""
    check_variant(variant)
    roots = opening_roots()
    _warm_up()
    begun = time.perf_counter()
    order, start, _ = discover(roots, False)
    chance = np.zeros(N_STATES, dtype=np.float64)
    policy = np.zeros(N_STATES, dtype=np.int16)
    states = compute(order, start, chance, policy)
    seconds = time.perf_counter() - begun
    return DPTable(variant, chance, policy, int(states), seconds)


def table_path(variant: str = "huibers") -> Path:
    """Where the table of ``variant`` is cached: ``cache_dir()/solver/dp-VARIANT-vN-HASH.npz``,
    HASH naming the solver's source files, so a changed model never reads an old table."""
    import hashlib

    from arena.engine.jitcache import cache_dir

    digest = hashlib.blake2b(digest_size=6)
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    name = f"dp-{variant}-v{SOLVER_VERSION}-{digest.hexdigest()}.npz"
    return cache_dir() / "solver" / name


def save_table(table: DPTable, path: Path) -> None:
    """Write the computed slots of ``table`` to ``path`` (atomically: a temporary file renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    slots = np.flatnonzero(table.policy & COMPUTED).astype(np.int32)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                version=np.array(SOLVER_VERSION),
                variant=np.array(table.variant),
                states=np.array(table.states),
                build_seconds=np.array(table.build_seconds),
                slots=slots,
                chance=table.chance[slots],
                policy=table.policy[slots],
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_table(path: Path) -> DPTable:
    """Read a table written by :func:`save_table`; ``ValueError`` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != SOLVER_VERSION:
                raise ValueError(f"{path} holds a table of another solver version")
            slots = data["slots"]
            chance = np.zeros(N_STATES, dtype=np.float64)
            policy = np.zeros(N_STATES, dtype=np.int16)
            chance[slots] = data["chance"]
            policy[slots] = data["policy"]
            return DPTable(
                str(data["variant"]),
                chance,
                policy,
                int(data["states"]),
                float(data["build_seconds"]),
            )
    except (OSError, KeyError, IndexError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path} is not a solver table: {exc}") from exc


@dataclass(frozen=True)
class CachedTable:
    """What :func:`open_table` did: the table, its cache file ``path``, whether the table was read
    from that file (``source`` ``"loaded"``) or computed now (``"built"``), and whether the file
    holds it now (``cached``: false only when a table built now could not be saved, as in a
    read-only cache)."""

    table: DPTable
    path: Path
    source: Literal["loaded", "built"]
    cached: bool


def open_table(variant: str = "huibers", rebuild: bool = False) -> CachedTable:
    """The table of ``variant`` from the disk cache, or built and saved there if absent,
    unreadable or ``rebuild``; says which it was."""
    check_variant(variant)
    path = table_path(variant)
    if not rebuild and path.exists():
        try:
            table = read_table(path)
            if table.variant == variant:
                return CachedTable(table, path, "loaded", cached=True)
        except ValueError:
            pass
    table = build_table(variant)
    try:
        save_table(table, path)
    except OSError:  # a read-only cache (a sandboxed host): keep it in memory
        return CachedTable(table, path, "built", cached=False)
    return CachedTable(table, path, "built", cached=True)


def load_table(variant: str = "huibers", rebuild: bool = False) -> DPTable:
    """The table of ``variant`` from the disk cache; built and saved if absent, unreadable or
    ``rebuild`` (:func:`open_table` also says which it was)."""
    return open_table(variant, rebuild).table
