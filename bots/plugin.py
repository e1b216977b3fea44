"""The reference bots' plugin: registers every bot of this package with the arena."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl
from bots.policy import POLICIES, policy_bot
from bots.uniform import UniformBot


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register the reference bots."""
    register("uniform", UniformBot, "picks uniformly among the legal actions", {})
    for info in POLICIES.values():
        register(
            info.name,
            policy_bot(info.name),
            info.description,
            dict(info.params),
            variants=info.variants,
            players=info.players,
            ranges=dict(info.ranges),
        )
