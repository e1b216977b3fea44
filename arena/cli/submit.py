"""``arena submit``, ``arena submissions`` and ``arena withdraw``: strangers' bots, built in the
sandbox and kept as read-only snapshots outside the arena's environment
(:mod:`arena.hosting.build`, :mod:`arena.hosting.submissions`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from arena.cli.options import BUILD_LIMITS, build_limit_options, build_limits, json_option
from arena.errors import ArenaError, printable


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=True, dir_okay=True))
@click.option(
    "--network",
    is_flag=True,
    help="Let the build fetch what it needs as wheels only: the build backend (with build "
    "isolation) and declared dependencies the arena's environment lacks. Without it the build "
    "has no network at all.",
)
@click.option(
    "--server",
    metavar="URL",
    help="Send PATH to the competition server at URL instead (arena serve; a project "
    "directory is packed as a source package first, without running any of it): the server "
    "builds, checks and places it in the ladder; the statuses are shown as they change.",
)
@click.option(
    "--build-time",
    type=click.FloatRange(min=1.0, max=86_400.0),
    default=300.0,
    show_default=True,
    help="Seconds the build may take (until its output is ready).",
)
@build_limit_options
@click.option("--token", metavar="TOKEN", help="With --server: your participant token.")
@click.option("--no-wait", is_flag=True, help="With --server: return once the upload is queued.")
@json_option
def submit(
    path: str,
    network: bool,
    server: str | None,
    build_time: float,
    token: str | None,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Make the bot package PATH (a wheel, a source package or a project directory) playable
    here, without running any of its code outside the sandbox.

    It is built and installed inside the bubblewrap sandbox (no privilege, a uid of its own
    where the arena is root, no view of the arena's files, the database or other bots, limits
    on its time, memory, processes, CPU, output and log), and its output is copied out (regular
    files and directories only) into a read-only snapshot of its own in this installation's
    submissions store ($ARENA_SUBMISSIONS, default
    ~/.local/share/loveletter-arena/environments/<environment>/submissions: one per Python
    environment), never into the arena's environment. Each submit of a distribution is its
    next version; tournaments play the latest unless told NAME@VERSION. Bubblewrap is
    required (docs/sandbox.md).
    """
    if server is not None:
        ctx = click.get_current_context()
        given = [
            option
            for option, name in (("--build-time", "build_time"),
                                 *((o, n) for o, n, *_ in BUILD_LIMITS))
            if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT
        ]  # fmt: skip
        if given:
            raise click.UsageError(f"{given[0]} is for a build here: the server has its own limits")
        _submit_to_server(Path(path), server, token, no_wait, as_json)
        return
    if token is not None or no_wait:
        raise click.UsageError("--token and --no-wait go with --server")
    from arena.hosting.build import submit as build_and_store
    from arena.hosting.submissions import Store, SubmissionError

    _legacy_note()
    limits = build_limits(build_time)
    try:
        done = build_and_store(path, network=network, limits=limits)
    except SubmissionError as exc:
        if not exc.log:
            raise
        kept = _keep_failed_log(Store(), Path(path), exc.log)
        raise SubmissionError(f"{exc} (build log: {kept})") from None
    record = done.record
    if done.degraded:
        click.echo(printable(f"arena: note: {done.enforcement}"), err=True)
    if as_json:
        answer = {**record.to_json(), "seconds": round(done.seconds, 3), "build": done.enforcement}
        click.echo(json.dumps(answer, indent=2))
        return
    click.echo(
        printable(
            f"submitted {record.distribution} version {record.version} "
            f"({record.package_version}, sha256 {record.content[:16]}) in {done.seconds:.1f} s: "
            f"bots {', '.join(record.bots)}"
        )
    )


def _legacy_note() -> None:
    """Say on stderr where an old per-user store is, while it holds submissions not read."""
    from arena.hosting.submissions import legacy_note

    note = legacy_note()
    if note is not None:
        click.echo(printable(f"arena: note: {note}"), err=True)


def _keep_failed_log(store: Any, path: Path, log: str) -> Path:
    """Write the log of a failed build of ``path`` into the store's ``logs`` directory; its
    path."""
    logs = store.base / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    kept = logs / f"failed-{stamp}-{path.absolute().name}.log"
    kept.write_text(log, encoding="utf-8")
    return kept


#: Seconds between two looks at an upload's status.
POLL_SECONDS = 1.0
#: Seconds ``arena submit --server`` follows an upload before giving up (it goes on there).
WAIT_SECONDS = 3600.0
#: The statuses an upload ends in.
FINAL = ("ranked", "failed")


def _submit_to_server(
    path: Path, server: str, token: str | None, no_wait: bool, as_json: bool
) -> None:
    """``arena submit --server``: upload, then follow the status until it is final."""
    from arena.serve.client import status, upload

    if not token:
        raise click.UsageError("--server needs --token (the organizer gave you one)")
    answer = upload(server, token, path)
    upload_id = int(answer["id"])
    begun = time.monotonic()
    shown = ""
    while True:
        state = answer if no_wait else status(server, token, upload_id)
        if state["status"] != shown and not as_json:
            shown = state["status"]
            click.echo(printable(f"upload {upload_id}: {shown}"), err=True)
        if no_wait or state["status"] in FINAL:
            break
        if time.monotonic() - begun > WAIT_SECONDS:
            raise ArenaError(
                f"upload {upload_id} is still {state['status']} after {WAIT_SECONDS:g} s; "
                f"see {server.rstrip('/')}/api/submissions/{upload_id}"
            )
        time.sleep(POLL_SECONDS)
    if as_json:
        click.echo(json.dumps(state, indent=2))
    elif state["status"] == "ranked":
        click.echo(
            printable(
                f"{state['distribution']} version {state['version']} built, checked and "
                f"placed: bots {', '.join(state['bots'])} "
                f"(see {server.rstrip('/')}/api/leaderboard)"
            )
        )
    elif state["status"] == "failed":
        click.echo(printable(f"upload {upload_id} failed: {state['reason']}"))
    if state["status"] == "failed":
        sys.exit(1)


@click.command()
@click.option("--log", "show_log", is_flag=True, help="Print each version's build log too.")
@json_option
def submissions(show_log: bool, as_json: bool) -> None:
    """List every submitted version: distribution, version, content hash, when, the bots it
    registers, whether it is withdrawn, and where its build log is."""
    from arena.hosting.build import read_log
    from arena.hosting.submissions import Store

    _legacy_note()
    records = Store().records()
    if as_json:
        click.echo(json.dumps([r.to_json() for r in records], indent=2))
        return
    if not records:
        click.echo("no submissions (arena submit PATH adds one)")
    for r in records:
        state = " (withdrawn)" if r.withdrawn else ""
        click.echo(
            printable(
                f"{r.distribution} {r.version}{state}: {r.package_version}, sha256 {r.content}, "
                f"{r.created}, bots {', '.join(r.bots)}, log {r.log}"
            )
        )
        if show_log:
            click.echo(printable(read_log(r), keep="\n\t"))


@click.command()
@click.argument("distribution")
@click.argument("version", type=int)
def withdraw(distribution: str, version: int) -> None:
    """Take VERSION of the submitted DISTRIBUTION out of future play. Its snapshot and every
    game it played stay; the latest version not withdrawn plays by default."""
    from arena.hosting.submissions import Store

    record = Store().withdraw(distribution, version)
    click.echo(printable(f"withdrew {record.distribution} version {record.version}"))


COMMANDS: tuple[click.Command, ...] = (submit, submissions, withdraw)
