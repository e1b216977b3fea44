"""The reference bots' plugin: registers every bot a module of this package declares.

The bots are found by :func:`bots.policy.reference_bots` from their modules' ``BOT``
declarations, read without importing the modules: registering them imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl
from bots.policy import reference_bots


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register the reference bots."""
    for bot in reference_bots().values():
        bot.register(register)
