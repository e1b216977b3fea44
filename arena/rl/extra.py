"""The ``[rl]`` extra: what the environments need beyond the arena, and the one-line error that
names how to install it."""

from __future__ import annotations

from arena.errors import ArenaError

#: How to install what :mod:`arena.rl`'s environments need.
INSTALL_HINT = "pip install 'loveletter-arena[rl]'"


class MissingExtraError(ArenaError, ImportError):
    """A library of the ``[rl]`` extra (PettingZoo, Gymnasium, OpenSpiel) is not installed."""


def missing_extra(what: str, exc: ImportError) -> MissingExtraError:
    """The error for ``what`` (an environment) when importing its library failed with ``exc``."""
    library = exc.name or "a library of the [rl] extra"
    return MissingExtraError(f"{what} needs {library}, which is not installed: {INSTALL_HINT}")
