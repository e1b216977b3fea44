"""Bot specifications, the pluggy registry, and who owns a bot name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from arena.botspec import BotSpec
from arena.errors import UnknownBotError
from arena.hookspecs import hookimpl
from arena.hosting.names import Claim, check_name, settle
from arena.hosting.plugins import find_entry_point, load_registry, plugin_ref
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


# --- names are owned (arena.hosting.names; the installed attacks are in test_names.py)
# ----------------


#: "greedy" spelt with two Cyrillic letters that look like e.
LOOKALIKE = "gr\u0435\u0435dy"


def claims(*made: tuple[str, str, str]) -> list[Claim[str]]:
    """Claims ``(name, plugin, distribution)``, each carrying ``plugin/distribution`` as its
    item, in the order given."""
    return [Claim(name, plugin, dist, f"{plugin}/{dist}") for name, plugin, dist in made]


def test_the_arena_s_own_bots_keep_their_names_whoever_claims_first() -> None:
    settled = settle(
        "bot",
        claims(
            ("greedy", "aaa", "aaa-thief"),
            ("GREEDY", "shouty", "shouty-thief"),
            ("greedy", "reference", "loveletter-arena"),
        ),
    )
    assert settled.owned == {"greedy": "reference/loveletter-arena"}
    assert settled.contested == {}
    assert [(r.plugin, r.distribution) for r in settled.refusals] == [
        ("aaa", "aaa-thief"),
        ("shouty", "shouty-thief"),
    ]
    assert settled.refusals[1].message == (
        "bot 'GREEDY' of shouty-thief is refused: the name belongs to loveletter-arena "
        "(choose another name)"
    )


def test_within_one_distribution_the_first_registration_counts() -> None:
    settled = settle(
        "bot",
        claims(("echo", "a", "dist"), ("echo", "a", "dist"), ("echo", "b", "Dist")),
    )
    assert settled.owned == {"echo": "a/dist"}
    assert [r.message for r in settled.refusals] == [
        "bot 'echo' registered again by plugin 'a' of dist is refused: the first registration "
        "counts",
        "bot 'echo' of plugin 'b' of Dist is refused: plugin 'a' registers it first",
    ]


def test_a_name_third_parties_share_belongs_to_none_of_them() -> None:
    settled = settle(
        "deck set",
        claims(("my-set", "one", "first"), ("my_set", "two", "second"), ("mine", "two", "second")),
    )
    assert settled.owned == {"mine": "two/second"}
    assert settled.why_not("MY.SET") == (
        "deck set 'my-set' is refused: first and second both register it, and a name several "
        "distributions claim belongs to none of them (uninstall all but one)"
    )
    assert [(r.plugin, r.message) for r in settled.refusals] == [
        ("one", settled.why_not("my-set")),
        ("two", settled.why_not("my-set")),
    ]


@pytest.mark.parametrize("name", [LOOKALIKE, "", "1st", "a b", "x" * 65, "new\nline", 7])
def test_a_name_must_be_plain_ascii(name: Any) -> None:
    with pytest.raises(ValueError, match="is not allowed") as info:
        check_name("bot", name)
    assert "\n" not in str(info.value)


class ImpostorPlugin:
    @hookimpl
    def arena_register_bots(self, register: Callable[..., Any]) -> None:
        register("uniform", Tunable, "not the arena's uniform")
        register(LOOKALIKE, Tunable, "a look-alike of greedy")
        register("never", Tunable, "not reached: the name before it raised")


def test_an_in_process_plugin_cannot_take_a_name_or_break_another_plugin() -> None:
    registry = load_registry([("impostor", ImpostorPlugin()), ("tunable", TunablePlugin())])
    assert registry.get("uniform").distribution == "loveletter-arena"
    assert registry.get("tunable").plugin == "tunable"
    assert "never" not in registry.bots and LOOKALIKE not in registry.bots
    assert [e.plugin for e in registry.errors] == ["impostor", "impostor"]
    assert "is not allowed" in registry.errors[0].error
    assert "belongs to loveletter-arena" in registry.errors[1].error


def test_a_host_is_told_one_plugin_of_one_distribution() -> None:
    assert plugin_ref("loveletter-arena", "reference") == "loveletter-arena:reference"
    assert find_entry_point("loveletter-arena:reference").value == "bots.plugin"
    assert find_entry_point("Loveletter_Arena:reference").value == "bots.plugin"
    assert find_entry_point("reference").value == "bots.plugin"
    for missing in ("someone-else:reference", "loveletter-arena:nothing"):
        with pytest.raises(UnknownBotError, match="is installed"):
            find_entry_point(missing)
