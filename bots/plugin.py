"""The reference bots' plugin: registers every bot of this package with the arena."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl
from bots.uniform import UniformBot


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register the reference bots."""
    register("uniform", UniformBot, "picks uniformly among the legal actions", {})
