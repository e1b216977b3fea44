"""The store: schema, start and resume, atomic and idempotent blocks, round trips, URLs, the
runner's lease, and processes doing these at the same moment.

Every store test runs on SQLite in a temporary directory and, when a PostgreSQL server can be
started here (``initdb``/``pg_ctl``) and the ``psycopg`` driver is importable, on a throwaway
PostgreSQL server too.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from postgres import postgres_database
from sqlalchemy import create_engine, inspect, text

from arena.errors import ArenaError
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import GameRecord
from arena.tournament.lease import RunnerLease, lease_seconds
from bots.uniform import UniformBot
from leaderboard.models import Base
from leaderboard.runners import LeaseLostError, TournamentBusyError, process_alive, this_process
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


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a new database on the PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    server: str = request.getfixturevalue("postgres_server")
    with postgres_database(server) as url:
        yield url


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
    assert store.status(first) == "interrupted"  # its runner marks it running, once it holds it
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
    # stored as running, but no runner holds it: shown as the next run will find it
    assert (detail.id, detail.name, detail.status, detail.seed) == (tid, "test", "interrupted", 7)
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
        ("sqlite:////no/such/directory/arena.db", "no such directory: /no/such/directory"),
        ("sqlite:////etc/hostname/arena.db", "not a directory: /etc/hostname"),
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


# -- one runner per tournament: the lease -------------------------------------------------------


def test_a_second_runner_is_turned_away_with_one_line(store: Store) -> None:
    tid = start(store)
    token = store.take_lease(tid, "pid 1 on here", 30.0)
    held = store.runner(tid)
    assert held is not None and held.holder == "pid 1 on here"
    assert 29 < (held.expires - held.since).total_seconds() <= 30.5
    with pytest.raises(TournamentBusyError) as busy:
        store.take_lease(tid, "pid 2 on there", 30.0)
    message = str(busy.value)
    assert f"tournament {tid} (test) is being run by pid 1 on here since " in message
    assert f"{held.since:%Y-%m-%d %H:%M:%S} UTC" in message
    assert "\n" not in message
    assert store.renew_lease(tid, token)
    assert store.tournaments()[0].runner == store.runner(tid)
    store.release_lease(tid, token)
    assert store.runner(tid) is None
    assert store.tournaments()[0].runner is None
    again = store.take_lease(tid, "pid 2 on there", 30.0)
    assert again != token
    assert not store.renew_lease(tid, token)  # the old token holds nothing
    with pytest.raises(StoreError, match="no tournament with id 99"):
        store.take_lease(99, "pid 3", 30.0)


def test_an_expired_lease_is_taken_over_and_its_runner_writes_nothing(store: Store) -> None:
    tid = start(store)
    old = store.take_lease(tid, "pid 1 on killed", 0.5)
    store.record_block(tid, [("k1", 0, 0, play(1))], lease=old)  # the holder writes
    time.sleep(1.0)  # its renewals stopped: the lease expires
    assert store.runner(tid) is None
    new = store.take_lease(tid, "pid 2 on here", 30.0)
    assert not store.renew_lease(tid, old)
    with pytest.raises(LeaseLostError, match="pid 2 on here runs it now") as lost:
        store.record_block(tid, [("k2", 0, 0, play(2))], lease=old)
    assert "\n" not in str(lost.value)
    with pytest.raises(LeaseLostError):
        store.set_status(tid, "finished", lease=old)
    assert store.finished_keys(tid) == {"k1"}
    assert store.status(tid) == "running"
    store.release_lease(tid, old)  # a lost lease's release leaves the new holder alone
    assert store.runner(tid) is not None
    store.record_block(tid, [("k2", 0, 0, play(2))], lease=new)
    store.set_status(tid, "finished", lease=new)
    assert store.finished_keys(tid) == {"k1", "k2"}


def test_writes_renew_the_lease(store: Store) -> None:
    tid = start(store)
    token = store.take_lease(tid, "pid 1", 1.0)
    first = store.runner(tid)
    time.sleep(0.6)
    store.record_block(tid, [("k1", 0, 0, play(1))], lease=token)
    time.sleep(0.6)  # 1.2 s after the lease was taken: alive thanks to the write
    later = store.runner(tid)
    assert first is not None and later is not None
    assert later.since == first.since and later.expires > first.expires


def test_the_lease_renews_itself_while_the_runner_runs(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = start(store)
    monkeypatch.setenv("ARENA_LEASE_SECONDS", "0.6")
    with RunnerLease.take(store, tid) as lease:
        assert lease.seconds == 0.6
        held = store.runner(tid)  # it records this process: a runner after it can check it
        assert held is not None and held.process == this_process()
        time.sleep(1.5)  # several lease lengths: renewed every 0.2 s by its thread
        with pytest.raises(TournamentBusyError):
            store.take_lease(tid, "pid 2", 30.0)
        store.record_block(tid, [("k1", 0, 0, play(1))], lease=lease.token)
    assert store.runner(tid) is None  # released on leaving
    monkeypatch.setenv("ARENA_LEASE_SECONDS", "soon")
    with pytest.raises(ArenaError, match="ARENA_LEASE_SECONDS='soon' is not a number"):
        lease_seconds()


# -- a dead runner's lease: taken over at once on its own machine ---------------------------------

#: The tests of a holder's process read /proc (on other systems a lease only expires).
linux = pytest.mark.skipif(this_process() is None, reason="needs Linux's /proc")


def process(pid: int, start: int | None = None, boot: str = "", namespace: str = "") -> str:
    """The lease's record of process ``pid`` on this machine: its start time read here from
    /proc/PID/stat unless ``start`` is given; ``boot``, ``namespace`` to place it elsewhere."""
    here = this_process()
    assert here is not None
    my_boot, my_namespace, _, _ = here.split(" ")
    if start is None:
        stat = Path(f"/proc/{pid}/stat").read_text()
        start = int(stat[stat.rindex(")") + 2 :].split()[19])
    return f"{boot or my_boot} {namespace or my_namespace} {pid} {start}"


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A process that sleeps for a minute (killed on leaving)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@linux
def test_this_process_and_what_is_known_of_others() -> None:
    me = this_process()
    assert me is not None and me == process(os.getpid())
    assert process_alive(me) is True
    assert process_alive(process(os.getpid(), start=int(me.split()[3]) + 1)) is False
    assert process_alive(process(os.getpid(), boot="another-boot")) is None
    assert process_alive(process(os.getpid(), namespace="pid:[1]")) is None
    for unknown in (None, "", "pid 1 on here", f"{me} more", me.replace(str(os.getpid()), "x")):
        assert process_alive(unknown) is None


@linux
def test_a_killed_holder_on_this_machine_is_taken_over_at_once(
    store: Store, sleeper: subprocess.Popen[bytes]
) -> None:
    tid = start(store)
    holder = f"pid {sleeper.pid} on here"
    old = store.take_lease(tid, holder, 600.0, process(sleeper.pid))
    held = store.runner(tid)
    assert held is not None and held.alive is True
    with pytest.raises(TournamentBusyError) as busy:  # alive: one runner at a time
        store.take_lease(tid, "pid 2 on here", 30.0, this_process())
    assert str(busy.value).endswith(
        "one runner per tournament (that process is still running on this machine: stop it to "
        "take the tournament over)"
    )
    store.record_block(tid, [("k1", 0, 0, play(1))], lease=old)
    sleeper.kill()  # kill -9; not reaped yet: a zombie is as dead
    deadline = time.monotonic() + 10
    while (held := store.runner(tid)) is not None and held.alive is not False:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert store.tournaments()[0].runner == held and held.holder == holder
    new = store.take_lease(tid, "pid 2 on here", 30.0, this_process())  # at once
    now = store.runner(tid)
    assert now is not None and now.holder == "pid 2 on here" and now.alive is True
    assert (now.expires - now.since).total_seconds() < 31
    with pytest.raises(LeaseLostError, match="pid 2 on here runs it now"):
        store.record_block(tid, [("k2", 0, 0, play(2))], lease=old)
    store.record_block(tid, [("k2", 0, 0, play(2))], lease=new)
    assert store.finished_keys(tid) == {"k1", "k2"}
    sleeper.wait()
    store.release_lease(tid, new)
    assert store.runner(tid) is None


@linux
def test_a_pid_taken_by_another_process_is_a_dead_holder(store: Store) -> None:
    tid = start(store)
    me = this_process()
    assert me is not None
    # the holder's pid runs, but another process (started at another time) has it now
    recycled = process(os.getpid(), start=int(me.split()[3]) - 1)
    store.take_lease(tid, f"pid {os.getpid()} on here", 600.0, recycled)
    held = store.runner(tid)
    assert held is not None and held.alive is False
    store.take_lease(tid, "pid 2 on here", 30.0, me)
    now = store.runner(tid)
    assert now is not None and (now.holder, now.process) == ("pid 2 on here", me)


@pytest.mark.parametrize(
    "where", ["another machine", "another pid namespace", "nothing recorded", "no /proc here"]
)
def test_a_holder_elsewhere_keeps_the_lease_until_it_expires(
    store: Store, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # its pid is free: were it this machine's, its lease would be taken at once
    boot, namespace, _, _ = (this_process() or "boot pid:[1] 1 1").split(" ")
    recorded = {
        "another machine": f"another-boot {namespace} {ended.pid} 1",
        "another pid namespace": f"{boot} pid:[1] {ended.pid} 1",
        "nothing recorded": None,  # a runner of an older arena
        "no /proc here": f"{boot} {namespace} {ended.pid} 1",
    }[where]
    if where == "no /proc here":  # a runner on a system without /proc cannot tell
        monkeypatch.setattr("leaderboard.runners.this_process", lambda: None)
    tid = start(store)
    store.take_lease(tid, f"pid {ended.pid} on there", 1.0, recorded)
    held = store.runner(tid)
    assert held is not None and held.alive is None
    with pytest.raises(TournamentBusyError) as busy:
        store.take_lease(tid, "pid 2 on here", 30.0, None)
    assert str(busy.value).endswith(
        f"(if that runner was killed, its lease expires at {held.expires:%H:%M:%S} UTC)"
    )
    time.sleep(max(0.0, (held.expires - datetime.now(UTC)).total_seconds()) + 0.3)
    store.take_lease(tid, "pid 2 on here", 30.0, None)
    now = store.runner(tid)
    assert now is not None and now.holder == "pid 2 on here"


# -- processes at the same moment ----------------------------------------------------------------

#: What each racing process runs: ``url``, ``index`` and ``go`` (a file to wait for) are set.
RACE_PRELUDE = """
import json, os, sys, time
from pathlib import Path
url, index, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
from leaderboard.store import EntrantInfo, Store
store = Store(url)
store.engine
Path(f"{go}.{index}").touch()
while not go.exists():
    time.sleep(0.001)
"""


def race(code: str, url: str, tmp_path: Path, processes: int = 6) -> list[str]:
    """Run ``code`` in ``processes`` processes released at the same moment (each has opened
    the database first); their standard outputs, after checking that each exited 0."""
    go = tmp_path / "go"
    script = RACE_PRELUDE + code
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, url, str(i), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    deadline = time.monotonic() + 120
    while not all(Path(f"{go}.{i}").exists() for i in range(processes)):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    go.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "Traceback" not in err, err
        outputs.append(out.strip())
    return outputs


def test_schema_creation_raced_from_processes(url: str, tmp_path: Path) -> None:
    race("store.create_schema()", url, tmp_path)
    store = Store(url)
    names = set(inspect(store.engine).get_table_names())
    assert {"tournaments", "entrants", "decks", "games", "runners", "deck_secrets"} <= names
    store.close()


def test_the_same_tournament_started_at_once_is_one_tournament(
    store: Store, tmp_path: Path
) -> None:
    code = f"""
entrants = [EntrantInfo(*e) for e in {[dataclasses.astuple(e) for e in ENTRANTS]!r}]
print(store.start_tournament("test", {CONFIG!r}, 7, "classic", 2, entrants, {DECKS!r}))
"""
    ids = race(code, store.url, tmp_path)
    assert len(set(ids)) == 1
    assert [t.id for t in store.tournaments()] == [int(ids[0])]


def test_of_runners_taking_the_lease_at_once_one_gets_it(store: Store, tmp_path: Path) -> None:
    tid = start(store)
    code = f"""
from leaderboard.runners import TournamentBusyError
try:
    store.take_lease({tid}, f"pid {{os.getpid()}} racer {{index}}", 30.0)
    print("took it")
except TournamentBusyError as exc:
    print(exc)
"""
    outputs = race(code, store.url, tmp_path)
    assert outputs.count("took it") == 1
    winner = store.runner(tid)
    assert winner is not None
    for out in outputs:
        assert out == "took it" or f"is being run by {winner.holder} since" in out


def test_a_database_of_the_previous_version_gets_the_runners_table(url: str) -> None:
    old = Store(url)
    tables = [t for name, t in Base.metadata.tables.items() if name != "runners"]
    Base.metadata.create_all(old.engine, tables=tables)
    tid = start(old)
    old.close()
    store = Store(url)
    store.create_schema()
    assert "runners" in inspect(store.engine).get_table_names()
    token = store.take_lease(tid, "pid 1", 30.0)
    store.record_block(tid, [("k1", 0, 0, play(1))], lease=token)
    assert store.finished_keys(tid) == {"k1"}
    store.close()


def test_an_older_runners_table_is_read_and_widened(url: str, tmp_path: Path) -> None:
    engine = create_engine(url)  # a database made before leases recorded their process
    Base.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE runners DROP COLUMN process"))
    engine.dispose()
    old = Store(url)
    tid = start(old)
    with old.engine.begin() as connection:  # a lease of an older runner
        connection.execute(
            text(
                "INSERT INTO runners (tournament_id, holder, token, since, expires, seconds) "
                "VALUES (:tid, 'pid 1 on old', 'secret', :now, :now + 600, 600)"
            ),
            {"tid": tid, "now": time.time()},
        )
    old.close()
    reader = Store.open_existing(url)  # reads it as it is
    (listed,) = reader.tournaments()
    assert listed.runner is not None
    assert (listed.runner.holder, listed.runner.process, listed.runner.alive) == (
        "pid 1 on old",
        None,
        None,
    )
    assert reader.runner(tid) == listed.runner
    reader.close()
    race("store.create_schema()", url, tmp_path)  # processes widening it at once
    store = Store(url)
    store.create_schema()
    assert "process" in {c["name"] for c in inspect(store.engine).get_columns("runners")}
    assert store.runner(tid) == listed.runner
    with pytest.raises(TournamentBusyError, match="its lease expires at"):
        store.take_lease(tid, "pid 2 on here", 30.0, this_process())
    store.close()


# -- seeds --------------------------------------------------------------------------------------


def test_the_largest_seed_is_stored_on_every_backend(store: Store) -> None:
    tid = start(store, seed=2**63 - 1)
    assert store.tournament(tid).seed == 2**63 - 1


@pytest.mark.parametrize("url", ["postgresql"], indirect=True)
def test_an_older_postgresql_seed_column_is_widened(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        Base.metadata.create_all(connection)
        connection.execute(text("ALTER TABLE tournaments ALTER COLUMN seed TYPE INTEGER"))
    engine.dispose()
    store = Store(url)
    store.create_schema()
    tid = start(store, seed=2**40)
    assert store.tournament(tid).seed == 2**40
    store.close()
