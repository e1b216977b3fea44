"""Shared fixtures: the test bot packages of tests/fixtures, installed as real packages with entry
points, and ``bubblewrap``, for the tests that need the sandbox.

The suite runs on two processes (pytest-xdist); a test marked ``alone`` (one that measures time
or depends on an idle processor) holds the machine: it waits for the other process's test to
finish, and that process waits for it.

A test that needs a tool the machine may lack skips with the reason where it is missing, unless
CI requires the tool (``.ci/run`` sets ``ARENA_REQUIRE_SANDBOX=1``, ``ARENA_REQUIRE_BROWSER=1``
and ``ARENA_REQUIRE_POSTGRES=1``): then it fails with the reason. Everything else passes
whatever is installed.
"""

from __future__ import annotations

import fcntl
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres import postgres_server as postgres_server  # the fixture, for every test

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def machine_share(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Under pytest-xdist, every test holds the machine shared and a test marked ``alone``
    exclusively (a lock file beside the workers' temporary folders). A test waiting to be alone
    holds a turnstile that every test passes before it takes its share, so the other process
    cannot go on starting tests ahead of it (flock favours no waiter): it waits for one test at
    most, instead of its process idling for as long as the other one has tests."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    alone = request.node.get_closest_marker("alone") is not None
    base = tmp_path_factory.getbasetemp().parent
    with open(base / "machine.lock", "a") as held, open(base / "machine.turnstile", "a") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(held, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield


@pytest.fixture(scope="session")
def bubblewrap() -> None:
    """For a test that needs a working bubblewrap: one that plays a bot that is not the arena's
    own under the default sandbox (``--sandbox auto`` lets only the arena's own bots play without
    bubblewrap), or the sandbox itself. Skipped with the reason where bubblewrap does not work
    here; failed where ``ARENA_REQUIRE_SANDBOX`` is set."""
    from arena.hosting.sandbox import _bwrap_error

    missing = _bwrap_error()
    if missing is not None:
        if os.environ.get("ARENA_REQUIRE_SANDBOX"):
            pytest.fail(f"ARENA_REQUIRE_SANDBOX is set but {missing}", pytrace=False)
        pytest.skip(f"no working bubblewrap here: {missing} (Debian: apt install bubblewrap)")


@pytest.fixture(scope="session")
def faulty_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the ``arena-test-faulty-bots`` package, pip-installed into it."""
    target = tmp_path_factory.mktemp("faulty-site")
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
            "--no-build-isolation", "--target", str(target), str(FIXTURES / "faulty_bots"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return target


@pytest.fixture
def faulty_bots(faulty_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Make the faulty bots visible to this process's entry points and to bot hosts."""
    monkeypatch.syspath_prepend(str(faulty_site))
    monkeypatch.setenv("PYTHONPATH", str(faulty_site))
    yield faulty_site


def _install(source: Path, target: Path) -> None:
    """``pip install`` the package at ``source`` into the directory ``target`` (from a copy, so
    no build files are left among the fixtures)."""
    copy = target.parent / f"{source.name}-src"
    shutil.copytree(source, copy)
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
            "--disable-pip-version-check", "--target", str(target), str(copy),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``fixture_site(NAME)``: a directory holding the package ``tests/fixtures/NAME``,
    pip-installed into it on first use (each package gets a directory of its own)."""
    sites: dict[str, Path] = {}

    def site(name: str) -> Path:
        if name not in sites:
            target = tmp_path_factory.mktemp(name) / "site"
            _install(FIXTURES / name, target)
            sites[name] = target
        return sites[name]

    return site


@pytest.fixture
def installed(
    fixture_site: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., None]:
    """``installed(NAME, ...)``: make exactly these fixture packages visible to this process's
    entry points and to bot hosts (a later call replaces the earlier one's packages)."""
    path = list(sys.path)
    outer = os.environ.get("PYTHONPATH")

    def install(*names: str) -> None:
        sites = [str(fixture_site(name)) for name in names]
        monkeypatch.setattr(sys, "path", [*sites, *path])
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (*sites, outer) if p))
        importlib.invalidate_caches()

    return install
