"""Bot specifications and the pluggy registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from arena.botspec import BotSpec
from arena.errors import UnknownBotError
from arena.hookspecs import hookimpl
from arena.plugins import load_registry
from bots.uniform import UniformBot


class Tunable(UniformBot):
    def __init__(self, iterations: int = 1000, c: float = 0.7, greedy: bool = False) -> None:
        super().__init__()
        self.iterations, self.c, self.greedy = iterations, c, greedy


class TunablePlugin:
    @hookimpl
    def arena_register_bots(self, register: Callable[..., Any]) -> None:
        register(
            "tunable",
            Tunable,
            "a bot with parameters",
            {"iterations": 1000, "c": 0.7, "greedy": False},
        )


class BrokenPlugin:
    @hookimpl
    def arena_register_bots(self, register: Callable[..., Any]) -> None:
        raise RuntimeError("cannot register")


def test_spec_parse_and_canonical_form() -> None:
    spec = BotSpec.parse("ismcts[iterations=4000, c=0.5]")
    assert spec.name == "ismcts"
    assert dict(spec.params) == {"iterations": 4000, "c": 0.5}
    assert str(spec) == "ismcts[iterations=4000,c=0.5]"
    assert str(BotSpec.parse("random")) == "random"
    assert BotSpec.parse("x[]").params == ()


@pytest.mark.parametrize("text", ["", "a[", "a[b]", "a[b=]", "a[=1]", "a[b=1,b=2]", "1abc"])
def test_bad_specs(text: str) -> None:
    with pytest.raises(UnknownBotError):
        BotSpec.parse(text)


def test_resolve_casts_checks_and_drops_defaults() -> None:
    defaults = {"iterations": 1000, "c": 0.7, "greedy": False}
    assert str(BotSpec.parse("t[c=1,iterations=1000]").resolve(defaults)) == "t[c=1.0]"
    assert BotSpec.parse("t[greedy=true]").settings(defaults) == {**defaults, "greedy": True}
    for bad in ("t[iterations=2.5]", "t[greedy=3]", "t[depth=2]", "t[c=fast]"):
        with pytest.raises(UnknownBotError):
            BotSpec.parse(bad).resolve(defaults)


def test_registry_builds_configured_bots_and_lists_failures() -> None:
    registry = load_registry([("tunable", TunablePlugin()), ("broken", BrokenPlugin())])
    assert "uniform" in registry.bots
    info = registry.get("tunable")
    assert info.plugin == "tunable" and info.description == "a bot with parameters"
    spec, bot = registry.build("tunable[iterations=50]")
    assert str(spec) == "tunable[iterations=50]" and bot.iterations == 50 and bot.c == 0.7
    assert [e.plugin for e in registry.errors] == ["broken"]
    assert "cannot register" in registry.errors[0].error
    with pytest.raises(UnknownBotError, match=r"known: .*tunable, uniform"):
        registry.get("nope")


def test_reference_plugin_comes_from_our_distribution() -> None:
    info = load_registry().get("uniform")
    assert info.plugin == "reference"
    assert info.distribution == "loveletter-arena"
