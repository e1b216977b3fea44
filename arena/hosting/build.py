"""``arena submit``: build a stranger's package inside the sandbox and keep it as a read-only
snapshot in the submissions store (:mod:`arena.hosting.submissions`), without ever running its
code outside a sandbox or installing it into the arena's environment.

The build runs in bubblewrap like a host (its own user namespace as uid 65534, no capability,
no other process in sight, a seccomp filter) and sees, read-only, only the system's libraries, the
interpreter and the arena's Python environment (for ``pip`` and the build backend), and the
package given; not the arena's checkout, its database, its caches, the store or any other bot.
Its only writable place is a private size-limited ``/tmp``, and it has a time limit:

1. the package is copied into ``/tmp`` (the original is never written);
2. a source package or project directory is built into a wheel with ``pip wheel --no-deps``,
   using the arena environment's setuptools without build isolation and without network (with
   ``--network``: build isolation, its build dependencies fetched as wheels only);
3. the wheel is installed with ``pip install --no-deps --no-compile --target`` into
   ``/tmp/out`` (installing a wheel runs none of its code, and here not even pip runs outside);
4. its declared dependencies that the arena's environment satisfies are left out; any other is
   fetched as a wheel only into the same directory with ``--network``, else the build fails
   naming it;
5. the result is streamed out as a tar archive and unpacked by the arena with ``tarfile``'s
   ``data`` filter (no absolute paths, links out or device files).

Then, outside the sandbox and without importing anything of it, the arena reads the build's
metadata (one ``*.dist-info``, its ``arena.bots`` entry points, its top-level names from
``RECORD``), refuses a clash with the arena's packages or modules, hashes it, moves it to
``snapshots/<sha256>/`` read-only, asks each plugin what it registers in a sandboxed host that
sees only that snapshot, checks name ownership, and writes the version's record.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.hosting import submissions as S
from arena.hosting.names import canonical, is_builtin
from arena.hosting.plugins import GROUP
from arena.hosting.sandbox import (
    LIBRARY_DIRS,
    Limits,
    bwrap_command,
    choose_sandbox,
    interpreter_places,
    seccomp_pipe,
)

#: Seconds a build may take, and MiB its scratch space (sources, wheels and the result) may hold.
BUILD_TIME = 300.0
BUILD_MB = 512
#: Seconds a submitted plugin may take to say what it registers.
LIST_TIME = 60.0
#: MiB of address space each process of a build may take.
BUILD_MEMORY_MB = 4096
#: The most bytes of build output kept in the log.
LOG_BYTES = 1 << 20

#: What runs inside the build sandbox (argv: kind, network, the package's path inside).
_BUILDER = r"""
import glob, os, pathlib, shutil, subprocess, sys, tarfile
kind, network, given = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
py = [sys.executable, "-m", "pip", "--no-input", "--no-color", "--disable-pip-version-check"]
offline = [] if network else ["--no-index"]
def run(*args):
    print("$ pip", " ".join(args), file=sys.stderr, flush=True)
    if subprocess.run([*py, *args], stdout=2).returncode:
        print("build failed: pip " + args[0] + " failed", file=sys.stderr)
        sys.exit(3)
os.makedirs("/tmp/wheels")
if kind == "wheel":
    wheel = os.path.join("/tmp/wheels", os.path.basename(given))
    shutil.copyfile(given, wheel)
else:
    if os.path.isdir(given):
        source = "/tmp/src"
        shutil.copytree(given, source, symlinks=True)
    else:
        source = os.path.join("/tmp", os.path.basename(given))
        shutil.copyfile(given, source)
    isolation = ["--only-binary", ":all:"] if network else ["--no-build-isolation"]
    run("wheel", "-v", "--no-deps", *offline, *isolation, "-w", "/tmp/wheels", source)
    built = glob.glob("/tmp/wheels/*.whl")
    if len(built) != 1:
        print("build failed: expected one wheel, got", built, file=sys.stderr)
        sys.exit(3)
    wheel = built[0]
run("install", "--no-deps", "--no-compile", "--no-index", "--target", "/tmp/out", wheel)
info = glob.glob("/tmp/out/*.dist-info")
if len(info) != 1:
    print("build failed: expected one *.dist-info, got", info, file=sys.stderr)
    sys.exit(3)
with open("/tmp/main", "w") as out:
    out.write(os.path.basename(info[0]))
import importlib.metadata as md
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
missing = []
requires = md.PathDistribution(pathlib.Path(info[0])).requires if info else None
for text in requires or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        have = md.version(req.name)
    except md.PackageNotFoundError:
        have = None
    if have is None or not req.specifier.contains(have, prereleases=True):
        missing.append(str(req))
if missing and not network:
    print("build failed: dependencies not in the arena's environment: " + ", ".join(missing),
          file=sys.stderr)
    sys.exit(4)
if missing:
    run("install", "--only-binary", ":all:", "--no-compile", "--target", "/tmp/out", *missing)
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as tar:
    tar.add("/tmp/out", arcname="out")
    tar.add("/tmp/main", arcname="main")
"""


@dataclass(frozen=True)
class Submitted:
    """What :func:`submit` stored, and how long it took."""

    record: S.Record
    seconds: float
    reused: bool  # the snapshot was there already (the same content was submitted before)


def _environment_dirs() -> list[str]:
    """The interpreter and the arena's Python environment: what a build needs to run pip."""
    places = interpreter_places()
    places.add(sys.base_prefix)
    system = [p for p in LIBRARY_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in places if os.path.exists(p)}, key=len):
        if path in ("/", "/usr") or any(
            path == k or path.startswith(k + "/") for k in [*kept, *system]
        ):
            continue
        kept.append(path)
    return kept


def build_command(
    given: str,
    inside: str,
    network: bool,
    scratch_mb: int = BUILD_MB,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command line of a build of ``given`` (seen at ``inside``)."""
    shown = [(path, path) for path in _environment_dirs()] + [(given, inside)]
    return bwrap_command(scratch_mb, shown, network=network, seccomp_fd=seccomp_fd)


def _kind(path: Path) -> str:
    if path.is_dir():
        if not any((path / name).exists() for name in ("pyproject.toml", "setup.py", "setup.cfg")):
            raise S.SubmissionError(f"{path} has no pyproject.toml, setup.py or setup.cfg")
        return "source"
    if path.suffix == ".whl":
        return "wheel"
    if path.name.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")):
        return "source"
    raise S.SubmissionError(f"{path} is not a wheel, a source package or a project directory")


def _limit_build() -> None:
    """In the build's process before it becomes bubblewrap: an address-space limit that its
    processes inherit."""
    import resource

    limit = BUILD_MEMORY_MB << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


#: What a failed offline build says to do about dependencies the arena's environment lacks.
MISSING_HINT = "arena submit --network fetches them as wheels"
#: The line of a failed build that names those dependencies.
_MISSING = "build failed: dependencies not in the arena's environment"


def _build(
    path: Path, staging: Path, network: bool, timeout: float, missing_hint: str = MISSING_HINT
) -> tuple[Path, str]:
    """Run the sandboxed build of ``path``; the unpacked result's directory and the log
    (``missing_hint`` follows the names of missing dependencies in the error)."""
    kind = _kind(path)
    inside = "/in/" + path.name if path.is_file() else "/in/src"
    if network or importlib.util.find_spec("setuptools") is None:
        network = True  # no backend of our own: build isolation, wheels fetched
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "SOURCE_DATE_EPOCH": "315532800",
    }
    if network:  # the operator's index and certificates (a TLS-inspecting proxy's CA), if any
        system_certs = "/etc/ssl/certs/ca-certificates.crt"
        if os.path.exists(system_certs):
            env["PIP_CERT"] = system_certs
        for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT"):
            if os.environ.get(key):
                env[key] = os.environ[key]
    seccomp_fd = seccomp_pipe()
    command = [
        *build_command(str(path), inside, network, seccomp_fd=seccomp_fd),
        sys.executable, "-I", "-c", _BUILDER, kind, "1" if network else "0", inside,
    ]  # fmt: skip
    archive = staging / "out.tar"
    log_path = staging / "build.log"
    with archive.open("wb") as out, log_path.open("wb") as log:
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=log, env=env,
                start_new_session=True, cwd="/", preexec_fn=_limit_build,
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )  # fmt: skip
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            code = None
    text = log_path.read_bytes()[-LOG_BYTES:].decode("utf-8", "replace")
    if code is None:
        raise S.SubmissionError(f"the build took longer than {timeout:g} s", log=text)
    if code != 0:
        lines = [x for x in text.splitlines() if x.strip()]
        failed = [x for x in lines if x.startswith("build failed:")]
        last = (failed or lines or [f"exit code {code}"])[-1]
        if "No space left on device" in text:
            last = f"the build went over its {BUILD_MB} MiB of scratch space"
        elif last.startswith(_MISSING):
            last = f"{last} ({missing_hint})"
        raise S.SubmissionError(f"the build of {path.name} failed: {last}", log=text)
    unpacked = staging / "unpacked"
    with tarfile.open(archive, mode="r:") as tar:
        tar.extractall(unpacked, filter="data")
    archive.unlink()
    result = unpacked / "out"
    main = (unpacked / "main").read_text() if (unpacked / "main").is_file() else ""
    if not main.endswith(".dist-info") or "/" in main or not (result / main).is_dir():
        raise S.SubmissionError(f"the build of {path.name} did not say which package it built")
    # which distribution is the submission's (its dependencies' metadata is there too)
    (result / S.MAIN_FILE).write_text(main)
    return result, text


def _check(snapshot: Path) -> tuple[Any, dict[str, str]]:
    """The build's distribution and its ``arena.bots`` entry points (name -> object), read from
    its metadata; :class:`SubmissionError` (one line) for none, or a clash of its top-level
    names with the arena's packages or the modules of its environment."""
    dist = S.snapshot_distribution(snapshot)
    name = dist.metadata["Name"] or ""
    if not name or is_builtin(name):
        raise S.SubmissionError(f"a submission may not call its distribution {name!r}")
    plugins = {ep.name: ep.value for ep in dist.entry_points if ep.group == GROUP}
    if not plugins:
        raise S.SubmissionError(f"{name} has no {GROUP!r} entry point: it registers no bot")
    clashes = sorted(
        n for n in S.top_level_names(dist)
        if n in S.ARENA_PACKAGES or n in sys.stdlib_module_names or _importable(n)
    )  # fmt: skip
    if clashes:
        raise S.SubmissionError(
            f"{name} is refused: its top-level name {clashes[0]!r} is a package of the arena or "
            "of its environment (rename it)"
        )
    return dist, plugins


def _importable(name: str) -> bool:
    """Whether ``name`` is a top-level module of the arena's environment (found, not run)."""
    if not name.isidentifier():
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return True


def _list_plugins(snapshot: Path, content: str, plugins: dict[str, str]) -> dict[str, Any]:
    """Ask each plugin of the snapshot, in a sandboxed host that sees that snapshot and no
    other, what it registers (as the catalog asks an installed plugin)."""
    from arena.hosting.catalog import LIMITS, host_listing, listing_claims
    from arena.hosting.plugins import PluginInfo

    box = replace(choose_sandbox("bwrap"), limits=Limits())
    out: dict[str, Any] = {}
    earlier = (0, 0)  # the bots and deck sets its earlier plugins registered: one limit a package
    for entry_point, value in plugins.items():
        ref = S.submission_ref(content, entry_point)
        argv = [sys.executable, "-m", "arena.hosting.host", "--plugin", ref]
        inside = box.submission_path(str(snapshot))
        host = box.launch([*argv, "--submission", inside, "--list"], [(str(snapshot), inside)])
        try:
            listing, failure = host_listing(host.process, time.monotonic() + LIST_TIME, LIST_TIME)
        finally:
            host.close()
        if listing is None or listing.get("error"):
            problem = failure or str(listing.get("error") if listing else "")
            raise S.SubmissionError(f"plugin {entry_point!r} failed: {problem[: LIMITS.error]}")
        try:
            bots, decks = listing_claims(PluginInfo(ref, value, "", ""), listing, earlier)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise S.SubmissionError(f"plugin {entry_point!r}: {exc}") from None
        if not listing.get("bots"):
            raise S.SubmissionError(f"plugin {entry_point!r} registers no bot")
        out[entry_point] = {"value": value, "listing": listing}
        earlier = (earlier[0] + len(bots), earlier[1] + len(decks))
    return out


def _check_names(distribution: str, plugins: dict[str, Any], store: S.Store) -> None:
    """A bot name belongs to the distribution that claimed it first: refuse names the arena's
    own bots, an installed package or another submitted distribution already registers."""
    from arena.hosting.catalog import load_catalog

    catalog = load_catalog(choose_sandbox("bwrap"), store=store)
    taken = {canonical(n): e.distribution for n, e in catalog.bots.items()}
    for record in store.records():
        if canonical(record.distribution) != canonical(distribution):
            taken.update({canonical(n): record.distribution for n in record.bots})
    for plugin in plugins.values():
        for bot in plugin["listing"]["bots"]:
            owner = taken.get(canonical(str(bot["name"])))
            if owner is not None and canonical(owner) != canonical(distribution):
                raise S.SubmissionError(
                    f"bot {bot['name']!r} of {distribution} is refused: the name belongs to "
                    f"{owner} (choose another name)"
                )


def submit(path: str | os.PathLike[str], store: S.Store | None = None, network: bool = False,
           timeout: float = BUILD_TIME,
           claim: Callable[[str], None] | None = None,
           missing_hint: str = MISSING_HINT) -> Submitted:  # fmt: skip
    """Build ``path`` (a wheel, a source package or a project directory) in the sandbox and
    store it as the next version of its distribution; :class:`SubmissionError` (one line) if it
    cannot be (see the module docstring). ``claim``, if given, is called with the canonical
    distribution name before the version is stored, under the store's lock; whatever it raises
    stops the submission (a competition server's check that the distribution is the
    submitter's). ``missing_hint`` is what the error says to do about dependencies the arena's
    environment lacks (by default: submit with ``--network``)."""
    begun = time.perf_counter()
    store = store or S.Store()
    given = Path(path).absolute()
    if not given.exists():
        raise S.SubmissionError(f"no such file or directory: {given}")
    choose_sandbox("bwrap")  # a submission is never built or run without the sandbox
    (store.base / "staging").mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=store.base / "staging"))
    log = ""
    try:
        built, log = _build(given, staging, network, timeout, missing_hint)
        dist, plugins = _check(built)
        distribution, package_version = str(dist.metadata["Name"]), str(dist.version)
        content = S.content_hash(built)
        snapshot = store.snapshot(content)
        reused = snapshot.exists()
        if not reused:
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            try:  # moved while writable (moving a directory needs that), then made read-only
                os.rename(built, snapshot)
                S.make_read_only(snapshot)
            except OSError:
                if not snapshot.is_dir():  # not the same content submitted at the same time
                    raise
                reused = True
        listed = _list_plugins(snapshot, content, plugins)
        with store.lock():
            _check_names(distribution, listed, store)
            if claim is not None:
                claim(canonical(distribution))
            version = store.next_version(distribution)
            logs = store.base / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            log_path = logs / f"{canonical(distribution)}-{version}.log"
            log_path.write_text(log)
            record = S.Record(
                distribution=distribution,
                version=version,
                content=content,
                package_version=package_version,
                created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                plugins=listed,
                log=str(log_path),
            )
            store.write(record)
    except S.SubmissionError as exc:
        exc.log = exc.log or log  # a package built but refused: its build says what it holds
        raise
    except ArenaError as exc:  # the claim refused it
        raise S.SubmissionError(str(exc), log=log) from exc
    finally:
        S.make_writable(staging)
        shutil.rmtree(staging, ignore_errors=True)
    return Submitted(record, time.perf_counter() - begun, reused)


def read_log(record: S.Record) -> str:
    """The build log of ``record`` ('' when it is gone)."""
    try:
        return open(record.log, encoding="utf-8", errors="replace").read()
    except OSError:
        return ""
