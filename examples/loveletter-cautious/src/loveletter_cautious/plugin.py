"""Registers the ``cautious`` bot with the arena (through the ``arena.bots`` entry point)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl

from .bot import CautiousBot


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register ``cautious``; ``cautious[aggression=0.8]`` takes more risks with the Baron."""
    register(
        "cautious",
        CautiousBot,
        "Guards what it knows or the likeliest card, plays its lower card, avoids risky Barons",
        {"aggression": 0.5},
    )
