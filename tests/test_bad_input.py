"""Bad input through the command line: one line and exit code 2, or a recorded fault; read-only
commands never create or change a database, and read one in a read-only directory."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_store import start

from arena.cli.main import cli
from leaderboard.store import Store, StoreError

ARENA = str(Path(sys.executable).with_name("arena"))
#: A classic deck, top card first: seat 0 is dealt a Guard and draws a Priest.
DECK = "8,1,1,1,1,1,2,2,3,3,4,4,5,5,6,7"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def one_line_error(result: Result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith("arena: error: "), result.output
    assert needle in result.output, result.output


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database holding one finished tournament of 2 games, stored by the command."""
    path = tmp_path_factory.mktemp("stored") / "arena.db"
    done = invoke(
        "tournament",
        "--bots",
        "random,strategic",
        "--decks",
        "random:1:1",
        "--sandbox",
        "none",
        "--quiet",
        "--db",
        f"sqlite:///{path}",
    )
    assert done.exit_code == 0, done.output
    # The command ran in this process: its store's pooled connection closes (checkpointing the
    # write-ahead log into the file) when collected, which must not happen during a test.
    gc.collect()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- --seed ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [str(2**64), str(2**63), "-1", "x", "9" * 80])
@pytest.mark.parametrize(
    "command",
    [
        ["play", "random", "random", "--sandbox", "none"],
        ["simulate", "random", "random", "--games", "5"],
        ["tournament", "--bots", "random,strategic", "--sandbox", "none"],
        ["match", "random", "strategic", "--games", "2", "--sandbox", "none"],
        ["check", "random", "--sandbox", "none"],
    ],
    ids=["play", "simulate", "tournament", "match", "check"],
)
def test_a_seed_out_of_range_is_one_line_everywhere(
    command: list[str], seed: str, tmp_path: Path
) -> None:
    db = tmp_path / "arena.db"
    stores = ["--db", f"sqlite:///{db}"] if command[0] in ("tournament", "match") else []
    one_line_error(invoke(*command, *stores, "--seed", seed), "seeds are 0 to 2**63-1")
    assert not db.exists()


def test_the_largest_seed_plays() -> None:
    result = invoke("simulate", "random", "random", "--games", "5", "--seed", str(2**63 - 1))
    assert result.exit_code == 0, result.output


# -- read-only commands ----------------------------------------------------------------------

READERS = [
    ["leaderboard"],
    ["report"],
    ["replay", "1"],
    ["tournaments"],
    ["games"],
    ["export", "1", "--format", "csv"],
]


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
def test_a_missing_database_is_one_line_and_no_file_is_made(
    command: list[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.db"
    one_line_error(invoke(*command, "--db", f"sqlite:///{typo}"), f"no database at {typo}")
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_no_arena_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    before = digest(empty)
    one_line_error(invoke("leaderboard", "--db", f"sqlite:///{empty}"), "no arena database")
    assert digest(empty) == before and sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]
    one_line_error(invoke("tournaments", "--db", "sqlite://"), "no database at 'sqlite://'")


def test_the_default_database_is_not_made_by_a_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    one_line_error(invoke("leaderboard"), f"no database at {tmp_path / 'arena.db'}")
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
def test_readers_read_without_writing(command: list[str], stored: Path) -> None:
    before = digest(stored)
    result = invoke(*command, "--db", f"sqlite:///{stored}")
    assert result.exit_code == 0, result.output
    assert digest(stored) == before


def test_a_read_only_store_refuses_to_write(stored: Path) -> None:
    store = Store.open_existing(f"sqlite:///{stored}")
    assert store.tournament(1).id == 1
    with pytest.raises(StoreError, match="read-only"):
        store.create_schema()
    with pytest.raises(StoreError, match="readonly"):
        store.set_status(1, "running")
    assert Store.open_existing(f"sqlite:///{stored}").status(1) == "finished"


def test_a_database_in_a_missing_directory_names_the_directory(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/typo/arena.db"
    error = invoke("tournament", "--decks", "random:1", "--bots", "random,uniform", "--db", url)
    one_line_error(error, f"no such directory: {tmp_path}/typo")
    assert not (tmp_path / "typo").exists()


def test_a_missing_postgresql_database_is_one_line() -> None:
    url = "postgresql+psycopg://arena@127.0.0.1:1/nosuchdb"
    one_line_error(invoke("leaderboard", "--db", url), "cannot open database")


def test_postgresql_read_only(postgres_server: str) -> None:
    server = postgres_server
    missing = server.rsplit("/", 1)[0] + "/arena_no_such_database"
    one_line_error(invoke("tournaments", "--db", missing), "does not exist")
    writer = Store(server)
    writer.create_schema()
    tid = start(writer, name="read-only test")
    reader = Store.open_existing(server)
    assert reader.tournament(tid).name == "read-only test"
    with pytest.raises(StoreError, match="read-only transaction"):
        reader.set_status(tid, "finished")
    writer.close()
    reader.close()


# -- the unprivileged reader in a read-only directory ----------------------------------------

NOBODY = 65534


def _without_caches(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the operator's cache locations: nobody's caches go in its own home."""
    return {k: v for k, v in env.items() if k not in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}


def as_nobody(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run as user and group 65534 with no other groups (a real user: its own
    home for numba's cache, since root's is not writable by it)."""
    return subprocess.run(
        ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", ARENA, *args],
        capture_output=True,
        text=True,
        cwd="/",
        env={**_without_caches(os.environ), "HOME": str(home), "ARENA_DB": ""},
        timeout=300,
    )


@pytest.fixture
def locked(stored: Path) -> Iterator[tuple[Path, Path]]:
    """A read-only directory (mode 555, owned by root) holding a copy of the stored database,
    and a home directory for user 65534."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a command as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="arena-readonly-", dir="/tmp"))
    base.chmod(0o755)
    home = base / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    shelf = base / "shelf"
    shelf.mkdir()
    source, copy = sqlite3.connect(stored), sqlite3.connect(shelf / "arena.db")
    source.backup(copy)  # a consistent copy, whatever the writer's log still holds
    source.close()
    copy.close()
    (shelf / "arena.db").chmod(0o644)
    shelf.chmod(0o555)
    probe = subprocess.run(
        [
            "setpriv",
            "--reuid",
            str(NOBODY),
            "--regid",
            str(NOBODY),
            "--clear-groups",
            ARENA,
            "--version",
        ],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        shutil.rmtree(base)
        pytest.skip(f"user {NOBODY} cannot run {ARENA}: {probe.stderr.strip()[:200]}")
    try:
        yield shelf, home
    finally:
        shelf.chmod(0o755)
        shutil.rmtree(base)


def test_an_unprivileged_user_reads_a_database_in_a_read_only_directory(
    locked: tuple[Path, Path],
) -> None:
    shelf, home = locked
    url = f"sqlite:///{shelf / 'arena.db'}"
    before = digest(shelf / "arena.db")
    board = as_nobody(home, "leaderboard", "--json", "--db", url)
    assert board.returncode == 0, board.stderr
    assert json.loads(board.stdout)["tournament"] == 1
    replay = as_nobody(home, "replay", "1", "--db", url)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.startswith("game 1 of tournament 1")
    listed = as_nobody(home, "tournaments", "--db", url)
    assert listed.returncode == 0 and "random:1:1" in listed.stdout
    assert sorted(p.name for p in shelf.iterdir()) == ["arena.db"]
    assert digest(shelf / "arena.db") == before
    denied = as_nobody(home, "leaderboard", "--db", f"sqlite:///{shelf / 'typo.db'}")
    assert denied.returncode == 2 and denied.stderr.count("\n") == 1
    assert "no database at" in denied.stderr


def test_an_unreadable_write_ahead_log_is_one_line(locked: tuple[Path, Path]) -> None:
    """A database whose write-ahead log holds commits, in a directory where no reader can make
    the shared-memory file SQLite needs to read it, is refused rather than read without them."""
    shelf, home = locked
    shelf.chmod(0o755)
    (shelf / "arena.db").unlink()
    writer = sqlite3.connect(shelf / "arena.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE tournaments (id INTEGER)")
    writer.execute("INSERT INTO tournaments VALUES (1)")
    writer.commit()
    shutil.copy(shelf / "arena.db", shelf / "copy.db")
    shutil.copy(shelf / "arena.db-wal", shelf / "copy.db-wal")
    writer.close()
    for path in shelf.iterdir():
        path.chmod(0o644)
    shelf.chmod(0o555)
    done = as_nobody(home, "tournaments", "--db", f"sqlite:///{shelf / 'copy.db'}")
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1 and "write-ahead log" in done.stderr


# -- game ids, --moves and deck positions ------------------------------------------------------


@pytest.mark.parametrize("game", ["-1", "0", "x"])
def test_replay_of_a_bad_game_id(game: str) -> None:
    one_line_error(invoke("replay", game), "game ids are whole numbers from 1")


def test_replay_of_a_missing_game(stored: Path) -> None:
    one_line_error(invoke("replay", "99", "--db", f"sqlite:///{stored}"), "no game with id 99")


@pytest.mark.parametrize(
    ("players", "moves", "needle"),
    [
        (2, "Guard->2:Priest", "targets seat 2, but the round has 2 seats (0 to 1)"),
        (2, "Priest->1; Guard->5:Priest", "targets seat 5, but the round has 2 seats (0 to 1)"),
        (3, "Guard->3:Priest", "targets seat 3, but the round has 3 seats (0 to 2)"),
        (2, "Guard->-1:Priest", "targets seat -1"),
        (2, "Guard->0:Priest", "is not legal for seat 0 now"),
    ],
)
def test_moves_name_the_round_s_seats(players: int, moves: str, needle: str) -> None:
    bots = ["uniform"] * players
    one_line_error(invoke("play", *bots, "--deck", DECK, "--moves", moves), needle)


def test_deck_positions_are_numbered_from_0_in_every_command(stored: Path) -> None:
    url = f"sqlite:///{stored}"
    shown = invoke("decks", "show", "random:1:1")
    assert shown.exit_code == 0
    first = shown.output.splitlines()[1].split()
    listed = json.loads(invoke("games", "--json", "--db", url).output)
    rows = listed["games"] if isinstance(listed, dict) else listed
    assert {row["deck_position"] for row in rows} == {0}
    replay = json.loads(invoke("replay", "1", "--json", "--db", url).output)
    assert replay["deck_position"] == 0 and "deck=0" in replay["key"]
    assert first[0] == "0"
    assert [int(c) for c in first[1:17]] == replay["deck"]
    text = invoke("games", "--db", url).output.splitlines()
    assert text[0].split()[:3] == ["game", "tournament", "deck"]
    assert {line.split()[2] for line in text[1:] if line.strip()[:1].isdigit()} == {"0"}


# -- a bot that cannot start -------------------------------------------------------------------


def test_play_says_which_bot_could_not_start() -> None:
    done = subprocess.run(
        [ARENA, "play", "random", "strategic", "--sandbox", "none", "--memory-mb", "10", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    assert [(f["seat"], f["move"]) for f in record["faults"]] == [(0, 0), (1, 0)]
    # 10 MiB: the host dies starting, or its plugin fails to load (a setup error)
    assert all(
        "while starting" in f["message"] or "could not be set up" in f["message"]
        for f in record["faults"]
    )
    assert done.stderr.splitlines()[-3:] == [
        f"arena: seat 0 (random) could not start ({record['faults'][0]['kind']}, see its fault), "
        "so it forfeited",
        f"arena: seat 1 (strategic) could not start ({record['faults'][1]['kind']}, see its "
        "fault), so it forfeited",
        "arena: no bot could start: the round has no real result (see the faults)",
    ]


@pytest.mark.slow
def test_a_tournament_records_a_bot_that_cannot_start_as_its_fault(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    done = subprocess.run(
        [
            *(ARENA, "tournament", "--bots", "random,strategic", "--decks", "random:1:1"),
            *("--sandbox", "none", "--memory-mb", "10", "--quiet", "--db", url),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    games = Store.open_existing(url).stored_games(1)
    assert len(games) == 2
    for game in games:
        faulted = {(f.seat, game.record.seats[f.seat]) for f in game.record.faults}
        assert faulted == {(0, game.record.seats[0]), (1, game.record.seats[1])}
        for fault in game.record.faults:
            # the host dies while starting, or reports that its plugin could not be loaded
            assert (
                "the bot's process exited with code" in fault.message
                and "while starting" in fault.message
            ) or fault.message.startswith("the bot could not be set up: ")
    # Neither bot played: the seat left standing won by forfeits alone, and nothing is rated.
    assert all(game.record.void for game in games)
    board = subprocess.run(
        [ARENA, "leaderboard", "--json", "--db", url], capture_output=True, text=True, timeout=120
    )
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)["standings"]
    assert {row["bot"]: (row["games"], row["wins"], row["elo"]) for row in rows} == {
        "random": (0, 0, None),
        "strategic": (0, 0, None),
    }
