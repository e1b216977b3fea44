"""``arena submit``: strangers' packages come in through the sandbox, and each attack of the issue
("submitting a bot hands the competition over") is contained, through the real command, the real
sandbox and the real commands that play (``docs/sandbox.md``, "Submissions").

The wheels are written byte by byte (:mod:`wheels`); a project directory with a ``setup.py`` is
written into the test's directory. Everything runs with ``ARENA_SUBMISSIONS`` in the test's own
directory.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from test_plugin_data import CLEAR, CLIPBOARD, ESCAPES, TITLE, raw_controls, shown
from wheels import PLUGIN, bot_wheel, fixture_package, fixture_project, fixture_wheel, make_wheel

import arena
from arena.cli.main import cli
from arena.engine.jitcache import cache_dir
from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.hosting.submissions import Store

pytestmark = pytest.mark.usefixtures("bubblewrap")

REPO = Path(arena.__file__).resolve().parent.parent


def _in_private_tmp(path: Path) -> bool:
    """Whether a sandboxed process that writes ``path`` writes its own private ``/tmp`` (a
    tmpfs of the sandbox), not the machine's file."""
    return str(path).startswith("/tmp/")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ok(*args: str) -> str:
    """What the command printed on standard output (it must succeed)."""
    done = invoke(*args)
    assert done.exit_code == 0, done.output
    return done.stdout


def one_line_error(done: Result) -> str:
    assert done.exit_code == 2, done.output
    assert done.output.startswith("arena: error: ") and done.output.count("\n") == 1
    return done.output


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("ARENA_SUBMISSIONS", str(tmp_path / "submissions"))
    return Store(tmp_path / "submissions")


def wheels_plugin(bot: str, probe: str) -> str:
    """A plugin module registering ``bot`` as the ``Probe`` class that ``probe`` defines."""
    return PLUGIN.format(name=bot, extra=probe, factory="Probe")


def submitted(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok("submit", str(path), "--json"))
    return data


def submitted_with(option: str, path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok("submit", option, str(path), "--json"))
    return data


def play_logs(tmp_path: Path, *bots: str, seed: str = "1") -> list[str]:
    """Play one round between ``bots`` (sandboxed) and return each seat's host log."""
    logs = tmp_path / f"logs-{seed}"
    ok("play", *bots, "--sandbox", "bwrap", "--seed", seed, "--bot-logs", str(logs))
    return [(logs / f"seat{seat}-{bot}.log").read_text() for seat, bot in enumerate(bots)]


# --- a pure-Python wheel: submitted in seconds, played, recorded with its content hash ---------


@pytest.mark.slow
def test_a_wheel_is_submitted_and_plays_in_play_and_a_tournament(
    store: Store, tmp_path: Path
) -> None:
    wheel = bot_wheel(tmp_path / "w", "sub-alpha", "alpha")
    begun = time.perf_counter()
    data = submitted(wheel)
    took = time.perf_counter() - begun
    assert took < 15, f"submitting a pure-Python wheel took {took:.1f} s"
    assert data["distribution"] == "sub-alpha" and data["version"] == 1
    assert data["bots"] == ["alpha"]
    snapshot = store.snapshot(data["content"])
    assert (snapshot / "sub_alpha" / "plugin.py").is_file()
    assert not os.access(snapshot / "sub_alpha" / "plugin.py", os.W_OK) or os.geteuid() == 0
    assert (snapshot / "sub_alpha" / "plugin.py").stat().st_mode & 0o222 == 0
    # never in the arena's environment
    assert "sub-alpha" not in {d.metadata["Name"] for d in md.distributions()}
    listed = json.loads(ok("submissions", "--json"))
    assert [(r["distribution"], r["version"], r["content"]) for r in listed] == [
        ("sub-alpha", 1, data["content"])
    ]
    assert Path(listed[0]["log"]).read_text()
    ok("play", "alpha", "random", "--sandbox", "bwrap", "--seed", "2")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    ok(
        "tournament", "--bots", "alpha,random", "--decks", "random:2:1", "--sandbox", "bwrap",
        "--workers", "1", "--db", db, "--quiet",
    )  # fmt: skip
    report = json.loads(ok("report", "--db", db, "--json"))
    text = json.dumps(report)
    assert data["content"] in text  # provenance: the content hash of the submitted entrant's code
    assert "faults" in text


# --- the attacks ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_pth_file_in_a_wheel_never_runs(store: Store, tmp_path: Path) -> None:
    marker = tmp_path / "pth-ran"
    pth = f"import os; os.environ['ARENA_PTH_RAN'] = '1'; open({str(marker)!r}, 'a').close()\n"
    wheel = bot_wheel(
        tmp_path / "w",
        "sub-pth",
        "pthbot",
        more_files={"zz_sub_pth.pth": pth},
        extra="import os\nassert 'ARENA_PTH_RAN' not in os.environ, 'the .pth ran in my host'",
    )
    submitted(wheel)
    assert "ARENA_PTH_RAN" not in os.environ and not marker.exists()
    logs = play_logs(tmp_path, "pthbot", "random")
    assert "the .pth ran" not in logs[0]
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    ok(
        "tournament", "--bots", "pthbot,random", "--decks", "random:2:1", "--sandbox", "bwrap",
        "--workers", "2", "--db", db, "--quiet",
    )  # fmt: skip
    ok("leaderboard", "--db", db)
    assert "ARENA_PTH_RAN" not in os.environ and not marker.exists()
    report = json.loads(ok("report", "--db", db, "--json"))
    assert "the .pth ran" not in json.dumps(report)


@pytest.mark.slow
def test_a_numba_extensions_entry_point_never_runs_in_the_referee_or_another_host(
    store: Store, tmp_path: Path
) -> None:
    marker = tmp_path / "numba-extension-ran"
    ext = textwrap.dedent(f"""
        import os
        def init():
            os.environ["ARENA_NUMBA_EXT_RAN"] = "1"
            try:
                open({str(marker)!r}, "a").close()
            except OSError:
                pass
    """)
    # in its own host (its own sandbox), numba does load it: the attack is real
    loader = textwrap.dedent("""
        import os, sys
        class Loader(FirstLegal):
            def act(self, observation):
                from numba.core.entrypoints import init_all
                init_all()
                if os.environ.get("ARENA_NUMBA_EXT_RAN"):
                    print("MY EXTENSION RAN IN MY OWN HOST", file=sys.stderr)
                return observation.legal_actions[0]
    """)
    numby = bot_wheel(
        tmp_path / "w1",
        "sub-numby",
        "numby",
        extra=loader,
        factory="Loader",
        more_files={"sub_numby/ext.py": ext},
        more_entry_points="[numba_extensions]\ninit = sub_numby.ext:init\n",
    )
    # another submission whose bot runs numba's extension loading and says if it was reached
    watcher = textwrap.dedent("""
        import os
        class Watcher(FirstLegal):
            def act(self, observation):
                from numba.core.entrypoints import init_all
                init_all()
                if os.environ.get("ARENA_NUMBA_EXT_RAN"):
                    raise RuntimeError("another submission's numba extension ran in my host")
                return observation.legal_actions[0]
    """)
    watching = bot_wheel(
        tmp_path / "w2", "sub-watcher", "watcher", extra=watcher, factory="Watcher"
    )
    submitted(numby)
    submitted(watching)
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    ok(
        "tournament", "--bots", "numby,watcher,random", "--decks", "random:2:1", "--sandbox",
        "bwrap", "--workers", "1", "--db", db, "--quiet",
    )  # fmt: skip
    report = json.dumps(json.loads(ok("report", "--db", db, "--json")))
    assert "numba extension ran" not in report
    assert "MY EXTENSION RAN IN MY OWN HOST" in play_logs(tmp_path, "numby", "watcher")[0]
    # the referee's process (this one) never sees the entry point
    from numba.core.entrypoints import init_all

    init_all()
    assert not md.entry_points(group="numba_extensions").select(name="init")
    assert "ARENA_NUMBA_EXT_RAN" not in os.environ and not marker.exists()


@pytest.mark.slow
def test_a_setup_py_cannot_write_outside_its_build(store: Store, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub_builder").mkdir(parents=True)
    (project / "sub_builder" / "__init__.py").write_text("")
    (project / "sub_builder" / "plugin.py").write_text(
        textwrap.dedent("""
        from arena.bot import Bot
        from arena.hookspecs import hookimpl

        class FirstLegal(Bot):
            def act(self, observation):
                return observation.legal_actions[0]

        @hookimpl
        def arena_register_bots(register):
            register("builder", FirstLegal, "built from source")
    """)
    )
    targets = [
        REPO / "PWNED-by-setup",
        Path(sys.prefix) / "PWNED-by-setup",
        cache_dir() / "numba" / "PWNED-by-setup",
        store.base / "PWNED-by-setup",
        project / "PWNED-by-setup",
        Path.home() / "PWNED-by-setup",
    ]
    (project / "setup.py").write_text(
        textwrap.dedent(f"""
        import sys
        from setuptools import setup
        for target in {[str(t) for t in targets]!r}:
            try:
                with open(target, "w") as out:
                    out.write("pwned")
                print("WROTE", target, file=sys.stderr)
            except OSError as exc:
                print("REFUSED", target, type(exc).__name__, file=sys.stderr)
        setup(
            name="sub-builder",
            version="2.0",
            packages=["sub_builder"],
            entry_points={{"arena.bots": ["builder = sub_builder.plugin"]}},
        )
    """)
    )
    data = submitted(project)
    assert data["bots"] == ["builder"]
    for target in targets:
        assert not target.exists(), target
    log = Path(data["log"]).read_text()
    for target in targets:
        if _in_private_tmp(target):
            continue  # a checkout under /tmp: the write went to the build's own /tmp (see above)
        assert f"WROTE {target}\n" not in log, target
        assert f"REFUSED {target} " in log, target
    logs = play_logs(tmp_path, "builder", "random")
    assert "Traceback" not in logs[0]


@pytest.mark.slow
def test_a_bot_cannot_read_or_import_another_submission(store: Store, tmp_path: Path) -> None:
    victim = submitted(bot_wheel(tmp_path / "w1", "sub-victim", "victim"))
    secret = store.snapshot(victim["content"]) / "sub_victim" / "plugin.py"
    spy = textwrap.dedent(f"""
        import sys
        class Spy(FirstLegal):
            def act(self, observation):
                for path in ({str(secret)!r}, {str(store.base)!r}):
                    try:
                        if path.endswith(".py"):
                            open(path).read()
                        else:
                            __import__("os").listdir(path)
                        print("SAW", path, file=sys.stderr)
                    except OSError as exc:
                        print("HIDDEN", path, type(exc).__name__, file=sys.stderr)
                try:
                    __import__("sub_victim.plugin")
                    print("IMPORTED sub_victim", file=sys.stderr)
                except ImportError:
                    print("NO sub_victim", file=sys.stderr)
                return observation.legal_actions[0]
    """)
    submitted(bot_wheel(tmp_path / "w2", "sub-spy", "spy", extra=spy, factory="Spy"))
    log = play_logs(tmp_path, "spy", "victim")[0]
    assert "HIDDEN" in log and "NO sub_victim" in log, log
    assert "SAW" not in log and "IMPORTED" not in log, log


def test_top_level_txt_naming_a_folder_next_to_a_runner_script_is_not_mounted(
    store: Store, tmp_path: Path
) -> None:
    # a submission and an installed package (on PYTHONPATH) both name the operator's folder
    wheel = bot_wheel(tmp_path / "w", "sub-notes", "notes", top_level="sub_notes\nprivate_notes\n")
    submitted(wheel)
    site = tmp_path / "site"
    (site / "notes_pkg").mkdir(parents=True)
    (site / "notes_pkg" / "__init__.py").write_text("")
    info = site / "notes_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: notes-pkg\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("notes_pkg\nprivate_notes\n")
    (info / "RECORD").write_text(
        "notes_pkg/__init__.py,,\nnotes_pkg-1.0.dist-info/METADATA,,\n"
        "notes_pkg-1.0.dist-info/top_level.txt,,\nnotes_pkg-1.0.dist-info/RECORD,,\n"
    )
    runner = tmp_path / "runner"
    (runner / "private_notes").mkdir(parents=True)
    (runner / "private_notes" / "secret.txt").write_text("the operator's notes")
    (runner / "run.py").write_text(
        textwrap.dedent("""
        import json
        from arena.hosting.sandbox import choose_sandbox
        print(json.dumps(list(choose_sandbox("bwrap").exposed)))
    """)
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, str(runner / "run.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=runner,
        env=env,
    )
    exposed = json.loads(done.stdout)
    assert str((site / "notes_pkg").resolve()) in exposed or str(site.resolve()) in exposed
    notes = str((runner / "private_notes").resolve())
    assert not any(notes == p or notes.startswith(p.rstrip("/") + "/") for p in exposed)
    assert not any(p.startswith(str(runner)) for p in exposed), exposed


def test_a_clash_with_the_arena_packages_is_refused_in_one_line(
    store: Store, tmp_path: Path
) -> None:
    from wheels import make_wheel

    files = {
        "arena/__init__.py": "",
        "arena/evil.py": PLUGIN.format(name="evil", extra="", factory="FirstLegal"),
    }
    wheel = make_wheel(
        tmp_path / "w", "sub-clash", "1.0", files, "[arena.bots]\nevil = arena.evil\n"
    )
    error = one_line_error(invoke("submit", str(wheel)))
    assert "'arena'" in error and "sub-clash" in error
    numpyish = bot_wheel(tmp_path / "w2", "sub-numpy", "np", more_files={"numpy/__init__.py": ""})
    assert "'numpy'" in one_line_error(invoke("submit", str(numpyish)))
    assert store.records() == []


@pytest.mark.slow
def test_a_package_with_no_bot_or_a_taken_name_is_refused(store: Store, tmp_path: Path) -> None:
    from wheels import make_wheel

    none = make_wheel(tmp_path / "w", "sub-none", "1.0", {"sub_none/__init__.py": ""}, "")
    assert "no 'arena.bots' entry point" in one_line_error(invoke("submit", str(none)))
    thief = bot_wheel(tmp_path / "w2", "sub-thief", "greedy")
    assert "belongs to" in one_line_error(invoke("submit", str(thief)))
    submitted(bot_wheel(tmp_path / "w3", "sub-first", "firstname"))
    second = bot_wheel(tmp_path / "w4", "sub-second", "firstname")
    assert "belongs to sub-first" in one_line_error(invoke("submit", str(second)))


@pytest.mark.slow
def test_versions_withdraw_and_name_at_version(store: Store, tmp_path: Path) -> None:
    one = submitted(bot_wheel(tmp_path / "w1", "sub-versioned", "versioned", version="1.0"))
    two = submitted(bot_wheel(tmp_path / "w2", "sub-versioned", "versioned", version="1.1"))
    assert (one["version"], two["version"]) == (1, 2) and one["content"] != two["content"]
    catalog = load_catalog(choose_sandbox("bwrap"))
    assert two["content"] in catalog.bots["versioned"].plugin
    _, pinned = catalog.resolve("versioned@1")
    assert one["content"] in pinned.plugin
    ok("play", "versioned@1", "random", "--sandbox", "bwrap", "--seed", "3")
    ok("withdraw", "sub-versioned", "2")
    catalog = load_catalog(choose_sandbox("bwrap"))
    assert one["content"] in catalog.bots["versioned"].plugin
    listed = json.loads(ok("submissions", "--json"))
    assert [r["withdrawn"] for r in listed] == [False, True]
    assert "withdrawn" in one_line_error(invoke("play", "versioned@2", "random"))
    ok("withdraw", "sub-versioned", "1")
    assert "versioned" not in load_catalog(choose_sandbox("bwrap")).bots
    assert "no submission" in one_line_error(invoke("withdraw", "sub-versioned", "9"))


@pytest.mark.slow
def test_a_tournament_goes_on_with_the_version_it_started_with(
    store: Store, tmp_path: Path
) -> None:
    one = submitted(bot_wheel(tmp_path / "w1", "sub-steady", "steady", version="1.0"))
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    command = ["tournament", "--bots", "steady,random", "--decks", "random:2:1"]
    command += ["--sandbox", "bwrap", "--workers", "1", "--db", db, "--quiet", "--json"]
    first = json.loads(ok(*command))
    two = submitted(bot_wheel(tmp_path / "w2", "sub-steady", "steady", version="2.0"))
    # resumed, it goes on with the version it played (a new command makes a new tournament)
    resumed = ["tournament", "--resume", str(first["tournament"]), "--db", db, "--quiet"]
    again = json.loads(ok(*resumed, "--sandbox", "bwrap", "--json"))
    assert again["tournament"] == first["tournament"]
    report = json.dumps(json.loads(ok("report", "--db", db, "--json")))
    assert one["content"] in report and two["content"] not in report


def test_two_submits_at_once_take_two_versions(store: Store, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from arena.hosting.build import submit

    wheels = [
        bot_wheel(tmp_path / f"w{i}", "sub-racer", "racer", version=f"1.{i}") for i in range(2)
    ]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda w: submit(w, store), wheels))
    assert sorted(d.record.version for d in done) == [1, 2]
    assert sorted(r.version for r in store.records("sub-racer")) == [1, 2]


def _project(directory: Path, name: str, setup_body: str = "", requires: str = "") -> Path:
    """A source project of distribution ``name`` registering bot ``name`` from setup.py."""
    package = name.replace("-", "_")
    (directory / package).mkdir(parents=True)
    (directory / package / "__init__.py").write_text("")
    (directory / package / "plugin.py").write_text(
        "from arena.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef arena_register_bots(register):\n    pass\n"
    )
    (directory / "setup.py").write_text(
        f"from setuptools import setup\n{setup_body}\n"
        f"setup(name={name!r}, version='1.0', packages=[{package!r}],"
        f" install_requires=[{requires!r}] if {requires!r} else [],"
        f" entry_points={{'arena.bots': ['{name} = {package}.plugin']}})\n"
    )
    return directory


@pytest.mark.slow
def test_a_build_has_a_time_limit_and_names_what_it_lacks(store: Store, tmp_path: Path) -> None:
    from arena.hosting.build import BuildLimits, submit
    from arena.hosting.submissions import SubmissionError
    from arena.serve.pipeline import MISSING_HINT as SERVER_HINT

    slow = _project(tmp_path / "slow", "sub-slow", "import time\ntime.sleep(60)")
    begun = time.perf_counter()
    with pytest.raises(SubmissionError, match="longer than 3 s"):
        submit(slow, store, limits=BuildLimits(time=3))
    assert time.perf_counter() - begun < 20
    needy = _project(tmp_path / "needy", "sub-needy", requires="arena-no-such-dependency>=1")
    error = one_line_error(invoke("submit", str(needy)))
    assert "arena-no-such-dependency>=1" in error and "--network" in error
    # a competition server's build says what its participants can do instead
    with pytest.raises(SubmissionError) as refused:
        submit(needy, store, missing_hint=SERVER_HINT)
    assert str(refused.value).startswith("the build of needy failed: build failed: dependencies")
    assert "arena-no-such-dependency>=1" in str(refused.value)
    assert SERVER_HINT in str(refused.value) and "--network" not in str(refused.value)
    # the failed build's log is kept, and named
    kept = Path(error.rstrip().rsplit("(build log: ", 1)[1].rstrip(")"))
    assert kept.parent == store.base / "logs" and "Successfully built sub-needy" in kept.read_text()
    assert store.records() == []
    staging = store.base / "staging"
    assert not staging.exists() or not any(staging.iterdir())


def test_without_bubblewrap_nothing_is_submitted_or_played(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted(bot_wheel(tmp_path / "w1", "sub-early", "early"))
    from arena.hosting import sandbox

    monkeypatch.setattr(sandbox, "_bwrap_error", lambda: "bubblewrap (bwrap) is not installed")
    late = bot_wheel(tmp_path / "w2", "sub-late", "late")
    assert "bubblewrap" in one_line_error(invoke("submit", str(late)))
    catalog = load_catalog(sandbox.choose_sandbox("auto"))
    assert "early" not in catalog.bots
    assert any(e.distribution == "sub-early" for e in catalog.errors)
    assert "early" in one_line_error(invoke("play", "early", "random"))


def _installed_dist(site: Path, distribution: str, files: dict[str, str], extra: str = "") -> None:
    """A distribution installed (as pip would) in ``site``: its files, a dist-info with its
    entry points and RECORD; ``extra`` more RECORD lines (a ``.pth`` of an editable install)."""
    package = distribution.replace("-", "_")
    info = site / f"{package}-1.0.dist-info"
    info.mkdir(parents=True)
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    bot = distribution.rpartition("-")[2]
    (info / "entry_points.txt").write_text(f"[arena.bots]\n{bot} = {package}.plugin\n")
    record = [*files, f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in record) + extra)


def test_an_installed_bot_does_not_see_another_installed_bots_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "victim-checkout"
    checkout.mkdir()
    (checkout / "secret_policy.py").write_text("THE VICTIM'S POLICY")
    probe = textwrap.dedent(f"""
        import sys
        class Probe(FirstLegal):
            def act(self, observation):
                try:
                    open({str(checkout / "secret_policy.py")!r}).read()
                    print("SAW THE CHECKOUT", file=sys.stderr)
                except OSError:
                    print("CHECKOUT HIDDEN", file=sys.stderr)
                return observation.legal_actions[0]
    """)
    site = tmp_path / "site"
    for name in ("inst-victim", "inst-spy"):
        package = name.replace("-", "_")
        plugin = textwrap.dedent(wheels_plugin(name.rpartition("-")[2], probe))
        files = {f"{package}/__init__.py": "", f"{package}/plugin.py": plugin}
        # the victim is an editable install: its .pth points at its checkout
        pth = f"__editable__.{package}.pth"
        if name == "inst-victim":
            files[pth] = f"{checkout}\n"
        _installed_dist(site, name, files, f"{pth},,\n" if name == "inst-victim" else "")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    box = choose_sandbox("bwrap")
    assert not any(str(checkout).startswith(p) for p in box.exposed)
    victim_log, spy_log = play_logs(tmp_path, "victim", "spy")
    assert "CHECKOUT HIDDEN" in spy_log and "SAW" not in spy_log, spy_log
    assert "SAW THE CHECKOUT" in victim_log, victim_log  # its own checkout: shown to it


def test_a_host_writes_only_its_own_tmp() -> None:
    """The root of a host's file system (bubblewrap's tmpfs holding the mount points, such as
    the parents of the environment) is read-only: writing there would take memory past the
    scratch limit."""
    box = choose_sandbox("bwrap")
    code = textwrap.dedent("""
        for path in ("/big", "/tmp/small", __import__("sys").prefix + "/../x"):
            try:
                with open(path, "wb") as out:
                    out.write(b"x" * 1000)
                print("WROTE", path)
            except OSError:
                print("REFUSED", path)
    """)
    done = subprocess.run(
        box.command([sys.executable, "-c", code]),
        capture_output=True,
        text=True,
        env=box.environment(),
        check=True,
    )
    outside = Path(sys.prefix).parent / "x"
    # an environment under /tmp (a clone there) has its parents in the host's own /tmp, where a
    # write is scratch like any other; elsewhere its parents are the read-only root
    third = "WROTE" if _in_private_tmp(outside) else "REFUSED"
    assert done.stdout.split("\n")[:3] == [
        "REFUSED /big",
        "WROTE /tmp/small",
        f"{third} {sys.prefix}/../x",
    ], done.stdout
    assert not outside.exists()


@pytest.mark.skipif(
    not os.environ.get("ARENA_TEST_NETWORK"),
    reason="fetches a dependency from the package index (set ARENA_TEST_NETWORK=1)",
)
def test_with_network_a_missing_dependency_comes_as_a_wheel_into_the_snapshot(
    store: Store, tmp_path: Path
) -> None:
    project = _project(tmp_path / "net", "sub-net", requires="six>=1.10")
    (project / "sub_net" / "plugin.py").write_text(
        PLUGIN.format(name="netbot", extra="import six", factory="FirstLegal")
    )
    data = submitted_with("--network", project)
    snapshot = store.snapshot(data["content"])
    assert (snapshot / "six.py").is_file() and data["bots"] == ["netbot"]
    assert "six" not in {d.metadata["Name"] for d in md.distributions()}
    ok("play", "netbot", "random", "--sandbox", "bwrap", "--seed", "5")


# --- what a submitted package registers is data (tests/fixtures, submitted) --------------------


def refused(*args: str) -> str:
    """The one line ``arena submit`` refused with (no control character in it)."""
    error = one_line_error(invoke("submit", *args))
    assert raw_controls(error) == []
    return error


@pytest.mark.slow
def test_escape_sequences_in_a_submitted_package_are_shown_made_visible(
    store: Store, tmp_path: Path
) -> None:
    # loud_plugin's plugins that fail (a variant the registry refuses, an import error, a forged
    # listing with an error) are refused in one line that shows their escapes
    wheels = tmp_path / "wheels"
    variant = refused(str(fixture_wheel(wheels / "loud", "loud_plugin", ("loud",))))
    assert "plugin 'loud' failed: " in variant and f"classic{shown(CLIPBOARD)}" in variant
    broken = refused(str(fixture_wheel(wheels / "broken", "loud_plugin", ("loud-broken",))))
    assert f"RuntimeError: {shown(ESCAPES)}cannot import" in broken
    forger = refused(str(fixture_wheel(wheels / "forger", "loud_plugin", ("loud-forger",))))
    assert f"{shown(ESCAPES)}forged error" in forger
    assert store.records() == []
    # its plugin without the refused variant, as a source project whose build prints escapes
    project = fixture_project(
        tmp_path / "loud",
        "loud_plugin",
        ("loud",),
        f"import sys\nprint({ESCAPES + 'built'!r}, file=sys.stderr)",
    )
    module = project / "loud_plugin" / "plugin.py"
    kept = [x for x in module.read_text().splitlines() if '"loud-variants"' not in x]
    module.write_text("\n".join(kept) + "\n")
    done = invoke("submit", str(project))
    assert done.exit_code == 0, done.output
    assert raw_controls(done.output) == []

    text = ok("bots", "--sandbox", "bwrap")
    assert raw_controls(text) == []
    lines = text.splitlines()
    assert f"{'loud':<14} {shown(ESCAPES)}a loud description" in lines
    [params] = [x for x in lines if "parameters:" in x and "word=" in x]
    assert f"depth{shown(CLEAR)}=3 (an int)" in params
    assert f"word={shown(TITLE)}hello{shown(CLIPBOARD)} (a string)" in params
    assert f"{'loud-crasher':<14} crashes{shown(TITLE)}" in lines
    as_json = ok("bots", "--sandbox", "bwrap", "--json")
    assert raw_controls(as_json) == []
    bots = {b["name"]: b for b in json.loads(as_json)["bots"]}
    assert bots["loud"]["description"] == f"{ESCAPES}a loud description"
    assert bots["loud"]["params"] == {f"depth{CLEAR}": 3, "word": f"{TITLE}hello{CLIPBOARD}"}
    assert bots["loud-crasher"]["description"] == f"crashes{TITLE}"

    # arena submissions: its line, its build log (the package's own setup.py output), its JSON
    listed = ok("submissions", "--log")
    assert raw_controls(listed) == []
    # (pip's output keeps the escapes but drops their BEL)
    assert f"{shown(CLEAR)}{shown(TITLE[:-1])}" in listed and "built" in listed
    records = ok("submissions", "--json")
    assert raw_controls(records) == []
    [record] = json.loads(records)
    [bot] = [b for b in record["plugins"]["loud"]["listing"]["bots"] if b["name"] == "loud"]
    assert bot["description"] == f"{ESCAPES}a loud description"
    assert f"{CLEAR}{TITLE[:-1]}" in Path(record["log"]).read_text()  # kept, shown escaped


@pytest.mark.slow
def test_a_submitted_package_of_10000_bots_is_refused_in_one_line(
    store: Store, tmp_path: Path
) -> None:
    from arena.hosting.catalog import LIMITS

    horde = refused(str(fixture_wheel(tmp_path / "all", "crowd")))
    assert "plugin 'horde': registers 10000 bots" in horde
    assert f"at most {LIMITS.bots} per package" in horde
    assert store.records() == []
    # the package's other plugin, alone, is submitted and plays
    data = submitted(fixture_wheel(tmp_path / "crowd", "crowd", ("crowd",)))
    assert data["bots"] == [f"crowd-{i:03d}" for i in range(150)]
    listed = ok("bots", "--sandbox", "bwrap").splitlines()
    assert not any(x.startswith("error:") for x in listed)
    assert {"crowd-000", "crowd-149", "greedy", "random"} <= {x.split(" ")[0] for x in listed}
    ok("play", "crowd-007", "random", "--sandbox", "bwrap", "--seed", "3")


def test_two_plugins_of_a_submitted_package_share_its_limit(store: Store, tmp_path: Path) -> None:
    from arena.hosting.catalog import LIMITS

    # crowd's own plugin registers 150; under two entry points, 300: past the package's limit
    assert 150 < LIMITS.bots < 300
    distribution, files, _ = fixture_package("crowd")
    twice = "[arena.bots]\ncrowd = crowd.plugin\ncrowd-again = crowd.plugin\n"
    error = refused(str(make_wheel(tmp_path / "w", distribution, "1.0", files, twice)))
    assert (
        f"registers 150 bots (300 with its package's other plugins); at most {LIMITS.bots}" in error
    )
    assert store.records() == []


@pytest.mark.slow
@pytest.mark.alone
def test_a_hanging_register_hook_fails_a_submit_once_within_the_listing_timeout(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.hosting import build

    timeout = 8.0  # slow_plugin's slow hook sleeps 5 s, its hung one 300 s
    monkeypatch.setattr(build, "LIST_TIME", timeout)
    begun = time.monotonic()
    hung = refused(str(fixture_wheel(tmp_path / "hung", "slow_plugin", ("hung",))))
    took = time.monotonic() - begun
    assert timeout <= took < timeout + 20, f"the refused submit took {took:.1f} s"
    assert "plugin 'hung' failed: no listing within 8 s" in hung
    assert store.records() == []
    # the slow one is asked once, at submit; its listing is kept with the record (by its content
    # hash) and never asked again
    data = submitted(fixture_wheel(tmp_path / "slow", "slow_plugin", ("slow",)))
    assert data["bots"] == ["tortoise"]
    begun = time.monotonic()
    lines = ok("bots", "--sandbox", "bwrap").splitlines()
    took = time.monotonic() - begun
    assert any(x.startswith("tortoise ") for x in lines)
    assert not any(x.startswith("error:") for x in lines)
    # the hook sleeps 5 s: a listing under 5 s did not ask it (a loaded machine's listing alone can
    # take 3 s)
    assert took < 5, f"arena bots took {took:.1f} s: it asked the slow hook again"


def test_a_bot_installed_here_as_well_is_refused_with_the_uninstall_command(
    store: Store, tmp_path: Path
) -> None:
    """The guide's author installs their bot (``pip install -e``) and then submits it: its
    top-level package is then importable in the arena's environment, where a submitted host
    could import the installed copy instead of its own. One line says to uninstall it, with
    the command (a distribution of the same name is installed here: ``click`` stands for it)."""
    from wheels import make_wheel

    files = {"click/__init__.py": "", "click/botplugin.py": PLUGIN.format(
        name="clicky", extra="", factory="FirstLegal")}  # fmt: skip
    wheel = make_wheel(
        tmp_path / "w", "click", "99.0", files, "[arena.bots]\nc = click.botplugin\n"
    )
    error = one_line_error(invoke("submit", str(wheel)))
    assert "pip uninstall click" in error and "rename" not in error
    assert store.records() == []
