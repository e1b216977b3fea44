"""Every hook a plugin may implement (pluggy project name ``arena``).

A plugin is a module (or object) named by an entry point in the ``arena.bots`` group; it
implements hooks with :data:`hookimpl`.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

hookspec = pluggy.HookspecMarker("arena")
#: Decorate a plugin's hook functions with this.
hookimpl = pluggy.HookimplMarker("arena")


@hookspec
def arena_register_bots(register: Callable[..., None]) -> None:
    """Register bots by calling ``register(name, factory, description, params, variants,
    players, ranges, types)``.

    ``factory(**params)`` builds a bot: an object with ``act(observation)`` returning one of the
    observation's legal actions, and optionally ``reset(seed)``. ``description`` is one line;
    ``params`` maps each parameter name to its default (int, float, bool or str), so that
    ``name[param=value,...]`` names a configured bot. ``ranges`` bounds numeric parameters
    (``{"depth": (1, None)}``, inclusive, ``None`` open) and ``types`` gives a parameter
    another type than its default's (``{"c": float}``): a setting outside them is refused
    before anything is played (:func:`arena.botspec.declare_params`). ``variants`` (names) and
    ``players`` (counts) say what the bot can play; by default every variant and 2 to 4
    players.
    """


@hookspec
def arena_register_deck_sets(register: Callable[..., None]) -> None:
    """Register deck sets by calling ``register(name, loader, description)``.

    ``loader(variant)`` returns the set's decks, each a sequence of 16 cards (names or values,
    top card first) of the variant.
    """
