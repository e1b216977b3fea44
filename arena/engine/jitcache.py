"""Where numba keeps the compiled kernels: one cache directory per version of the kernels' code.

numba's ``cache=True`` checks only the source file of the function it compiles, not of the
functions it calls in other modules, so a changed policy or rule would leave a stale compiled
dispatcher or simulator behind. This module points numba's cache at a directory named by a hash of
every source file of the packages that hold kernels (``arena.engine``, ``bots``, ``solver``): a
change anywhere gives a fresh cache. :func:`configure` runs when :mod:`arena.engine` is imported,
before any kernel is defined.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

#: The packages whose modules define numba kernels.
KERNEL_PACKAGES = ("arena.engine", "bots", "solver")


def _sources() -> list[Path]:
    files: list[Path] = []
    for name in KERNEL_PACKAGES:
        if name == "arena.engine":
            dirs = [str(Path(__file__).parent)]
        else:
            spec = importlib.util.find_spec(name)
            dirs = list(spec.submodule_search_locations or []) if spec else []
        for d in dirs:
            files.extend(sorted(Path(d).glob("*.py")))
    return files


def code_hash() -> str:
    """A short hash of every kernel package's source files (names and contents)."""
    digest = hashlib.blake2b(digest_size=8)
    for path in _sources():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_base() -> Path:
    """``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/loveletter-arena/numba``."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loveletter-arena" / "numba"


def configure() -> Path:
    """Point numba's cache at this code version's directory and return it."""
    import numba.core.config

    path = cache_base() / code_hash()
    setattr(numba.core.config, "CACHE_DIR", str(path))  # noqa: B010 - set at import by numba
    return path
