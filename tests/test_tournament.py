"""Tournaments end to end: real bot hosts in real worker processes, stored in real databases.

The records of a tournament must not depend on the number of workers, the block size, or on
interruptions (Ctrl-C, kill -9) followed by a resume. One runner plays a tournament at a time:
a second one is turned away while the first runs, and a runner killed with kill -9 is taken over
at once by the next (on SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres import postgres_database
from processes import (
    StopAfter,
    interruptible,
    signal_when_stored,
    stored_games,
    wait_until_stored,
)
from stored_records import stored

from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.tournament.pool import LocalPool
from arena.tournament.runner import (
    Plan,
    TournamentError,
    TournamentSpec,
    plan_resume,
    plan_tournament,
    run_tournament,
    start,
    worker_setup,
)
from leaderboard.store import Store

SANDBOX = choose_sandbox("none")


def run(plan: Plan, url: str, workers: int, block_size: int | None = None, **kw: Any) -> Any:
    store = Store(url)
    setup = worker_setup(plan, SANDBOX)
    return store, run_tournament(
        plan, store, lambda: LocalPool(setup, workers), block_size=block_size, **kw
    )


@pytest.fixture
def catalog(faulty_bots: Path) -> Any:
    return load_catalog(SANDBOX)


@pytest.mark.slow
def test_records_do_not_depend_on_workers_or_blocks_even_with_disqualification(
    catalog: Any, tmp_path: Path
) -> None:
    spec = TournamentSpec(
        decks="random:2:1", bots=("honest", "crasher", "uniform"), seed=3, max_faults=2
    )
    plan = plan_tournament(spec, catalog)
    assert len(plan.schedule) == 12
    one, first = run(plan, f"sqlite:///{tmp_path}/one.db", workers=1, block_size=1)
    two, second = run(plan, f"sqlite:///{tmp_path}/two.db", workers=2, block_size=3)
    assert first.complete and second.complete
    assert stored(one, first.tournament_id) == stored(two, second.tournament_id)
    kinds = []
    for game in one.stored_games(first.tournament_id):
        seats = game.record.seats
        kinds += [f.kind for f in game.record.faults if seats[f.seat] == "crasher"]
        if "crasher" not in seats:
            assert game.record.faults == []
    # crasher sits in 8 games: it crashes in the first two, then forfeits the rest
    assert kinds == ["crash", "crash"] + ["disqualified"] * 6
    assert one.status(first.tournament_id) == "finished"


def test_games_between_disqualified_bots_are_skipped_and_stored(
    catalog: Any, tmp_path: Path
) -> None:
    spec = TournamentSpec(decks="random:2:1", bots=("honest", "crasher", "liar"), max_faults=1)
    plan = plan_tournament(spec, catalog)
    store, summary = run(plan, f"sqlite:///{tmp_path}/t.db", workers=2)
    # crasher crashes against honest (game 0) and liar answers illegally against honest (game
    # 8); by then both are disqualified, so their four games together are skipped: stored
    # unplayed, never a gap
    assert (summary.played, summary.skipped) == (8, 4)
    records = {g.key: g.record for g in store.stored_games(summary.tournament_id)}
    assert len(records) == len(plan.schedule) == 12
    for deck in (0, 1):
        for seats in ('["crasher","liar"]', '["liar","crasher"]'):
            record = records[f"repeat=0/deck={deck}/seats={seats}"]
            assert (record.end_reason, record.winners, record.actions) == ("skipped", [], [])
            assert [f.kind for f in record.faults] == ["disqualified", "disqualified"]
            assert record.void  # not rated
    again = run(plan, store.url, workers=1)[1]
    assert (again.stored_before, again.played, again.skipped, again.complete) == (12, 0, 0, True)


@pytest.mark.slow
def test_interrupted_run_resumes_to_the_records_of_an_uninterrupted_one(
    catalog: Any, tmp_path: Path
) -> None:
    spec = TournamentSpec(decks="random:6:2", bots=("honest", "uniform", "liar"), max_faults=3)
    plan = plan_tournament(spec, catalog)
    whole, summary = run(plan, f"sqlite:///{tmp_path}/whole.db", workers=2)
    url = f"sqlite:///{tmp_path}/parts.db"
    store, part = run(plan, url, workers=2, block_size=2, progress=StopAfter(5))
    assert part.interrupted and not part.complete
    assert 5 <= part.total - part.left < part.total
    assert store.status(part.tournament_id) == "interrupted"
    kept = stored(store, part.tournament_id)
    rest = run(plan_resume(store, part.tournament_id, catalog), url, workers=1)[1]
    assert rest.tournament_id == part.tournament_id
    assert rest.stored_before == len(kept)
    assert rest.complete
    assert stored(store, part.tournament_id) == stored(whole, summary.tournament_id)


class Bounded:
    """A progress report that fails the run after ``updates`` updates (a run that loops)."""

    def __init__(self, updates: int) -> None:
        self.left = updates

    def update(self, done: int, total: int, faults: int) -> None:
        self.left -= 1
        assert self.left > 0, "the run goes round in circles"


@pytest.mark.slow
def test_a_resumed_block_does_not_span_stored_games(catalog: Any, tmp_path: Path) -> None:
    spec = TournamentSpec(decks="random:6:2", bots=("honest", "uniform", "liar"), max_faults=3)
    plan = plan_tournament(spec, catalog)
    whole, summary = run(plan, f"sqlite:///{tmp_path}/whole.db", workers=2)
    records = {g.key: g.record for g in whole.stored_games(summary.tournament_id)}
    parts = Store(f"sqlite:///{tmp_path}/parts.db")
    tid = start(plan, parts)
    # games 2 to 7 stored; games 0 and 1 not (a block in flight when the run stopped): a block
    # of games 0, 1, 8 and 9 would be handed the faults before game 0 and, where one of the
    # games between faulted, played again and again the same way. The one block played again
    # is the one handed out, next in line, while liar's first faults (games 12 to 14, which
    # disqualify it from game 15 on) were being played: a bot without a known fault is
    # taken not to fault (arena.tournament.disqualification.DisqualificationLedger.at_risk)
    kept = plan.schedule[2:8]
    assert not any("liar" in g.seats for g in plan.schedule[:12])
    parts.record_block(tid, [(g.key, g.deck, g.rotation, records[g.key]) for g in kept])
    rest = run(plan, parts.url, workers=1, progress=Bounded(200))[1]
    assert (rest.stored_before, rest.complete) == (6, True)
    assert rest.replays <= 1
    assert stored(parts, tid) == stored(whole, summary.tournament_id)


def test_a_run_that_fails_releases_its_lease(catalog: Any, tmp_path: Path) -> None:
    plan = plan_tournament(TournamentSpec(decks="random:1", bots=("honest", "uniform")), catalog)
    store = Store(f"sqlite:///{tmp_path}/t.db")

    def broken() -> Any:
        raise OSError("no workers today")

    with pytest.raises(OSError, match="no workers today"):
        run_tournament(plan, store, broken)
    assert store.runner(1) is None
    assert store.status(1) == "interrupted"


def test_plan_errors_are_one_line_arena_errors(catalog: Any) -> None:
    from arena.errors import ArenaError

    for spec, needle in [
        (TournamentSpec(bots=("honest",)), "needs at least 2 bots"),
        (TournamentSpec(bots=("honest", "honest")), "entered twice"),
        (TournamentSpec(bots=("honest", "nosuchbot")), "nosuchbot"),
        (TournamentSpec(bots=("twoonly", "honest", "uniform"), players=3), "tables of 3"),
        (TournamentSpec(bots=("dp", "honest")), "classic variant"),
        (TournamentSpec(bots=("honest", "uniform"), decks="random:x"), "random:N"),
    ]:
        with pytest.raises(ArenaError, match=needle) as caught:
            plan_tournament(spec, catalog)
        assert "\n" not in str(caught.value)


def test_default_field_leaves_out_bots_that_do_not_play_the_variant(catalog: Any) -> None:
    plan = plan_tournament(TournamentSpec(decks="random:1", players=3), catalog)
    names = [e.name for e in plan.entrants]
    assert "twoonly" not in names and "dp" not in names
    assert dict(plan.left_out)["twoonly"] == "does not play at tables of 3"


def test_resume_refuses_a_changed_bot(catalog: Any, tmp_path: Path) -> None:
    plan = plan_tournament(TournamentSpec(decks="random:1", bots=("honest", "uniform")), catalog)
    store = Store(f"sqlite:///{tmp_path}/t.db")
    tid = start(plan, store)
    changed = dict(catalog.bots)
    entry = changed["honest"]
    changed["honest"] = type(entry)(**{**entry.to_json(), "version": "9.9"})
    catalog.bots = changed
    with pytest.raises(TournamentError, match="start a new tournament"):
        plan_resume(store, tid, catalog)


# --- the command, killed for real -----------------------------------------------------------

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
#: The lease of a runner started by these tests (seconds), unless a test gives another.
LEASE = 9.0
#: A lease no test waits for: a runner killed with it is taken over only because it is dead.
LONG_LEASE = 600.0
ARGS = ["tournament", "--decks", "random:30:4", "--bots", "honest,uniform,sleeper[seconds=0.01]"]
# one secret for every run of it: the games' seeds derive from it (a run without --secret
# draws its own, so two databases would hold other games)
ARGS += ["--sandbox", "none", "--workers", "2", "--seed", "11", "--quiet"]
ARGS += ["--secret", "271828182845904523536028747135266249775"]
#: What the tournament of :data:`ARGS` is called in messages.
NAME = "tournament 1 (random:30:4 classic 2p)"


def start_command(
    url: str, env: dict[str, str], cwd: Path, lease: float = LEASE, args: list[str] = ARGS
) -> subprocess.Popen[str]:
    """The command (``args``), started on the database at ``url`` (its lease lasts ``lease``
    seconds)."""
    return subprocess.Popen(
        [*COMMAND, *args, "--db", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "ARENA_LEASE_SECONDS": str(lease)},
        cwd=cwd,
        preexec_fn=interruptible,
    )


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """An ``arena`` command, run to its end in a process of its own."""
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, env=env, timeout=300)


def error_line(stderr: str) -> str:
    """The one ``arena: error:`` line of a command's standard error (other lines may warn)."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("arena: error:")]
    return line


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh database (``request.param``: ``sqlite`` for a file, ``postgresql``
    for a new database on the throwaway PostgreSQL server)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    server: str = request.getfixturevalue("postgres_server")
    with postgres_database(server) as url:
        yield url


@pytest.fixture(scope="module")
def command_env(faulty_site: Path) -> dict[str, str]:
    """The environment for a real ``arena`` process that sees the faulty test bots."""
    path = os.pathsep.join(p for p in (str(faulty_site), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture(scope="module")
def uninterrupted(command_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The database of the command run once from start to end."""
    where = tmp_path_factory.mktemp("whole")
    db = where / "whole.db"
    done = subprocess.run(
        [*COMMAND, *ARGS, "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        env=command_env,
        cwd=where,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "sleeper[seconds=0.01]" in done.stdout  # the leaderboard
    return Store(f"sqlite:///{db}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "database"),
    [
        pytest.param(signal.SIGKILL, "sqlite", id="kill-9-sqlite"),
        pytest.param(signal.SIGKILL, "postgresql", id="kill-9-postgresql"),
        pytest.param(signal.SIGINT, "sqlite", id="ctrl-c-sqlite"),
    ],
    indirect=["database"],
)
def test_killed_command_resumes_to_the_uninterrupted_records(
    command_env: dict[str, str], uninterrupted: Store, tmp_path: Path, how: int, database: str
) -> None:
    proc = start_command(database, command_env, tmp_path, lease=LONG_LEASE)
    signal_when_stored(proc, database, 10, how)
    _, err = proc.communicate(timeout=60)
    if how == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "interrupted" in err and "--resume 1" in err
    else:
        assert proc.returncode == -signal.SIGKILL
        # its lease runs for minutes yet, but its process is gone: the listing says so ...
        listed = arena("tournaments", "--db", database, env=command_env)
        assert listed.returncode == 0, listed.stderr
        holder = f"pid {proc.pid} on {socket.gethostname()}"
        (line,) = [line for line in listed.stdout.splitlines() if line.startswith("   1  ")]
        assert line.endswith(" (dead: the next run takes it over at once)"), line
        # ... and that it is not running: its runner is gone
        assert "[interrupted]  created " in line and f"  run by {holder} since " in line
        (entry,) = json.loads(
            arena("tournaments", "--json", "--db", database, env=command_env).stdout
        )
        assert (entry["runner"]["holder"], entry["runner"]["alive"]) == (holder, False)
        assert entry["status"] == "interrupted"
    kept = stored_games(database)
    assert 10 <= kept < 180
    # ... and the same command, run at once, takes the tournament over and plays the rest
    resumed = subprocess.run(
        [*COMMAND, *ARGS, "--db", database],
        capture_output=True,
        text=True,
        env=command_env,
        cwd=tmp_path,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{180 - kept} games played" in resumed.stderr
    store = Store(database)
    assert len(stored(store, 1)) == 180
    assert stored(store, 1) == stored(uninterrupted, 1)
    assert store.status(1) == "finished"
    assert store.runner(1) is None
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("database", ["sqlite", "postgresql"], indirect=True)
def test_a_running_command_is_still_refused(
    command_env: dict[str, str], tmp_path: Path, database: str
) -> None:
    slow = [arg.replace("seconds=0.01", "seconds=0.1") for arg in ARGS]  # it runs meanwhile
    proc = start_command(database, command_env, tmp_path, args=slow)
    try:
        wait_until_stored(proc, database, 1)
        refused = arena("tournament", "--resume", "1", "--db", database, env=command_env)
        listed = arena("tournaments", "--db", database, env=command_env)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert refused.returncode == 2, refused.stderr
    holder = f"pid {proc.pid} on {socket.gethostname()}"
    line = error_line(refused.stderr)
    assert line.startswith(f"arena: error: {NAME} is being run by {holder} since "), line
    assert line.endswith(
        " UTC; one runner per tournament (that process is still running on this machine: stop "
        "it to take the tournament over)"
    ), line
    assert listed.returncode == 0, listed.stderr
    assert f"  run by {holder} since " in listed.stdout and "dead" not in listed.stdout
    assert proc.returncode == 130, err  # the refusal left the runner alone; Ctrl-C stopped it
    store = Store(database)
    assert (store.status(1), store.runner(1)) == ("interrupted", None), err
    store.close()


@pytest.mark.slow
def test_two_runners_started_at_once_play_the_tournament_once(
    command_env: dict[str, str], uninterrupted: Store, tmp_path: Path
) -> None:
    db = tmp_path / "both.db"
    procs = [start_command(f"sqlite:///{db}", command_env, tmp_path) for _ in range(2)]
    results = [(proc, *proc.communicate(timeout=300)) for proc in procs]
    assert sorted(proc.returncode for proc in procs) == [0, 2], results
    (ran, out, err), (_, _, refused) = sorted(results, key=lambda r: r[0].returncode)
    assert "180 games played" in err and "sleeper[seconds=0.01]" in out
    holder = f"pid {ran.pid} on {socket.gethostname()}"
    assert f"arena: error: {NAME} is being run by {holder}" in error_line(refused)
    with sqlite3.connect(db) as connection:
        games = connection.execute("select count(*), count(distinct key) from games").fetchone()
        assert games == (180, 180)
        assert connection.execute("select count(*) from tournaments").fetchone() == (1,)
        assert connection.execute("select count(*) from runners").fetchone() == (0,)
    store = Store(f"sqlite:///{db}")
    assert stored(store, 1) == stored(uninterrupted, 1)
    assert store.status(1) == "finished"


# --- reading the stored tournament ----------------------------------------------------------


def cli(*args: str) -> Any:
    from click.testing import CliRunner

    from arena.cli.main import cli as group

    return CliRunner().invoke(group, list(args))


def test_leaderboard_json_rows(uninterrupted: Store) -> None:
    result = cli("leaderboard", "--json", "--db", uninterrupted.url)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["settings"]["entrants"] == ["honest", "uniform", "sleeper[seconds=0.01]"]
    rows = data["standings"]
    keys = {"bot", "elo", "elo_lo", "elo_hi", "games", "wins", "draws", "losses", "score"}
    keys |= {"score_lo", "score_hi", "faults"}
    assert {r["bot"] for r in rows} == {"honest", "uniform", "sleeper[seconds=0.01]"}
    for row in rows:
        assert keys <= set(row)
        assert row["games"] == 120  # 2 opponents x 30 decks x 2 seatings
        assert row["wins"] + row["draws"] + row["losses"] == row["games"]
        assert row["elo_lo"] < row["elo"] < row["elo_hi"]
    assert sum(r["elo"] for r in rows) / 3 == pytest.approx(1500)
    anchored = json.loads(
        cli("leaderboard", "--json", "--anchor", "uniform=1000", "--db", uninterrupted.url).output
    )
    by_bot = {r["bot"]: r for r in anchored["standings"]}
    assert by_bot["uniform"]["elo"] == pytest.approx(1000)
    gap = {r["bot"]: r["elo"] for r in rows}
    assert by_bot["honest"]["elo"] - 1000 == pytest.approx(gap["honest"] - gap["uniform"])


def test_report_text_html_and_json(uninterrupted: Store, tmp_path: Path) -> None:
    text = cli("report", "--db", uninterrupted.url)
    assert text.exit_code == 0, text.output
    assert "head to head" in text.output and "random:30:4" in text.output
    page = tmp_path / "report.html"
    done = cli("report", "--html", str(page), "--db", uninterrupted.url)
    assert done.exit_code == 0, done.output
    html = page.read_text()
    assert "<svg" in html and "sleeper[seconds=0.01]" in html
    assert "<script src" not in html and 'href="http' not in html
    data = json.loads(cli("report", "--json", "--db", uninterrupted.url).output)
    assert data["games"] == 180


def test_replay_prints_a_stored_game(uninterrupted: Store) -> None:
    game = uninterrupted.stored_games(1)[0]
    result = cli("replay", str(game.id), "--db", uninterrupted.url)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"game {game.id} of tournament 1 ({game.key})")
    assert lines[1:] == game.record.log_lines()
    data = json.loads(cli("replay", str(game.id), "--json", "--db", uninterrupted.url).output)
    assert data["key"] == game.key and data["actions"] == [list(a) for a in game.record.actions]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("replay", "999999"), "no game with id 999999"),
        (("leaderboard", "--tournament", "42"), "no tournament with id 42"),
        (("leaderboard", "--anchor", "uniform"), "BOT=RATING"),
        (("leaderboard", "--anchor", "nobody=1000"), "nobody"),
        (("tournament", "--resume", "1", "--bots", "honest,uniform"), "--bots"),
    ],
)
def test_database_commands_reject_bad_input(
    uninterrupted: Store, args: tuple[str, ...], needle: str
) -> None:
    proc = subprocess.run(
        [*COMMAND, *args, "--db", uninterrupted.url], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_empty_database_has_no_leaderboard(tmp_path: Path) -> None:
    Store(f"sqlite:///{tmp_path}/empty.db").create_schema()
    proc = subprocess.run(
        [*COMMAND, "leaderboard", "--db", f"sqlite:///{tmp_path}/empty.db"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "no tournament stored" in proc.stderr
    missing = subprocess.run(
        [*COMMAND, "leaderboard", "--db", f"sqlite:///{tmp_path}/missing.db"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "no database at" in missing.stderr
    assert not (tmp_path / "missing.db").exists()
