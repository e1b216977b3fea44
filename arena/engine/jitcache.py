"""Where numba keeps the compiled kernels, and when a compiled kernel is stale.

numba's ``cache=True`` checks only the source file of the function it compiles, not the files of
the functions it calls in other modules, so a changed rule or helper would leave a stale compiled
policy behind. :func:`configure` (run when :mod:`arena.engine` is imported, before any kernel is
defined) installs a cache locator for the kernel packages (``arena.engine``, ``bots``,
``solver``, ``arena.rl``) whose freshness stamp is a hash of the kernel's own file *and of every
kernel-package file it imports, directly or not*. Editing one bot's module recompiles that bot's
kernels (and those of the modules that import it), nothing else: the simulator calls the
policies through function pointers, so its own kernel holds none of them and stays valid;
editing the engine recompiles everything. Every version shares one cache directory:
:func:`cache_base`.

A sandboxed bot host must not write where the referee loads from. Its ``NUMBA_CACHE_DIR`` is
private (in its own ``/tmp``), and ``ARENA_TRUSTED_KERNELS`` names the arena's cache, which it
sees read-only: :func:`configure` mirrors that cache into the private one as symbolic links.
numba loads the trusted kernels through the links and saves whatever it compiles (a bot's own
kernels, or a kernel the trusted cache lacks) by replacing files in the private directory, never
writing through a link.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path

#: The packages whose modules define numba kernels.
KERNEL_PACKAGES = ("arena.engine", "bots", "solver", "arena.rl")
#: Modules of the kernel packages that configure numba but compile into nothing.
_MACHINERY = frozenset({"jit.py", "jitcache.py"})


@lru_cache(maxsize=1)
def _package_dirs() -> dict[str, Path]:
    dirs: dict[str, Path] = {"arena.engine": Path(__file__).resolve().parent}
    for name in KERNEL_PACKAGES[1:]:
        spec = importlib.util.find_spec(name)
        for d in (spec.submodule_search_locations or []) if spec else []:
            dirs[name] = Path(d).resolve()
    return dirs


def _module_file(module: str) -> Path | None:
    """The source file of ``module`` if it lies in a kernel package."""
    for package, directory in _package_dirs().items():
        if module == package:
            return directory / "__init__.py"
        if module.startswith(package + "."):
            rest = module[len(package) + 1 :].split(".")
            candidate = directory.joinpath(*rest)
            if candidate.with_suffix(".py").is_file():
                return candidate.with_suffix(".py")
            if (candidate / "__init__.py").is_file():
                return candidate / "__init__.py"
    return None


def _package_of(path: Path) -> str | None:
    for package, directory in _package_dirs().items():
        if path.parent == directory:
            return package
    return None


@cache
def _imports(path: Path) -> frozenset[Path]:
    """The kernel-package files ``path`` imports (anywhere in it, including inside functions)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    package = _package_of(path)
    found: set[Path] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            target = _module_file(name)
            if target is not None and target != path and target.name not in _MACHINERY:
                found.add(target)
    return frozenset(found)


@cache
def closure(path: Path) -> tuple[Path, ...]:
    """``path`` and every kernel-package file it imports, directly or through others."""
    seen = {path}
    todo = [path]
    while todo:
        for target in _imports(todo.pop()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return tuple(sorted(seen))


def files_stamp(paths: Iterable[Path]) -> str:
    """A hash of the names and contents of ``paths``."""
    digest = hashlib.blake2b(digest_size=16)
    for source in paths:
        digest.update(str(source).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


@cache
def closure_stamp(path: Path) -> str:
    """:func:`files_stamp` of :func:`closure` ``(path)``."""
    return files_stamp(closure(path))


def in_kernel_package(path: Path) -> bool:
    """Whether the source file ``path`` belongs to one of :data:`KERNEL_PACKAGES`."""
    return _package_of(path) is not None


def cache_dir() -> Path:
    """The arena's per-user cache directory (``$XDG_CACHE_HOME/loveletter-arena``): compiled
    kernels (``numba/``) and solver tables (``solver/``), written by trusted processes only."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loveletter-arena"


def cache_base() -> Path:
    """``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/loveletter-arena/numba``."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given)
    return cache_dir() / "numba"


def mirror(trusted: Path, private: Path) -> int:
    """Make ``private`` a tree of directories and symbolic links to the files of ``trusted``;
    returns how many files were linked."""
    linked = 0
    for root, _, files in os.walk(trusted):
        target = private / os.path.relpath(root, trusted)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            if ".tmp." in name:  # a file numba is writing right now
                continue
            link = target / name
            if not os.path.lexists(link):
                os.symlink(os.path.join(root, name), link)
                linked += 1
    return linked


def _install_locator() -> None:
    from numba.core import caching

    class KernelPackageLocator(caching.UserProvidedCacheLocator):
        """numba's locator for ``NUMBA_CACHE_DIR``, with the closure stamp as freshness."""

        def get_source_stamp(self) -> str:
            return closure_stamp(Path(self._py_file).resolve())

        @classmethod
        def from_function(cls, py_func, py_file):
            if not in_kernel_package(Path(py_file).resolve()):
                return None
            return super().from_function(py_func, py_file)

    classes = caching.CacheImpl._locator_classes
    if not any(c.__name__ == KernelPackageLocator.__name__ for c in classes):
        classes.insert(0, KernelPackageLocator)


def configure() -> Path:
    """Point numba's cache at :func:`cache_base` with kernel-package freshness stamps, first
    mirroring the trusted cache into it when ``ARENA_TRUSTED_KERNELS`` is set; returns it."""
    import numba.core.config

    path = cache_base()
    trusted = os.environ.get("ARENA_TRUSTED_KERNELS")
    if trusted and Path(trusted) != path:
        mirror(Path(trusted), path)
    setattr(numba.core.config, "CACHE_DIR", str(path))  # noqa: B010 - set at import by numba
    _install_locator()
    return path
