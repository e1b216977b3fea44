"""Registers the ``ppo`` bot with the arena (through the ``arena.bots`` entry point)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl


def _build(**settings: Any) -> Any:
    """The bot, its module imported only when a bot is built (the listing stays quick)."""
    from .bot import PPOBot

    return PPOBot(**settings)


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register ``ppo``: trained for the two-player classic round, so it claims only that."""
    register(
        "ppo",
        _build,
        "a small network trained by PPO against random and strategic; plays its likeliest move",
        {"temperature": 0.0, "weights": ""},
        ranges={"temperature": (0.0, 10.0)},
        types={"weights": "file"},  # another training's .npz; '' plays the shipped weights
        variants=("classic",),
        players=(2,),
    )
