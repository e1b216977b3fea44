"""A throwaway PostgreSQL server for the store's tests, where Debian's ``postgresql`` (initdb,
pg_ctl) and the ``psycopg`` driver are installed: the session fixture ``postgres_server``
(registered in conftest.py) and ``postgres_database``, a fresh database on it.

Where the server cannot be had, its tests are skipped with the reason, unless
``ARENA_REQUIRE_POSTGRES=1`` (set by .ci/run): then they fail with it.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import NoReturn

import pytest
from sqlalchemy import create_engine, text

_databases = count()


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


def _unavailable(reason: str) -> NoReturn:
    """Skip the test that needs the server, with ``reason``; fail it where PostgreSQL is
    required (``ARENA_REQUIRE_POSTGRES=1``)."""
    if os.environ.get("ARENA_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"ARENA_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the ``postgres`` database of a throwaway local PostgreSQL server."""
    if importlib.util.find_spec("psycopg") is None:
        _unavailable("PostgreSQL tests need the psycopg (v3) driver: pip install 'psycopg[binary]'")
    bindir = _postgres_bin()
    if bindir is None:
        _unavailable("PostgreSQL tests need initdb and pg_ctl (Debian package postgresql)")
    prefix: list[str] = []
    base = tmp_path_factory.mktemp("postgres")
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as user postgres
        # pytest's own temporary directories are private to root, so use one under /tmp.
        base = Path(tempfile.mkdtemp(prefix="arena-postgres-"))
        runuser = shutil.which("runuser")
        try:
            shutil.chown(base, user="postgres")
        except (LookupError, PermissionError):
            runuser = None
        if runuser is None:
            _unavailable("running as root and cannot run PostgreSQL as user postgres")
        prefix = [runuser, "-u", "postgres", "--"]
    data, log, port = base / "data", base / "server.log", _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            _unavailable(f"cannot start PostgreSQL: {args[0]}: {done.stderr.strip()[:300]}")

    run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "arena", "-N")
    options = f"-p {port} -h 127.0.0.1 -k {base} -c fsync=off"
    run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start")
    try:
        yield f"postgresql+psycopg://arena@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        if prefix:
            shutil.rmtree(base, ignore_errors=True)


@contextmanager
def postgres_database(server: str) -> Iterator[str]:
    """The URL of a new, empty database on ``server`` (a ``postgres_server`` URL), dropped on
    leaving."""
    name = f"arena_test_{os.getpid()}_{next(_databases)}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
