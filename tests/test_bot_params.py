"""Declared bot parameters: types and ranges, carried in the listing, refused before play."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from arena.botspec import BotSpec, ParamRule, declare_params
from arena.cli.main import cli
from arena.errors import UnknownBotError
from arena.hookspecs import hookimpl
from arena.hosting.catalog import load_catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.plugins import BUILTIN_PLUGIN, load_registry
from arena.hosting.sandbox import choose_sandbox
from arena.referee.play import Referee
from bots.uniform import UniformBot

DEFAULTS = {"iterations": 1000, "c": 0.7, "seconds": 0.0, "greedy": False, "style": "calm"}
RANGES: dict[str, tuple[Any, Any]] = {
    "iterations": (1, None),
    "c": (0.0, 2.0),
    "seconds": (0.0, None),
}


class Tunable(UniformBot):
    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.settings = settings


class DeclaringPlugin:
    @hookimpl
    def arena_register_bots(self, register: Callable[..., Any]) -> None:
        register("tunable", Tunable, "declares its parameters", DEFAULTS, ranges=RANGES)
        register("plain", Tunable, "declares nothing but defaults", {"depth": 3, "c": 0.5})
        register("typed", Tunable, "an int default meant as a float", {"t": 1}, types={"t": float})
        register("unbounded", Tunable, "inf allowed", {"t": 1.0}, ranges={"t": (0.0, math.inf)})


class BadDeclarationPlugin:
    @hookimpl
    def arena_register_bots(self, register: Callable[..., Any]) -> None:
        register("badrange", Tunable, "default outside its range", {"n": 0}, ranges={"n": (1, 9)})


def refusal(registry: Any, text: str) -> str:
    with pytest.raises(UnknownBotError) as info:
        registry.build(text)
    return str(info.value)


def test_settings_outside_the_declaration_name_bot_parameter_value_and_range() -> None:
    registry = load_registry([("declaring", DeclaringPlugin())], entry_points=False)
    assert refusal(registry, "tunable[iterations=-5]") == (
        "bot 'tunable': iterations=-5 is refused: iterations is an int >= 1"
    )
    assert refusal(registry, "tunable[c=nan]") == (
        "bot 'tunable': c=nan is refused: c is a finite float from 0 to 2"
    )
    assert "seconds=-1 is refused: seconds is a finite float >= 0" in refusal(
        registry, "tunable[seconds=-1]"
    )
    assert "c=2.5 is refused" in refusal(registry, "tunable[c=2.5]")
    assert "iterations=2.5 is refused" in refusal(registry, "tunable[iterations=2.5]")
    assert "iterations=x is refused" in refusal(registry, "tunable[iterations=x]")
    assert "greedy=1 is refused: greedy is true or false" in refusal(registry, "tunable[greedy=1]")
    spec, bot = registry.build("tunable[iterations=1,c=2,seconds=0.5,greedy=true,style=7]")
    assert str(spec) == "tunable[iterations=1,c=2.0,seconds=0.5,greedy=true,style=7]"
    assert bot.settings == {
        "iterations": 1,
        "c": 2.0,
        "seconds": 0.5,
        "greedy": True,
        "style": "7",
    }


def test_types_come_from_defaults_unless_declared_and_inf_only_where_declared() -> None:
    registry = load_registry([("declaring", DeclaringPlugin())], entry_points=False)
    assert "depth=2.5 is refused: depth is an int" in refusal(registry, "plain[depth=2.5]")
    assert "c=inf is refused: c is a finite float" in refusal(registry, "plain[c=inf]")
    assert "c=-inf is refused" in refusal(registry, "plain[c=-inf]")
    spec, bot = registry.build("plain[depth=-4,c=-1]")  # no range declared: any finite number
    assert bot.settings == {"depth": -4, "c": -1.0}
    spec, bot = registry.build("typed[t=2.5]")
    assert bot.settings == {"t": 2.5}
    spec, bot = registry.build("unbounded[t=inf]")
    assert bot.settings == {"t": math.inf} and str(spec) == "unbounded[t=inf]"
    assert "t=nan is refused: t is a float from 0 to inf" in refusal(registry, "unbounded[t=nan]")


def test_a_bad_declaration_is_a_plugin_error_and_the_others_load() -> None:
    registry = load_registry(
        [("bad", BadDeclarationPlugin()), ("declaring", DeclaringPlugin())], entry_points=False
    )
    assert "tunable" in registry.bots and "badrange" not in registry.bots
    assert [e.plugin for e in registry.errors] == ["bad"]
    assert "default 0 is not an int from 1 to 9" in registry.errors[0].error


@pytest.mark.parametrize(
    ("ranges", "types", "message"),
    [
        ({"nope": (0, 1)}, None, "declares a range or type for 'nope', which has no default"),
        ({"n": (1.5, None)}, None, "bound 1.5 of an int parameter is not an int"),
        ({"n": (5, 1)}, None, "range (5, 1) is empty"),
        ({"flag": (0, 1)}, None, "a bool parameter has no range"),
        (None, {"n": "complex"}, "type 'complex' is not one of bool, int, float, str, file"),
    ],
)
def test_declarations_are_checked(
    ranges: dict[str, Any] | None, types: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        declare_params("bot", {"n": 2, "flag": True}, ranges, types)


def test_rules_round_trip_through_json() -> None:
    for rule in (
        ParamRule("int", 1, None),
        ParamRule("float", 0.0, math.inf),
        ParamRule("float", -math.inf, 0.0),
        ParamRule("bool"),
        ParamRule("str"),
    ):
        assert ParamRule.from_json(json.loads(json.dumps(rule.to_json()))) == rule


def test_a_third_party_bot_declaring_nothing_still_resolves() -> None:
    defaults = {"aggression": 0.5}
    assert str(BotSpec.parse("cautious[aggression=0.8]").resolve(defaults)) == (
        "cautious[aggression=0.8]"
    )
    with pytest.raises(UnknownBotError, match="aggression=nan is refused"):
        BotSpec.parse("cautious[aggression=nan]").resolve(defaults)


def test_the_reference_bots_declare_their_parameters_in_the_listing() -> None:
    catalog = load_catalog(choose_sandbox("none"))
    ismcts = catalog.bots["ismcts"].to_json()
    assert ismcts["rules"] == {
        "iterations": {"type": "int", "min": 1, "max": 10**9},
        "c": {"type": "float", "min": 0.0, "max": None},
        "seconds": {"type": "float", "min": 0.0, "max": None},
    }
    for name in ("pimc", "minimax", "montecarlo"):
        assert set(catalog.bots[name].rules) == set(catalog.bots[name].params)
    with pytest.raises(UnknownBotError, match="iterations=-5 is refused"):
        catalog.resolve("ismcts[iterations=-5]")


@pytest.mark.parametrize(
    "spec", ["ismcts[iterations=-5]", "ismcts[c=nan]", "ismcts[seconds=-1]", "pimc[c=inf]"]
)
@pytest.mark.parametrize(
    "command",
    [
        ["play", "{spec}", "random", "--sandbox", "none"],
        ["simulate", "{spec}", "random", "--games", "10"],
        ["tournament", "--bots", "{spec},random", "--sandbox", "none", "--db", "{db}"],
        ["match", "{spec}", "random", "--games", "2", "--sandbox", "none", "--db", "{db}"],
        ["check", "{spec}", "--sandbox", "none"],
    ],
    ids=["play", "simulate", "tournament", "match", "check"],
)
def test_every_command_refuses_before_anything_is_played(
    tmp_path: Any, spec: str, command: list[str]
) -> None:
    db = tmp_path / "arena.db"
    args = [a.format(spec=spec, db=f"sqlite:///{db}") for a in command]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 2, done.output
    name, _, setting = spec.partition("[")
    assert done.output == done.output.splitlines()[0] + "\n"
    assert done.output.startswith(f"arena: error: bot '{name}': {setting[:-1]} is refused: ")
    assert not db.exists()


def test_arena_bots_shows_each_parameter_s_range() -> None:
    done = CliRunner().invoke(cli, ["bots", "--sandbox", "none"])
    assert done.exit_code == 0, done.output
    assert (
        "parameters: iterations=1000 (an int from 1 to 1000000000), c=0.7 (a finite float >= 0), "
        "seconds=0.0 (a finite float >= 0)"
    ) in done.output


def test_a_host_given_a_parameter_its_bot_does_not_declare_is_a_recorded_fault() -> None:
    """The referee's side resolves specs before a host starts, so a host only sees such a spec
    when its plugin and the listing disagree: the host refuses to set the bot up, and that is
    the bot's fault on one line."""
    handle = HostHandle("random[depth=3]", BUILTIN_PLUGIN, sandbox=choose_sandbox("none"))
    other = HostHandle("random", BUILTIN_PLUGIN, sandbox=choose_sandbox("none"))
    try:
        record = Referee("classic").play_round([handle, other], seed=1)
    finally:
        handle.close()
        other.close()
    (fault,) = record.faults
    assert fault.seat == 0 and fault.kind == "crash"
    assert fault.message.startswith(
        "the bot could not be set up: UnknownBotError: bot 'random' has no parameter 'depth' "
        "(parameters: none)"
    )
    assert "\n" not in fault.message
    assert record.winners == [1]


def test_a_file_parameter_takes_a_readable_file_as_its_absolute_path(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``types={"weights": "file"}``: a readable regular file becomes its absolute path, ``""``
    stays none, and a missing file or a directory is refused in one line naming the rule."""
    rules = declare_params("net", {"weights": ""}, types={"weights": "file"})
    assert rules["weights"].to_json()["type"] == "file"
    assert ParamRule.from_json(rules["weights"].to_json()) == rules["weights"]
    (tmp_path / "w.npz").write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    assert rules["weights"].check("w.npz") == str(tmp_path / "w.npz")
    assert rules["weights"].check("") == ""
    for bad in ("missing.npz", str(tmp_path)):
        with pytest.raises(ValueError):
            rules["weights"].check(bad)
    assert rules["weights"].allowed() == "the path of a readable file ('' for none)"
    with pytest.raises(ValueError, match="has no range"):
        declare_params("net", {"w": ""}, ranges={"w": (0, 1)}, types={"w": "file"})
