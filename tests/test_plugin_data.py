"""Whatever a plugin says is data: packages installed for real that say hostile things, run
through the real catalog, hosts and commands.

- ``loud_plugin`` puts clear-screen, window-title and clipboard-writing (OSC 52) escape sequences
  in every string it registers (descriptions, a parameter's name and default, a variant, a deck
  set's description), in an import error, in a forged listing, and in what a bot prints and
  raises: every command shows them made visible, never sends them to the terminal;
- ``crowd`` registers 150 bots in one plugin and 10,000 in another: the second is one line naming
  the limit, the rest is listed, and a tournament without ``--bots`` does not enter them all;
- ``slow_plugin``'s register hooks sleep: one for a while, one past any listing timeout, which
  fails once and is then remembered rather than waited for again.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from math import comb
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli.main import cli
from arena.errors import printable
from arena.hosting import catalog as catalog_module
from arena.hosting.catalog import LIMITS, ListingLimitError, load_catalog
from arena.hosting.listing_cache import content_stamp, listing_key
from arena.hosting.plugins import PluginInfo
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.runner import (
    DEFAULT_FIELD_BOTS,
    TournamentError,
    TournamentSpec,
    plan_tournament,
)

PLAIN = choose_sandbox("none")
Installer = Callable[..., None]

# What loud_plugin sends (tests/fixtures/loud_plugin/loud_plugin/__init__.py).
CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;owned\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
ESCAPES = CLEAR + TITLE + CLIPBOARD
LOUD = "arena-test-loud-plugin"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def raw_controls(text: str) -> list[str]:
    """The control characters in ``text`` other than line breaks: what must never be printed."""
    return sorted({c for c in text if not c.isprintable() and c != "\n"})


def shown(text: str) -> str:
    """``text`` as the arena shows it."""
    return printable(text)


# --- printable: the one function -------------------------------------------------------------


def test_printable_makes_every_control_character_visible_and_keeps_the_rest() -> None:
    assert printable("plain text, é, 日本") == "plain text, é, 日本"
    assert printable(f"{CLEAR}a\tb\nc\r\u202ed\x7f") == "\\x1b[2J\\x1b[Ha\\tb\\nc\\r\\u202ed\\x7f"
    assert printable("one\ttwo\nthree\x1b", keep="\n\t") == "one\ttwo\nthree\\x1b"
    assert printable("x" * 50, 10) == "x" * 9 + "…"
    assert printable(printable(ESCAPES)) == printable(ESCAPES)  # shown once, shown the same


# --- escape sequences in everything a plugin registers ---------------------------------------


def test_arena_bots_shows_every_registered_string_made_visible(installed: Installer) -> None:
    installed("loud_plugin")
    done = invoke("bots", "--sandbox", "none")
    assert done.exit_code == 0, done.output
    assert raw_controls(done.output) == []
    lines = done.output.splitlines()
    assert f"{'loud':<14} {shown(ESCAPES)}a loud description" in lines
    [params] = [x for x in lines if "parameters:" in x and "word=" in x]
    assert f"depth{shown(CLEAR)}=3 (an int)" in params
    assert f"word={shown(TITLE)}hello{shown(CLIPBOARD)} (a string)" in params
    assert f"{'loud-crasher':<14} crashes{shown(TITLE)}" in lines
    # a variant's name (refused by the registry), an import error, a forged listing's error
    [variant] = [x for x in lines if x.startswith(f"error: plugin 'loud' of {LOUD}: ")]
    assert f"classic{shown(CLIPBOARD)}" in variant
    assert (
        f"error: plugin 'loud-broken' of {LOUD}: RuntimeError: {shown(ESCAPES)}cannot import"
        in lines
    )
    assert f"error: plugin 'loud-forger' of {LOUD}: {shown(ESCAPES)}forged error" in lines
    assert f"{'forged':<14} {shown(ESCAPES)}forged" in lines


def test_arena_bots_json_carries_them_escaped_by_the_encoder(installed: Installer) -> None:
    installed("loud_plugin")
    done = invoke("bots", "--sandbox", "none", "--json")
    assert done.exit_code == 0, done.output
    assert raw_controls(done.output) == []  # the JSON encoder escapes them: "\u001b"
    data: dict[str, Any] = json.loads(done.output)
    bots = {b["name"]: b for b in data["bots"]}
    # names, values and descriptions exactly as registered (data, for a program)
    assert bots["loud"]["description"] == f"{ESCAPES}a loud description"
    assert bots["loud"]["params"] == {f"depth{CLEAR}": 3, "word": f"{TITLE}hello{CLIPBOARD}"}
    assert bots["forged"]["description"] == f"{ESCAPES}forged"
    # a plugin's error is one line made printable where the catalog records it
    errors = {e["plugin"]: e["error"] for e in data["errors"]}
    assert errors["loud-broken"] == f"RuntimeError: {shown(ESCAPES)}cannot import"
    assert errors["loud-forger"] == f"{shown(ESCAPES)}forged error"
    assert all(e.isprintable() for e in errors.values())


def test_a_plugin_deck_set_description_is_shown_made_visible(
    installed: Installer, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed("loud_plugin")
    # `arena decks show` asks plugins under --sandbox auto, which lists no third-party plugin
    # where bubblewrap is missing: ask them unsandboxed here
    monkeypatch.setattr("arena.cli.decks.command_sandbox", lambda *_: PLAIN)
    done = invoke("decks", "show", "loud-decks")
    assert done.exit_code == 0, done.output
    assert raw_controls(done.output) == []
    assert done.output.splitlines()[0] == (
        f"loud-decks (classic, public): {shown(ESCAPES)}loud decks"
    )
    as_json = invoke("decks", "show", "loud-decks", "--json")
    assert as_json.exit_code == 0, as_json.output
    assert raw_controls(as_json.output) == []
    assert json.loads(as_json.output)["description"] == f"{ESCAPES}loud decks"


def test_an_error_quoting_a_plugin_is_shown_made_visible(installed: Installer) -> None:
    installed("loud_plugin")
    done = invoke("play", "loud[nope=1]", "loud", "--sandbox", "none")
    assert done.exit_code == 2
    assert raw_controls(done.output) == []
    assert done.output.startswith("arena: error: bot 'loud' has no parameter 'nope'")
    assert f"depth{shown(CLEAR)}" in done.output


def test_arena_play_shows_a_bot_s_messages_and_output_made_visible(
    installed: Installer, tmp_path: Path
) -> None:
    installed("loud_plugin")
    logs = tmp_path / "logs"
    args = ("play", "loud-crasher", "loud", "--sandbox", "none", "--seed", "1", "--first", "0")
    done = invoke(*args, "--bot-logs", str(logs))
    assert done.exit_code == 0, done.output
    assert raw_controls(done.output) == []
    [fault] = [x for x in done.output.splitlines() if x.startswith("fault:")]
    assert f"RuntimeError: {shown(CLIPBOARD)}raised{shown(CLEAR)}" in fault
    as_json = invoke(*args, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert raw_controls(as_json.output) == []
    [recorded] = json.loads(as_json.output)["faults"]
    assert f"{shown(CLIPBOARD)}raised{shown(CLEAR)}" in recorded["message"]
    log = (logs / "seat0-loud-crasher.log").read_text()
    assert raw_controls(log) == []
    assert f"{shown(CLEAR)}printed{shown(TITLE)}\n" in log  # its lines kept, escapes shown


# --- limits on what a plugin registers --------------------------------------------------------


def test_a_plugin_over_the_limit_is_one_line_and_the_rest_loads(installed: Installer) -> None:
    installed("crowd")
    done = invoke("bots", "--sandbox", "none")
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    [error] = [x for x in lines if x.startswith("error:")]
    assert error.startswith("error: plugin 'horde' of arena-test-crowd: registers 10000 bots")
    assert f"at most {LIMITS.bots} per package" in error
    assert "no output" not in done.output
    listed = {x.split()[0] for x in lines if x and not x.startswith((" ", "error:", "bots run"))}
    assert {f"crowd-{i:03d}" for i in range(150)} <= listed
    assert {"greedy", "ismcts", "random"} <= listed
    assert not any(name.startswith("horde") for name in listed)


def _plugin() -> PluginInfo:
    return PluginInfo("forged", "forged.plugin", "arena-test-forged", "1.0")


def _bot(**fields: Any) -> dict[str, Any]:
    return {"name": "forged", "description": "", "params": {}, **fields}


@pytest.mark.parametrize(
    ("listing", "limit"),
    [
        ({"bots": [_bot(name=f"b{i}") for i in range(LIMITS.bots + 1)]}, "per package"),
        ({"bots": [_bot(description="x" * (LIMITS.description + 1))]}, "description of"),
        (
            {"bots": [_bot(params={f"p{i}": i for i in range(LIMITS.params + 1)})]},
            "parameters; at most",
        ),
        ({"bots": [_bot(params={"p" * (LIMITS.param_name + 1): 1})]}, "parameter name of"),
        ({"bots": [_bot(params={"p": "v" * (LIMITS.param_value + 1)})]}, "a default of"),
        (
            {"deck_sets": [{"name": f"d{i}", "decks": {}} for i in range(LIMITS.deck_sets + 1)]},
            "deck sets; at most",
        ),
        (
            {"deck_sets": [{"name": "d", "decks": {}, "description": "x" * 1000}]},
            "description of",
        ),
    ],
)
def test_each_limit_is_named(listing: dict[str, Any], limit: str) -> None:
    with pytest.raises(ListingLimitError, match=limit):
        catalog_module.listing_claims(_plugin(), listing)


def test_a_package_s_plugins_share_its_limit() -> None:
    listing = {"bots": [_bot(name=f"b{i}") for i in range(10)]}
    catalog_module.listing_claims(_plugin(), listing, (LIMITS.bots - 10, 0))
    with pytest.raises(ListingLimitError, match=f"{LIMITS.bots + 1} with its package's other"):
        catalog_module.listing_claims(_plugin(), listing, (LIMITS.bots - 9, 0))


def test_a_forged_listing_is_checked_like_a_registration() -> None:
    for forged in (_bot(variants=[f"classic{CLEAR}"]), _bot(players=[2, 7])):
        with pytest.raises(ValueError, match="claims"):
            catalog_module.listing_claims(_plugin(), {"bots": [forged]})


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (
            "import sys; sys.stderr.write('first\\nImportError: no module\\n'); sys.exit(3)",
            "its host exited with code 3 without sending a listing; its last output: "
            "ImportError: no module",
        ),
        ("import sys; sys.exit(0)", "its host exited with code 0 without sending a listing"),
        ("print('garbage')", "its host sent something that is not a listing: not JSON"),
        ('print(\'{"type": "quit"}\')', "its host sent a 'quit' message, not a listing"),
    ],
)
def test_a_missing_listing_says_what_happened(script: str, said: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        listing, failure = catalog_module.host_listing(proc, time.monotonic() + 30, 30)
    finally:
        proc.kill()
        proc.wait()
    assert listing is None and failure is not None
    assert failure.startswith(said)


# --- a slow register hook costs its time once --------------------------------------------------


def timed_bots(*extra: str) -> tuple[float, list[str]]:
    start = time.monotonic()
    done = invoke("bots", "--sandbox", "none", *extra)
    assert done.exit_code == 0, done.output
    return time.monotonic() - start, done.output.splitlines()


@pytest.mark.slow
@pytest.mark.alone
def test_a_hanging_register_hook_fails_once_and_is_not_waited_for_again(
    installed: Installer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    timeout = 8.0  # slow_plugin's slow hook sleeps 5 s, its hung one 300 s
    monkeypatch.setattr(catalog_module, "LIST_TIME", timeout)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a cache of its own
    installed("slow_plugin")

    first, lines = timed_bots()
    assert first >= timeout
    [hung] = [x for x in lines if x.startswith("error:")]
    assert hung == (
        "error: plugin 'hung' of arena-test-slow-plugin: no listing within 8 s "
        "(its register hooks did not finish)"
    )
    assert any(x.startswith("tortoise ") for x in lines)  # read after the hung one timed out

    second, lines = timed_bots()
    assert second < timeout / 2, f"the second listing took {second:.1f} s"
    [remembered] = [x for x in lines if x.startswith("error:")]
    assert remembered.startswith(hung) and "--refresh" in remembered
    assert any(x.startswith("tortoise ") for x in lines)

    third, lines = timed_bots("--refresh")
    assert third >= timeout
    assert [x for x in lines if x.startswith("error:")] == [hung]


def _site_copy(fixture_site: Callable[[str], Path], tmp_path: Path) -> tuple[Path, PluginInfo]:
    site = tmp_path / "site"
    shutil.copytree(fixture_site("crowd"), site)
    [dist] = md.distributions(path=[str(site)])
    ep = next(ep for ep in dist.entry_points if ep.name == "crowd")
    return site, PluginInfo(ep.name, ep.value, "arena-test-crowd", "1.0", dist)


def test_the_listing_key_follows_the_package_content(
    fixture_site: Callable[[str], Path], tmp_path: Path
) -> None:
    site, plugin = _site_copy(fixture_site, tmp_path)
    settings = {"sandbox": "none", "timeout": 60.0}
    key = listing_key(plugin, settings)
    assert key is not None and key == listing_key(plugin, settings)
    assert listing_key(plugin, {**settings, "timeout": 5.0}) != key
    module = site / "crowd" / "plugin.py"
    module.write_text(module.read_text() + "\n# changed\n")
    assert listing_key(plugin, settings) not in (None, key)


def _make_editable(site: Path, lines: list[str]) -> None:
    """Turn the copied site's distribution into an editable install whose ``.pth`` holds
    ``lines`` (and is recorded, as pip records it)."""
    [info] = site.glob("*.dist-info")
    (info / "direct_url.json").write_text(
        json.dumps({"url": "file:///src", "dir_info": {"editable": True}})
    )
    pth = site / "__editable__.arena_test_crowd-1.0.pth"
    pth.write_text("".join(f"{line}\n" for line in lines))
    with (info / "RECORD").open("a") as record:
        record.write(f"{pth.name},,\n")


def test_an_editable_install_is_remembered_by_its_sources(
    fixture_site: Callable[[str], Path], tmp_path: Path
) -> None:
    site, plugin = _site_copy(fixture_site, tmp_path)
    sources = tmp_path / "project" / "src"
    (sources / "crowd").mkdir(parents=True)
    module = sources / "crowd" / "plugin.py"
    module.write_text("# the author's source\n")
    _make_editable(site, [str(sources)])
    settings = {"sandbox": "none"}
    key = listing_key(plugin, settings)
    assert key is not None and key == listing_key(plugin, settings)
    module.write_text("# the author's source, edited\n")
    assert listing_key(plugin, settings) not in (None, key)


def test_a_package_whose_sources_cannot_be_followed_is_remembered_by_its_metadata(
    fixture_site: Callable[[str], Path], tmp_path: Path
) -> None:
    site, plugin = _site_copy(fixture_site, tmp_path)
    _make_editable(site, ["import something_unknown; something_unknown.install()"])
    assert plugin.dist is not None and content_stamp(plugin.dist) is None
    key = listing_key(plugin, {})
    assert key is not None  # never asked on every command: a hanging hook would cost each time
    module = site / "crowd" / "plugin.py"
    module.write_text(module.read_text() + "\n# changed\n")
    assert listing_key(plugin, {}) == key  # what it is remembered by is its metadata alone
    [info] = site.glob("*.dist-info")
    (info / "entry_points.txt").write_text("[arena.bots]\ncrowd = crowd.plugin\n")
    assert listing_key(plugin, {}) != key
    # the arena's own plugin, trusted, is asked again rather than remembered by its metadata
    own = PluginInfo("reference", "bots.plugin", "loveletter-arena", "0.1.0", plugin.dist)
    assert listing_key(own, {}) is None


def test_the_catalog_keeps_each_third_party_plugin_s_answer(
    installed: Installer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    installed("crowd")
    first = load_catalog(PLAIN)
    entries = (tmp_path / "cache" / "loveletter-arena" / "listings").glob("*.json")
    kept = sorted(json.loads(e.read_text())["plugin"] for e in entries)
    # (the arena's own plugin is kept too where the arena is not an editable install)
    assert [k for k in kept if "crowd" in k] == ["arena-test-crowd:crowd", "arena-test-crowd:horde"]
    again = load_catalog(PLAIN)
    assert sorted(again.bots) == sorted(first.bots)
    assert [e.plugin for e in again.errors] == [e.plugin for e in first.errors] == ["horde"]


# --- a tournament without --bots ---------------------------------------------------------------


def test_a_default_tournament_of_too_many_bots_is_refused(
    installed: Installer, tmp_path: Path
) -> None:
    installed("crowd")
    db = tmp_path / "arena.db"
    done = invoke("tournament", "--sandbox", "none", "--db", f"sqlite:///{db}")
    assert done.exit_code == 2
    assert done.output.count("\n") == 1 and done.output.startswith("arena: error: ")
    assert f"more than the {DEFAULT_FIELD_BOTS}" in done.output and "--bots" in done.output


def test_a_default_schedule_too_long_is_refused() -> None:
    with pytest.raises(TournamentError, match="--bots") as refused:
        plan_tournament(TournamentSpec(repeat=100_000), load_catalog(PLAIN))
    assert "games" in str(refused.value)


def test_a_named_field_of_many_bots_is_planned_as_before(installed: Installer) -> None:
    installed("crowd")
    bots = tuple(f"crowd-{i:03d}" for i in range(120))
    plan = plan_tournament(TournamentSpec(decks="random:1:1", bots=bots), load_catalog(PLAIN))
    assert len(plan.entrants) == 120
    assert len(plan.schedule) == comb(120, 2) * 2
