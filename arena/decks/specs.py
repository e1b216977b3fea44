"""What a deck set spec says without loading any deck: whether it is built in, whether it is
secret (``balanced:N`` and ``random:N`` without a seed), and the public spec of a secret one
once its seed is known. Kept apart from :mod:`arena.decks.sets`, which loads the engine, so that
reading stored tournaments (the leaderboard, reports) does not."""

from __future__ import annotations

import secrets

from arena.errors import ArenaError

#: Bits of a secret seed drawn by :func:`draw_secret_seed`.
SECRET_BITS = 128
#: The deck set families that take a count and an optional seed, and the key their decks'
#: seeds derive from.
SEEDED_FAMILIES = {"random": "deck", "balanced": "balanced"}


class DeckSetError(ArenaError, ValueError):
    """A deck set spec that names no deck set, or a deck file or deck set that is not valid."""


def is_builtin_spec(spec: str) -> bool:
    """Whether ``spec`` is answered without asking plugins (``fixed36``, ``balanced:``,
    ``random:``, ``file:``)."""
    spec = spec.strip()
    return spec == "fixed36" or spec.startswith(("balanced:", "random:", "file:"))


def is_secret_spec(spec: str) -> bool:
    """Whether ``spec`` is ``balanced:N`` or ``random:N`` without a seed: a deck set drawn
    from a secret seed for each tournament."""
    parts = spec.strip().split(":")
    return len(parts) == 2 and parts[0] in SEEDED_FAMILIES


def draw_secret_seed() -> int:
    """A new secret seed of :data:`SECRET_BITS` bits from the operating system's randomness
    (:mod:`secrets`): far too many to try, unlike a small public seed."""
    return secrets.randbits(SECRET_BITS)


def reproducible_spec(spec: str, secret: int) -> str:
    """The public spec giving the decks that secret spec ``spec`` gives with ``secret``
    (``balanced:36`` and 5 give ``balanced:36:5``): how anyone checks a finished tournament's
    decks once its seed is published."""
    if not is_secret_spec(spec):
        raise DeckSetError(f"deck set {spec!r} is public: it takes no secret seed")
    return f"{spec.strip()}:{int(secret)}"
