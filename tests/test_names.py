"""Bot names are owned: packages installed for real that try to take a name, each run through the
real catalog, hosts and commands.

- ``greedy_thief`` registers ``greedy``, the name of one of the arena's own bots;
- ``reference_impostor``'s entry point is called ``reference``, like the arena's own plugin;
- ``twice_registered`` registers ``echo`` twice, then ``after``;
- ``twin_a`` and ``twin_b``, two third-party packages, both register ``twin``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli.main import cli
from arena.errors import ArenaError, UnknownBotError
from arena.hosting.catalog import Catalog, load_catalog
from arena.hosting.names import BUILTIN_DISTRIBUTION, canonical, skeleton
from arena.hosting.plugins import load_registry
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.runner import (
    TournamentError,
    TournamentSpec,
    plan_resume,
    plan_tournament,
    start,
)
from leaderboard.store import Store

PLAIN = choose_sandbox("none")
THIEF = "arena-test-greedy-thief"
THIEF_MARK = "arena-test-greedy-thief imported"
IMPOSTOR = "arena-test-reference-impostor"
IMPOSTOR_MARK = "arena-test-reference-impostor imported"
TWICE = "arena-test-twice-registered"
TWIN_A, TWIN_B = "arena-test-twin-a", "arena-test-twin-b"

Installer = Callable[..., None]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def bots_json() -> dict[str, Any]:
    done = invoke("bots", "--sandbox", "none", "--json")
    assert done.exit_code == 0, done.output
    data: dict[str, Any] = json.loads(done.output)
    return data


def distributions(data: dict[str, Any]) -> dict[str, str]:
    return {b["name"]: b["distribution"] for b in data["bots"]}


def one_line_error(done: Result) -> str:
    assert done.exit_code == 2, done.output
    assert done.output.startswith("arena: error: ") and done.output.count("\n") == 1
    return done.output


def play_logs(tmp_path: Path, *bots: str) -> list[str]:
    """Play one round between ``bots`` and return each seat's host log."""
    logs = tmp_path / "logs"
    done = invoke("play", *bots, "--sandbox", "none", "--seed", "1", "--bot-logs", str(logs))
    assert done.exit_code == 0, done.output
    return [(logs / f"seat{seat}-{bot}.log").read_text() for seat, bot in enumerate(bots)]


# --- a third party registers a built-in name -------------------------------------------------


def test_a_built_in_name_stays_built_in(installed: Installer) -> None:
    installed("greedy_thief")
    data = bots_json()
    owners = distributions(data)
    assert owners["greedy"] == BUILTIN_DISTRIBUTION
    assert owners["pickpocket"] == THIEF
    assert all(owners[name] == BUILTIN_DISTRIBUTION for name in ("uniform", "dp", "ismcts"))
    [error] = data["errors"]
    assert (error["plugin"], error["distribution"]) == ("greedy-thief", THIEF)
    assert "'greedy'" in error["error"] and THIEF in error["error"]
    assert BUILTIN_DISTRIBUTION in error["error"] and "\n" not in error["error"]


def test_a_game_with_the_built_in_name_runs_the_built_in_host(
    installed: Installer, tmp_path: Path
) -> None:
    installed("greedy_thief")
    greedy, pickpocket = play_logs(tmp_path, "greedy", "pickpocket")
    assert THIEF_MARK in pickpocket  # the thief's own bot runs its plugin ...
    assert THIEF_MARK not in greedy  # ... and greedy's host never imports it


def test_the_refusal_is_shown_by_arena_bots(installed: Installer) -> None:
    installed("greedy_thief")
    done = invoke("bots", "--sandbox", "none")
    assert done.exit_code == 0, done.output
    [line] = [x for x in done.output.splitlines() if "greedy-thief" in x and "refused" in x]
    assert THIEF in line and BUILTIN_DISTRIBUTION in line


def test_the_in_process_registry_keeps_built_in_names(installed: Installer) -> None:
    installed("greedy_thief", "twice_registered")
    registry = load_registry()
    assert registry.get("greedy").distribution == BUILTIN_DISTRIBUTION
    assert registry.get("pickpocket").distribution == THIEF
    assert registry.get("echo").description == "the first echo"
    assert registry.get("after").distribution == TWICE
    assert {(e.plugin, e.distribution) for e in registry.errors} == {
        ("greedy-thief", THIEF),
        ("twice", TWICE),
    }


# --- an entry point named like the arena's own plugin ----------------------------------------


def test_an_entry_point_named_reference_loads_beside_the_built_in_one(
    installed: Installer, tmp_path: Path
) -> None:
    installed("reference_impostor")
    data = bots_json()
    assert data["errors"] == []
    owners = distributions(data)
    assert owners["impostor"] == IMPOSTOR
    assert owners["greedy"] == owners["uniform"] == BUILTIN_DISTRIBUTION
    impostor, greedy = play_logs(tmp_path, "impostor", "greedy")
    assert IMPOSTOR_MARK in impostor and IMPOSTOR_MARK not in greedy


def host_list(plugin: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "arena.hosting.host", "--plugin", plugin, "--list"],
        capture_output=True,
        timeout=60,
    )


def test_a_host_loads_one_entry_point_of_one_distribution(installed: Installer) -> None:
    installed("reference_impostor")
    ours = host_list(f"{BUILTIN_DISTRIBUTION}:reference")
    listing = json.loads(ours.stdout)
    assert listing["error"] is None and "greedy" in {b["name"] for b in listing["bots"]}
    assert IMPOSTOR_MARK.encode() not in ours.stderr
    theirs = json.loads(host_list(f"{IMPOSTOR}:reference").stdout)
    assert [b["name"] for b in theirs["bots"]] == ["impostor"]
    ambiguous = json.loads(host_list("reference").stdout)
    assert ambiguous["bots"] == []
    assert BUILTIN_DISTRIBUTION in ambiguous["error"] and IMPOSTOR in ambiguous["error"]


# --- a plugin registers a name twice ---------------------------------------------------------


def test_a_second_registration_by_the_same_plugin_is_refused_and_the_rest_loads(
    installed: Installer,
) -> None:
    installed("twice_registered")
    data = bots_json()
    bots = {b["name"]: b for b in data["bots"]}
    assert bots["echo"]["description"] == "the first echo"
    assert bots["after"]["distribution"] == TWICE
    [error] = data["errors"]
    assert (error["plugin"], error["distribution"]) == ("twice", TWICE)
    assert "'echo'" in error["error"] and "twice" in error["error"]


# --- two third parties claim one name --------------------------------------------------------


def test_a_name_two_third_parties_claim_belongs_to_neither(installed: Installer) -> None:
    installed("twin_a", "twin_b")
    data = bots_json()
    owners = distributions(data)
    assert "twin" not in owners
    assert (owners["only-a"], owners["only-b"]) == (TWIN_A, TWIN_B)
    assert {(e["plugin"], e["distribution"]) for e in data["errors"]} == {
        ("twin-a", TWIN_A),
        ("twin-b", TWIN_B),
    }
    for error in data["errors"]:
        assert "'twin'" in error["error"] and TWIN_A in error["error"] and TWIN_B in error["error"]
    refused = one_line_error(invoke("play", "twin", "uniform", "--sandbox", "none"))
    assert "'twin'" in refused and TWIN_A in refused and TWIN_B in refused


# --- arena new-bot ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "owner"), [("greedy", BUILTIN_DISTRIBUTION), ("pickpocket", THIEF)]
)
def test_new_bot_refuses_an_installed_name(
    installed: Installer, tmp_path: Path, name: str, owner: str
) -> None:
    installed("greedy_thief")
    target = tmp_path / "pkg"
    refused = one_line_error(invoke("new-bot", name, "--dir", str(target), "--sandbox", "none"))
    assert f"'{name}'" in refused and owner in refused
    assert not target.exists()


def test_new_bot_refuses_a_contested_name(installed: Installer, tmp_path: Path) -> None:
    installed("twin_a", "twin_b")
    refused = one_line_error(
        invoke("new-bot", "twin", "--dir", str(tmp_path / "pkg"), "--sandbox", "none")
    )
    assert TWIN_A in refused and TWIN_B in refused


# --- a stored tournament whose entrant now comes from elsewhere ------------------------------


def stored_tournament(catalog: Catalog, tmp_path: Path) -> tuple[Store, int]:
    store = Store(f"sqlite:///{tmp_path}/names.db")
    plan = plan_tournament(TournamentSpec(decks="random:1", bots=("twin", "uniform")), catalog)
    return store, start(plan, store)


def test_resume_refuses_an_entrant_from_another_distribution(
    installed: Installer, tmp_path: Path
) -> None:
    installed("twin_a")
    store, tid = stored_tournament(load_catalog(PLAIN), tmp_path)
    installed("twin_b")
    with pytest.raises(TournamentError) as info:
        plan_resume(store, tid, load_catalog(PLAIN))
    message = str(info.value)
    assert "'twin'" in message and TWIN_A in message and TWIN_B in message
    assert "\n" not in message


def test_resume_refuses_an_entrant_whose_name_is_now_contested(
    installed: Installer, tmp_path: Path
) -> None:
    installed("twin_a")
    store, tid = stored_tournament(load_catalog(PLAIN), tmp_path)
    installed("twin_a", "twin_b")
    with pytest.raises(ArenaError) as info:
        plan_resume(store, tid, load_catalog(PLAIN))
    assert isinstance(info.value, TournamentError | UnknownBotError)
    message = str(info.value)
    assert f"tournament {tid}" in message and TWIN_A in message and TWIN_B in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("caroIbot", "carolbot"),  # a capital I for an l
        ("car0l-bot", "carolbot"),  # a zero for an o, a separator
        ("greedy_", "greedy"),  # a separator at the end
        ("Greedy", "greedy"),
        ("my.bot", "my_bot"),
        ("bob 1", "Bob-l"),  # participant names hold spaces
        ("rnybot", "mybot"),
        ("vvinner", "winner"),
        ("clever", "dever"),
        ("5tar", "star"),
        ("8ob", "bob"),
        ("i1l", "lil"),
        ("2ero", "zero"),
    ],
)
def test_look_alike_names_share_a_skeleton(name: str, other: str) -> None:
    assert skeleton(name) == skeleton(other)


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("carolbot", "carlbot"),
        ("greedy", "greedy3"),
        ("bot1", "bot7"),
        ("alicebot", "alicebots"),
        ("random", "rand"),
        ("mybot", "nybot"),
        ("alice", "bob"),
        ("uniform", "unifarm"),
    ],
)
def test_names_that_look_different_do_not(name: str, other: str) -> None:
    assert skeleton(name) != skeleton(other)


def test_a_skeleton_keeps_the_canonical_folding() -> None:
    """What :func:`canonical` makes one name (case, runs of ``-_.``) stays one: a name is
    never told apart from itself."""
    for name in ("GREEDY", "my__bot", "A.b-C", "x"):
        assert skeleton(name) == skeleton(canonical(name))
