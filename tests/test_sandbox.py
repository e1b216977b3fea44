"""The threat model of docs/sandbox.md, attack by attack: each hostile bot of
tests/fixtures/hostile_bots (a real installed package) attacks from inside a real host in the real
sandbox, and the test checks containment: the referee finishes with a record, the fault is
recorded where one is due, and nothing escapes."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import arena
from arena.hosting import cgroups
from arena.hosting import sandbox as S
from arena.hosting.hosted import HostHandle
from arena.hosting.names import BUILTIN_DISTRIBUTION
from arena.hosting.renewal import EPOCH_MOUNT
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import GameRecord
from bots.uniform import UniformBot

bwrap_missing = S._bwrap_error()
cgroups_missing = "" if isinstance(cgroups.probe(), cgroups.Hierarchy) else str(cgroups.probe())
if os.environ.get("ARENA_REQUIRE_SANDBOX") and (bwrap_missing or cgroups_missing):
    # CI: the threat model's tests must run, not skip
    pytest.fail(
        f"ARENA_REQUIRE_SANDBOX is set but {bwrap_missing or cgroups_missing}", pytrace=False
    )
needs_bwrap = pytest.mark.skipif(
    bwrap_missing is not None, reason=f"no working bubblewrap here: {bwrap_missing}"
)
needs_cgroups = pytest.mark.skipif(
    bool(cgroups_missing), reason=f"no control groups here: {cgroups_missing}"
)


@pytest.fixture
def hostile(installed: Callable[..., None]) -> None:
    """The hostile bots, installed (before the sandbox is chosen, which lists what it shows)."""
    installed("hostile_bots")


def attack(spec: str, box: S.Sandbox, move_time: float = 30.0) -> tuple[GameRecord, str]:
    """Play one round of the hostile bot ``spec`` in seat 0 against an in-process bot; return
    the record and what the bot reported."""
    host = HostHandle(spec, "hostile", sandbox=box)
    try:
        record = Referee(move_time=move_time).play_round(
            [host, InProcessHandle(UniformBot(), "uniform")], seed=2
        )
        time.sleep(0.1)
        return record, host.log.text()
    finally:
        host.close()


def reported(log: str, what: str) -> str:
    """The result the bot reported for ``what``."""
    for line in log.splitlines():
        if line.startswith(f"ATTACK {what} "):
            return line[len(f"ATTACK {what} ") :]
    raise AssertionError(f"no {what!r} report in the bot's log:\n{log}")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory of the machine outside anything the sandbox shows (not under /tmp either,
    which a sandbox replaces anyway)."""
    work = Path(tempfile.mkdtemp(prefix="arena-test-outside-", dir="/var/tmp"))
    yield work
    shutil.rmtree(work, ignore_errors=True)


def _overwritten(folder: Path) -> list[str]:
    """Files under ``folder`` that begin with the poisoner's ``X`` (numba's files are pickles)."""
    found = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and path.read_bytes()[:1] == b"X":
                found.append(str(path))
        except OSError:
            pass  # removed meanwhile by the process compiling
    return found


@needs_bwrap
def test_a_bot_cannot_plant_code_where_the_referee_loads_kernels(hostile: None) -> None:
    box = S.choose_sandbox("bwrap")
    trusted = Path(box.kernels) / "numba"
    (trusted / "victim.nbi").write_bytes(b"compiled kernel index")
    # where the host sees the trusted cache (read-only)
    record, log = attack(f"poisoner[path={S.KERNELS_MOUNT}/numba]", box)
    assert record.faults == []
    assert reported(log, "plant") == "NOWRITE EROFS"  # there, and read-only
    assert reported(log, "overwrite") == "CHANGED 0"
    assert reported(log, "private-cache") == S.PRIVATE_KERNELS
    # what the attack would touch (another test process may be compiling into the cache meanwhile,
    # so the cache as a whole may change): its new file, and the first byte of every file
    assert not (trusted / "planted.nbi").exists()
    assert (trusted / "victim.nbi").read_bytes() == b"compiled kernel index"
    assert _overwritten(trusted) == []
    (trusted / "victim.nbi").unlink()


@needs_bwrap
def test_a_bot_run_by_root_has_no_privilege(hostile: None) -> None:
    record, log = attack("rooter", S.choose_sandbox("bwrap"))
    assert record.faults == []
    assert reported(log, "capeff") == "0000000000000000"
    assert reported(log, "uid") == f"{S.SANDBOX_UID}/{S.SANDBOX_UID}"
    for what in ("umount", "mount", "unshare", "setuid", "sysctl", "ptrace", "msgget", "semget",
                 "shmget", "mq_open", "sigcont", "setpgid"):  # fmt: skip
        assert reported(log, what).startswith("FAIL"), what
    # what the kernel would share between bots (locks and notifications on a file every
    # sandbox sees, whether its pages are in memory) or keep for the next process (Internet
    # sockets' states, the fork server's priority, scheduling and limits)
    refused = {
        "flock": "ENOSYS", "fcntl-lock": "EINVAL", "ofd-lock": "EINVAL", "notify": "EINVAL",
        "inotify": "ENOSYS", "mincore": "ENOSYS", "cachestat": "ENOSYS",
        "preadv2-nowait": errno.errorcode[errno.EOPNOTSUPP], "inet": "EAFNOSUPPORT",
        "nice-server": "EPERM", "nice-group": "EPERM", "prlimit-server": "EPERM",
        "sched-server": "EPERM",
    }  # fmt: skip
    assert {what: reported(log, what) for what in refused} == {
        what: f"FAIL {code}" for what, code in refused.items()
    }
    for what in ("preadv2", "unix", "nice-self", "setrlimit-self"):  # what a bot may do
        assert reported(log, what) == "OK", what
    assert S.choose_sandbox("bwrap").seccomp  # libseccomp is there: the filter is in force


@needs_bwrap
def test_the_file_system_is_an_allow_list(hostile: None, outside: Path) -> None:
    database = outside / "arena.db"
    database.write_bytes(b"SQLite format 3\0 standings")
    deck_file = outside / "secret-decks.txt"
    deck_file.write_text("8,1,1,1\n")
    checkout = Path(arena.__file__).resolve().parent.parent / "pyproject.toml"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    socket_path = outside / "service.sock"
    server.bind(str(socket_path))
    server.listen(1)
    server.settimeout(0.2)
    tcp = socket.create_server(("127.0.0.1", 0))
    port = tcp.getsockname()[1]
    paths = ";".join(str(p) for p in (database, deck_file, checkout, "/etc/passwd"))
    try:
        record, log = attack(
            f"explorer[paths={paths},socket={socket_path},port={port}]",
            S.choose_sandbox("bwrap", hide=[database, deck_file]),
        )
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
        tcp.close()
    assert record.faults == []
    for path in (database, deck_file, checkout, "/etc/passwd"):
        assert f"NOREAD {path} " in log
    top = set(reported(log, "ls").split(","))
    system = {"dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "tmp", "usr"}
    system.add(S.KERNELS_MOUNT.split("/")[1])
    system.add(EPOCH_MOUNT.split("/")[1])  # the arena's mount point for a fresh process
    assert top <= system | {p.split("/")[1] for p in S.choose_sandbox("bwrap").exposed}
    assert reported(log, "unix").startswith("NOCONNECT")
    assert reported(log, "tcp").startswith("NOCONNECT")


@needs_bwrap
def test_a_secret_inside_what_bots_see_is_refused() -> None:
    inside = Path(arena.__file__).resolve().parent / "arena.db"
    with pytest.raises(S.SandboxError, match="inside a directory the sandbox shows"):
        S.choose_sandbox("bwrap", hide=[inside])


@needs_bwrap
@needs_cgroups
def test_memory_is_limited_for_all_processes_of_a_bot_together(hostile: None) -> None:
    box = S.choose_sandbox("bwrap", S.Limits(memory_mb=512))
    record, log = attack("hog[mb=200,children=4,hold=5]", box)
    assert [f.kind for f in record.faults] == ["limit"]
    assert "memory limit (512 MiB" in record.faults[0].message
    alive = int(reported(log, "hog").split()[1])
    assert alive * 200 < 512  # the kernel killed children until the bot fit


@needs_bwrap
def test_scratch_space_is_limited(hostile: None) -> None:
    record, log = attack("filler[mb=768]", S.choose_sandbox("bwrap"))
    written = reported(log, "fill").split()
    assert written[0] == "STOPPED" and int(written[1]) <= 64 and written[2] == "ENOSPC"
    assert record.winners  # the round went on


@needs_bwrap
@needs_cgroups
def test_processes_are_limited_and_going_over_is_a_fault(hostile: None) -> None:
    record, log = attack("forker[n=300]", S.choose_sandbox("bwrap"))
    stopped = reported(log, "fork").split()
    assert stopped[0] == "STOPPED" and int(stopped[1]) < 64
    assert [f.kind for f in record.faults] == ["limit"]
    assert "process limit (64 processes" in record.faults[0].message


@needs_bwrap
def test_a_bot_sees_and_signals_no_other_process(hostile: None) -> None:
    box = S.choose_sandbox("bwrap")
    record, log = attack(f"spy[pid={os.getpid()}]", box)
    # bubblewrap's init, the fork server, the arena's agent (where the server is held) and the
    # process itself
    seen = reported(log, "pids").split()
    assert len(seen) <= (4 if box.hierarchy and box.hierarchy.freezes else 3), seen
    assert f"FAIL {os.getpid()} ProcessLookupError" in log  # the referee is out of sight
    others = [line for line in log.splitlines() if line.startswith("ATTACK kill-other ")]
    for line in others:  # the arena's agent: the bot may neither signal it nor trace it
        assert line.endswith("PermissionError"), others
    assert record.winners or record.faults  # the referee finished the round


@needs_bwrap
def test_a_bot_compiling_its_own_kernels_gets_a_private_cache(hostile: None) -> None:
    box = S.choose_sandbox("bwrap")
    trusted = Path(box.kernels) / "numba"
    record, log = attack("compiler", box, move_time=60)
    assert record.faults == []
    assert reported(log, "compiled") == f"45 {S.PRIVATE_KERNELS}"
    assert "plugin" in reported(log, "private")  # saved, in the bot's own /tmp
    # and nowhere the referee or another bot loads (the kernel is in the fixture's plugin.py)
    assert [p.name for p in trusted.rglob("plugin.total*")] == []


@needs_bwrap
def test_nothing_a_bot_starts_outlives_its_host(hostile: None) -> None:
    marker = f"arena-lingerer-{os.getpid()}-{time.monotonic_ns()}"
    _, log = attack(f"lingerer[marker={marker}]", S.choose_sandbox("bwrap"))
    assert reported(log, "linger") == "FORKED"
    time.sleep(0.3)
    left = [
        pid for pid in os.listdir("/proc") if pid.isdigit() and marker.encode() in _cmdline(pid)
    ]
    assert left == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@needs_bwrap
@needs_cgroups
def test_control_groups_are_removed_with_their_hosts(hostile: None) -> None:
    box = S.choose_sandbox("bwrap")
    assert box.hierarchy is not None
    host = HostHandle("rooter", "hostile", sandbox=box)  # it fails at everything it tries
    Referee(move_time=30).play_round([host, InProcessHandle(UniformBot(), "uniform")], seed=1)
    groups = [p for p in host._host.group.dirs.values()] if host._host and host._host.group else []
    host.close()
    assert groups and not any(p.exists() for p in groups)


def test_a_third_party_bot_never_runs_unsandboxed_unless_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    S._bwrap_error.cache_clear()
    monkeypatch.setattr(S.shutil, "which", lambda name: None)
    try:
        box = S.choose_sandbox("auto")
        assert box.kind == "none" and box.fallback and "not installed" in (box.warning or "")
        box.check("greedy", BUILTIN_DISTRIBUTION)  # the arena's own bots may
        with pytest.raises(S.SandboxError, match=r"without a sandbox.*--sandbox none"):
            box.check("explorer", "arena-test-hostile-bots")
        S.choose_sandbox("none").check("explorer", "arena-test-hostile-bots")  # asked for
        with pytest.raises(S.SandboxError, match="not installed"):
            S.choose_sandbox("bwrap")
        with pytest.raises(S.SandboxError, match="unknown sandbox"):
            S.choose_sandbox("docker")
    finally:
        S._bwrap_error.cache_clear()


def test_without_bubblewrap_only_third_party_bots_are_warned_about(
    installed: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without bubblewrap the arena's own bots play and nothing is said on their account; a
    command warns once, naming the distribution, only where a bot that is not the arena's own is
    installed (it cannot play here), and asking it to play is still refused."""
    from click.testing import CliRunner

    from arena.cli.main import cli

    S._bwrap_error.cache_clear()
    monkeypatch.setattr(S.shutil, "which", lambda name: None)
    play = ["play", "random", "uniform", "--seed", "1"]
    try:
        alone = CliRunner().invoke(cli, play)
        listing = CliRunner().invoke(cli, ["bots"])
        installed("greedy_thief")
        beside = CliRunner().invoke(cli, play)
        refused = CliRunner().invoke(cli, ["play", "pickpocket", "uniform"])
        asked = CliRunner().invoke(cli, ["play", "pickpocket", "uniform", "--sandbox", "none"])
    finally:
        S._bwrap_error.cache_clear()
    assert alone.exit_code == 0 and "warning" not in alone.stderr, alone.output
    first = listing.stdout.splitlines()[0]
    assert first.startswith("bots run in: no sandbox") and "bwrap) is not installed" in first
    assert beside.exit_code == 0 and beside.stdout == alone.stdout, beside.output
    [warning] = [line for line in beside.stderr.splitlines() if "warning" in line]
    assert warning.startswith(
        "arena: warning: bubblewrap (bwrap) is not installed, so the bots of "
        "arena-test-greedy-thief cannot play here"
    )
    assert "--sandbox none" in warning
    assert refused.exit_code != 0 and refused.stderr.count("arena: warning: ") == 1
    assert asked.exit_code == 0 and "warning" not in asked.stderr, asked.output  # asked for


def test_hosts_never_inherit_the_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DB", "postgresql://user:password@db/arena")
    monkeypatch.setenv("PATH", "/usr/bin")
    unsandboxed, sandboxed = S.Sandbox("none").environment(), S.Sandbox("bwrap").environment()
    assert "ARENA_DB" not in unsandboxed and "ARENA_DB" not in sandboxed
    assert unsandboxed["PATH"] == "/usr/bin"
    assert sandboxed["PATH"] == str(Path(sys.executable).parent)  # the operator's is not shown


@needs_bwrap
def test_a_bot_sees_neither_the_machine_nor_the_operators_paths(
    hostile: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator_path = "/opt/operator-tools/bin"
    monkeypatch.setenv("PATH", f"{operator_path}:{os.environ['PATH']}")
    box = S.choose_sandbox("bwrap")
    home = str(Path.home())
    # the arena's cache is in the operator's home (or their XDG_CACHE_HOME) here
    assert box.kernels.startswith(os.environ.get("XDG_CACHE_HOME") or home)
    _, log = attack("watcher", box)
    # the machine's load, every process's CPU time, memory, uptime and pressure: nothing
    for name in ("loadavg", "stat", "meminfo", "uptime"):
        assert reported(log, f"proc-{name}") == "EMPTY", log
    assert reported(log, "pressure") in ("EMPTY", "FAIL ENOENT")
    assert reported(log, "sysinfo") == "FAIL EPERM"
    # no path of the operator's in the environment: PATH is the interpreter's directory, the
    # arena's cache is seen at a path of the sandbox's own
    assert reported(log, "env-path") == str(Path(sys.executable).parent)
    assert reported(log, "env-home") == "/tmp"
    values = reported(log, "env-values")
    assert operator_path not in values and home not in values and box.kernels not in values
    points = reported(log, "mount-points").split("\t")
    assert S.KERNELS_MOUNT in points and box.kernels not in points
    assert not [p for p in points if p == home or p.startswith(home + "/.cache")]


def test_enforcement_says_which_limits_hold() -> None:
    limits = S.Limits(memory_mb=300, processes=10, scratch_mb=8)
    isolated = S.Sandbox("bwrap", limits, seccomp=True, cgroup_reason="no cgroups here")
    facts = isolated.enforcement()
    assert facts["memory_mb"] == 300 and facts["processes"] == 10 and facts["scratch_mb"] == 8
    assert "rlimits" in facts["enforced_by"] and "no cgroups here" in facts["enforced_by"]
    assert "seccomp filter" in facts["isolation"]
    assert "no sandbox" in S.Sandbox("none", limits).describe()
    # where the kernel cannot renew what a served process shares, its fork server cooperates
    freezing = cgroups.Hierarchy(2, {"": Path("/sys/fs/cgroup")})
    plain = S.Sandbox("bwrap", limits, hierarchy=freezing, renewal_reason="no overlays here")
    assert not plain.holds and S.Sandbox("bwrap", limits, hierarchy=freezing).holds
    assert "cooperative fork server (no overlays here" in plain.between_moves()
    with pytest.raises(S.SandboxError):
        S.Limits(processes=0)


needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root can run sandboxes as kernel uids of their own"
)


def _uids(pid: int) -> list[int]:
    """The real, effective, saved and file-system uids of process ``pid``."""
    with open(f"/proc/{pid}/status") as f:
        return [int(x) for x in next(line for line in f if line.startswith("Uid:")).split()[1:]]


@needs_bwrap
@needs_root
def test_each_sandbox_runs_as_a_kernel_uid_of_its_own() -> None:
    """Where the arena is root, nothing of a sandbox runs with root's uid on the machine: every
    process of a host (bubblewrap's own inside the sandbox, the fork server, the served
    process) has a uid of its host's own, none of the machine's users and not another host's."""
    from arena.hosting.epochs import sandbox_pids

    box = S.choose_sandbox("bwrap")
    assert box.drops, box.drop_reason
    assert "a kernel uid of its own" in box.enforcement()["isolation"]
    hosts = [HostHandle("random", "reference", sandbox=box) for _ in range(2)]
    seen = []
    try:
        for host in hosts:
            host.new_game("deck")
            record = Referee().play_round([host, InProcessHandle(UniformBot(), "u")], seed=1)
            assert record.faults == []
            assert host._host is not None and host._host.group is not None
            inside = list(sandbox_pids(host._host.group.pids()))
            assert len(inside) >= 3  # bubblewrap's init, the fork server, the served process
            uids = {u for pid in inside for u in _uids(pid)}
            assert len(uids) == 1 and 0 not in uids, uids
            seen.append(uids.pop())
    finally:
        for host in hosts:
            host.close()
    assert seen[0] != seen[1] and min(seen) >= S.SANDBOX_UIDS
    import pwd

    assert not {p.pw_uid for p in pwd.getpwall()} & set(seen)  # no user of the machine


REOPEN = """
import os, sys
fd = int(sys.argv[1])
try:
    out = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_APPEND)
    os.write(out, b"rewritten by the sandbox")
    print("WROTE")
except OSError as exc:
    print("REFUSED", exc.strerror)
"""


@needs_bwrap
@needs_root
def test_a_root_file_reached_through_a_descriptor_cannot_be_written(outside: Path) -> None:
    """The attack of a build on its own output: a process of the sandbox reopens, through
    ``/proc/self/fd``, a file of the arena's it was handed (read-only) and writes into it.
    With the arena's kernel uid it can (the file is root's); as a uid of its own it cannot."""
    box = S.choose_sandbox("bwrap")
    target = outside / "archive.tar"
    target.write_bytes(b"the arena's own bytes")
    target.chmod(0o644)
    python = [sys.executable, "-I", "-c", REOPEN]
    said = {}
    own = S._UIDS.acquire()
    try:
        for uid in (None, own):
            with open(target, "rb") as handed:
                argv = box.command([*python, str(handed.fileno())], uid=uid)
                done = subprocess.run(
                    argv, pass_fds=[handed.fileno()], capture_output=True, text=True, timeout=60
                )
            said[uid is None] = done.stdout.strip() or done.stderr
    finally:
        S._UIDS.release(own)
    # the same sandbox keeping the arena's uid: the attack works (what the defence stops)
    assert said[True] == "WROTE"
    assert said[False] == "REFUSED Permission denied"
    assert target.read_bytes().count(b"rewritten") == 1


@needs_bwrap
def test_a_host_starts_clean_whatever_blocks_or_ignores_signals(hostile: None) -> None:
    """A Ray worker blocks ``SIGINT`` and a shell in the background ignores it; a host started
    from there must not inherit either (a held fork server with a blocked signal is refused,
    and every bot was disqualified on Ray for it)."""
    done: dict[str, object] = {}

    def play() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGUSR2})
        box = S.choose_sandbox("bwrap")
        host = HostHandle("rooter", "hostile", sandbox=box)
        try:
            host.new_game("deck")
            done["record"] = Referee().play_round(
                [host, InProcessHandle(UniformBot(), "u")], seed=2
            )
            time.sleep(0.1)
            done["log"] = host.log.text()
        finally:
            host.close()

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        thread = threading.Thread(target=play)
        thread.start()
        thread.join(120)
    finally:
        signal.signal(signal.SIGINT, previous)
    record = done["record"]
    assert isinstance(record, GameRecord) and record.faults == []
    assert reported(str(done["log"]), "sigblk") == "0000000000000000"
    assert reported(str(done["log"]), "sigint") == "default"
