"""Shared fixtures: the misbehaving test bots, installed as a real package with entry points."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


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
