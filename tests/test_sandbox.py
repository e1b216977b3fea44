"""The bot sandbox: what a bot in a bubblewrap host cannot do, what the fallback still lets it do,
and how the sandbox is chosen."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import sandbox as S
from arena.hosted import HostHandle
from arena.referee import Referee

bwrap_missing = S._bwrap_error()
needs_bwrap = pytest.mark.skipif(
    bwrap_missing is not None, reason=f"no working bubblewrap here: {bwrap_missing}"
)


def snoop_report(box: S.Sandbox, secret: Path) -> str:
    """Play a round with the snoop bot trying to read ``secret``; return what it reported."""
    snoop = HostHandle(f"snoop[path={secret}]", "faulty", sandbox=box)
    other = HostHandle("uniform", "reference", sandbox=S.Sandbox("none"))
    try:
        record = Referee(move_time=5.0).play_round([snoop, other], seed=2)
        assert record.faults == []
        time.sleep(0.1)
        return snoop.log.text()
    finally:
        snoop.close()
        other.close()


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A database file in the working directory (outside /tmp, which a sandbox replaces anyway),
    and ARENA_DB naming it."""
    work = Path(tempfile.mkdtemp(prefix="arena-test-cwd-", dir="/var/tmp"))
    monkeypatch.chdir(work)
    db = work / "arena.db"
    db.write_bytes(b"SQLite format 3\0 secret standings")
    monkeypatch.setenv("ARENA_DB", f"sqlite:///{db}")
    yield db
    shutil.rmtree(work)


@needs_bwrap
def test_sandboxed_bot_sees_no_database_network_processes_or_writable_env(
    faulty_bots: Path, secret: Path
) -> None:
    report = snoop_report(S.choose_sandbox("bwrap"), secret)  # the working directory is hidden
    assert "NOREAD FileNotFoundError" in report
    assert "NONET" in report
    pids = int(report.split("PIDS ")[1].split()[0])
    assert pids <= 3  # bubblewrap's init and the host: no other process is visible
    assert "NOWRITE" in report


def test_without_a_sandbox_the_bot_can_read_files(faulty_bots: Path, secret: Path) -> None:
    """What docs/sandbox.md says the fallback does not protect against."""
    report = snoop_report(S.Sandbox("none"), secret)
    assert f"READ {secret}" in report


def test_hosts_never_inherit_the_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DB", "postgresql://user:password@db/arena")
    monkeypatch.setenv("PATH", "/usr/bin")
    for box in (S.Sandbox("none"), S.Sandbox("bwrap")):
        env = box.environment()
        assert "ARENA_DB" not in env and env["PATH"] == "/usr/bin"


@needs_bwrap
def test_working_directory_and_home_are_hidden_but_packages_are_not(tmp_path: Path) -> None:
    box = S.choose_sandbox("bwrap", hide=[tmp_path])
    assert str(tmp_path.resolve()) in box.hidden
    cmd = box.command(["python", "-m", "arena.host"])
    assert (
        cmd[0] == "bwrap" and "--unshare-all" in cmd and cmd[-3:] == ["python", "-m", "arena.host"]
    )
    import arena

    package = str(Path(arena.__file__).resolve().parent)
    if any(package.startswith(h + "/") for h in box.hidden):
        assert package in box.exposed or any(package.startswith(e + "/") for e in box.exposed)


def test_auto_falls_back_with_a_warning_and_bwrap_mode_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    S._bwrap_error.cache_clear()
    monkeypatch.setattr(S.shutil, "which", lambda name: None)
    try:
        box = S.choose_sandbox("auto")
        assert box.kind == "none" and box.warning and "not installed" in box.warning
        with pytest.raises(S.SandboxError, match="not installed"):
            S.choose_sandbox("bwrap")
        assert S.choose_sandbox("none").warning is None
        with pytest.raises(S.SandboxError, match="unknown sandbox"):
            S.choose_sandbox("docker")
    finally:
        S._bwrap_error.cache_clear()
