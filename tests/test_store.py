"""The store: schema, start and resume, atomic and idempotent blocks, round trips, URLs.

Every store test runs on SQLite in a temporary directory and, when a PostgreSQL server can be
started here (``initdb``/``pg_ctl``) and the ``psycopg`` driver is importable, on a throwaway
PostgreSQL server too.
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text

from arena.records import GameRecord
from arena.referee import InProcessHandle, Referee
from bots.uniform import UniformBot
from leaderboard.store import EntrantInfo, Store, StoreError, resolve_url

ENTRANTS = [
    EntrantInfo("uniform", "uniform", {}, "reference", "loveletter-arena", "0.1.0"),
    EntrantInfo("uniform:seed=1", "uniform", {"seed": 1}, "reference", "loveletter-arena", "0.1.0"),
]
DECKS = [
    [1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8],
    [8, 7, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1],
]
CONFIG: dict[str, Any] = {"bots": [e.name for e in ENTRANTS], "decks": "test:2", "repeats": 1}


def play(seed: int, names: tuple[str, str] = ("uniform", "uniform:seed=1")) -> GameRecord:
    """A real record of one round between two uniform bots."""
    handles = [InProcessHandle(UniformBot(), name=n) for n in names]
    return Referee(move_time=None).play_round(handles, seed=seed)


def start(store: Store, **changes: Any) -> int:
    arguments: dict[str, Any] = {
        "name": "test",
        "configuration": CONFIG,
        "seed": 7,
        "variant": "classic",
        "players": 2,
        "entrants": ENTRANTS,
        "decks": DECKS,
    }
    arguments.update(changes)
    return store.start_tournament(**arguments)


# -- PostgreSQL server ------------------------------------------------------------------------


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the ``postgres`` database of a throwaway local PostgreSQL server."""
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("PostgreSQL tests need the psycopg (v3) driver: pip install 'psycopg[binary]'")
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL tests need initdb and pg_ctl (Debian package postgresql)")
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
            pytest.skip("running as root and cannot run PostgreSQL as user postgres")
        prefix = [runuser, "-u", "postgres", "--"]
    data, log, port = base / "data", base / "server.log", _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            pytest.skip(f"cannot start PostgreSQL: {args[0]}: {done.stderr.strip()[:300]}")

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


_databases = count()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a new database on the PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    server: str = request.getfixturevalue("postgres_server")
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


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    s = Store(url)
    s.create_schema()
    yield s
    s.close()


# -- the store --------------------------------------------------------------------------------


def test_schema_has_the_tables(store: Store) -> None:
    names = set(inspect(store.engine).get_table_names())
    assert {"tournaments", "entrants", "decks", "games", "rating_snapshots"} <= names
    store.create_schema()  # a second time changes nothing


def test_start_and_resume_give_the_same_tournament(store: Store) -> None:
    first = start(store)
    store.set_status(first, "interrupted")
    assert start(store) == first
    assert store.status(first) == "running"
    assert start(store, name="another label") == first
    assert start(store, seed=8) != first
    assert start(store, entrants=[dataclasses.replace(ENTRANTS[0], version="0.2")]) != first
    listed = store.tournaments()
    assert listed[0].id == first
    assert listed[0].entrants == [e.name for e in ENTRANTS]
    assert listed[0].games == 0
    assert len(listed) == 3


def test_records_round_trip(store: Store) -> None:
    tid = start(store)
    records = [play(seed) for seed in range(4)]
    block = [(f"deck={i % 2}/rotation=0/repeat={i}", i % 2, 0, r) for i, r in enumerate(records)]
    store.record_block(tid, block)
    assert store.games(tid) == records
    assert [k for k, _ in store.keyed_games(tid)] == [k for k, *_ in block]
    assert store.finished_keys(tid) == {k for k, *_ in block}
    assert store.tournaments()[0].games == 4


def test_stored_games_tournament_detail_and_one_game(store: Store) -> None:
    with pytest.raises(StoreError, match="no tournament stored"):
        store.tournament()
    tid = start(store)
    a, b = play(1), play(2)
    store.record_block(tid, [("k1", 1, 0, a), ("k2", None, 1, b)])
    games = store.stored_games(tid)
    assert [(g.key, g.deck, g.rotation, g.record) for g in games] == [
        ("k1", 1, 0, a),
        ("k2", None, 1, b),
    ]
    assert store.game(games[1].id) == (tid, games[1])
    with pytest.raises(StoreError, match="no game with id 9999"):
        store.game(9999)
    detail = store.tournament()
    assert detail == store.tournament(tid)
    assert (detail.id, detail.name, detail.status, detail.seed) == (tid, "test", "running", 7)
    assert detail.configuration == CONFIG
    assert detail.entrants == ENTRANTS
    assert detail.decks == DECKS
    with pytest.raises(StoreError, match="no tournament with id 99"):
        store.tournament(99)


def test_record_block_is_idempotent(store: Store) -> None:
    tid = start(store)
    a, b, c = play(1), play(2), play(3)
    store.record_block(tid, [("k1", 0, 0, a), ("k2", 1, 1, b)])
    store.record_block(tid, [("k1", 0, 0, a), ("k2", 1, 1, b)])
    store.record_block(tid, [("k2", 1, 1, b), ("k3", None, 0, c), ("k3", None, 0, c)])
    assert store.games(tid) == [a, b, c]
    assert store.finished_keys(tid) == {"k1", "k2", "k3"}


def test_record_block_is_all_or_nothing(store: Store) -> None:
    tid = start(store)
    store.record_block(tid, [("before", 0, 0, play(1))])
    broken = dataclasses.replace(play(2), times=[object(), 0.0])  # not JSON-serialisable
    with pytest.raises(StoreError) as error:
        store.record_block(
            tid, [("good", 0, 0, play(3)), ("bad", 0, 0, broken), ("after", 1, 0, play(4))]
        )
    assert "\n" not in str(error.value)
    assert store.finished_keys(tid) == {"before"}
    # The same block, fixed, goes through afterwards.
    store.record_block(tid, [("good", 0, 0, play(3)), ("after", 1, 0, play(4))])
    assert store.finished_keys(tid) == {"before", "good", "after"}


def test_unknown_deck_position_stores_nothing(store: Store) -> None:
    tid = start(store)
    with pytest.raises(StoreError, match="no deck at position 9"):
        store.record_block(tid, [("a", 0, 0, play(1)), ("b", 9, 0, play(2))])
    assert store.finished_keys(tid) == set()


def test_status_and_ratings(store: Store) -> None:
    tid = start(store)
    with pytest.raises(StoreError, match="unknown tournament status"):
        store.set_status(tid, "paused")
    store.set_status(tid, "finished")
    assert store.status(tid) == "finished"
    assert store.latest_ratings(tid) is None
    store.save_ratings(tid, {"uniform": {"elo": 1500.0}}, 10)
    store.save_ratings(tid, {"uniform": {"elo": 1510.0}}, 20)
    assert store.latest_ratings(tid) == (20, {"uniform": {"elo": 1510.0}})
    with pytest.raises(StoreError, match="no tournament with id 999"):
        store.finished_keys(999)


def test_the_data_outlives_the_store(url: str) -> None:
    first = Store(url)
    first.create_schema()
    tid = start(first)
    record = play(5)
    first.record_block(tid, [("k", 0, 0, record)])
    first.close()
    again = Store(url)
    assert start(again) == tid
    assert again.games(tid) == [record]
    again.close()


# -- URLs -------------------------------------------------------------------------------------


def test_explicit_url_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DB", "sqlite:///from-env.db")
    assert resolve_url("sqlite:///given.db") == "sqlite:///given.db"


def test_url_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv("ARENA_DB", target)
    assert resolve_url(None) == target
    store = Store()
    store.create_schema()
    store.close()
    assert (tmp_path / "env.db").exists()


def test_default_url_is_arena_db_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARENA_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_url(None) == f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store()
    store.create_schema()
    start(store)
    store.close()
    assert (tmp_path / "arena.db").exists()


def test_no_engine_before_use(tmp_path: Path) -> None:
    Store("nosuchdialect://nowhere")  # nothing happens until the store is used
    Store(f"sqlite:///{tmp_path / 'lazy.db'}")
    assert not (tmp_path / "lazy.db").exists()


def test_sqlite_uses_write_ahead_logging(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'wal.db'}")
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() == 30000
    store.close()


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("not a url", "bad database URL"),
        ("nosuchdialect://host/db", "unknown database dialect"),
        ("sqlite:////no/such/directory/arena.db", "cannot open database"),
        ("postgresql://arena:secret@127.0.0.1:1/db", "database"),
        ("postgresql+nosuchdriver://arena@127.0.0.1/db", "database"),
    ],
)
def test_bad_urls_give_one_line(bad: str, words: str) -> None:
    with pytest.raises(StoreError) as error:
        Store(bad).create_schema()
    message = str(error.value)
    assert words in message
    assert "\n" not in message
    assert "secret" not in message
