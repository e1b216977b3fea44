"""Where the submissions store is: one per arena installation (Python environment), so that
one environment's submissions are not another's; ``$ARENA_SUBMISSIONS`` overrides it; an old
per-user store that still holds submissions is named, never silently dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.hosting import submissions as S


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ARENA_SUBMISSIONS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


def test_each_environment_has_its_own_store(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "prefix", "/opt/one/.venv")
    one = S.root()
    monkeypatch.setattr(sys, "prefix", "/opt/two/.venv")
    two = S.root()
    assert one != two
    assert one.parent.parent == two.parent.parent == data_home / "loveletter-arena" / "environments"
    assert one.parent.name.startswith(".venv-") and one.name == "submissions"
    assert not S.root().is_relative_to("/opt/two/.venv")  # never inside what bots are shown
    monkeypatch.setenv("ARENA_SUBMISSIONS", "/srv/store")
    assert S.root() == Path("/srv/store")


def _record(base: Path, distribution: str) -> None:
    S.Store(base).write(S.Record(distribution, 1, "0" * 64, "0.1.0", "now"))


def test_a_submission_in_one_environment_is_not_listed_in_another(
    data_home: Path, tmp_path: Path
) -> None:
    """Two environments, told apart by their ``sys.prefix`` (what decides the store): a
    submission stored by one is listed by ``arena submissions`` there and not in the other."""
    code = (
        "import sys; sys.prefix = sys.argv[1]; sys.argv[1:] = ['submissions', '--json'];"
        "from arena.cli.main import main; main()"
    )

    def listed(prefix: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", code, prefix],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "XDG_DATA_HOME": str(data_home)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return [r["distribution"] for r in json.loads(done.stdout)]

    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    _record(
        data_home / "loveletter-arena" / "environments" / S.environment_key(first) / "submissions",
        "lowball",
    )
    assert listed(first) == ["lowball"]
    assert listed(second) == []


def test_an_old_per_user_store_is_named_not_dropped(data_home: Path) -> None:
    assert S.legacy_note() is None
    _record(S.legacy_root(), "oldbot")
    note = S.legacy_note()
    assert note is not None and str(S.legacy_root()) in note
    assert f"mv {S.legacy_root()} {S.root()}" in note
    from click.testing import CliRunner

    from arena.cli.main import cli

    done = CliRunner().invoke(cli, ["submissions"])
    assert done.exit_code == 0 and "arena: note: submissions made before" in done.output
