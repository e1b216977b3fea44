"""A total referee: whatever a bot's host sends becomes a legal action or a recorded fault of its
seat, an unexpected error inside one game becomes that game's recorded fault, and a tournament
always finishes.

Hypothesis feeds arbitrary bytes and JSON to the answer path through :class:`PipedHost`: the real
:class:`~arena.hosting.hosted.HostHandle` reading from a real pipe, where only the host *process* is
replaced (started, killed and sent requests by the test). The attacks also run as real bots of
the ``faulty_bots`` fixture package, through the real host, ``arena play`` and a tournament.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import select
import threading
import time
import tracemalloc
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from arena.cli.main import cli
from arena.cli.tournament import arena_failures
from arena.errors import BotError, BotProtocolError, InvalidActionError
from arena.game import Action, Game
from arena.hosting import protocol as P
from arena.hosting.catalog import load_catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.sandbox import Sandbox
from arena.referee.play import BotHandle, InProcessHandle, Referee, Turn, _parse_answer
from arena.tournament.pool import LocalPool
from arena.tournament.runner import TournamentSpec, plan_tournament, run_tournament, worker_setup
from arena.tournament.schedule import ScheduledGame
from arena.tournament.worker import BlockPlayer, BlockTask, WorkerSetup, faulted
from bots.uniform import UniformBot
from leaderboard.store import Store

PLAIN = Sandbox("none")
# Seat 0 moves first holding a Guard and a Priest.
DECK = [8, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7]
LEGAL = [str(a) for a in Game(2, deck=DECK).observation(0).legal_actions]
#: The faults a bot can earn by what it sends (no timeouts: a test pipe is always closed).
ANSWER_FAULTS = {"protocol", "malformed", "illegal", "crash", "exited"}


def _write_all(fd: int, chunks: Iterable[bytes]) -> None:
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    except OSError:  # the handle closed its end
        pass
    finally:
        os.close(fd)


class ZeroNonces:
    """Request nonces that are all 0, so that answers written in advance can carry the right one
    (``"nonce": 0``), or a wrong one."""

    def getrandbits(self, bits: int) -> int:
        return 0


class PipedHost(HostHandle):
    """A :class:`HostHandle` whose host process is a pipe into which a thread writes ``output``
    (then closes it). Only what concerns the process is replaced: starting it, killing it, and
    sending it requests (kept in :attr:`requests`). Reading, framing, decoding and checking the
    answers is the handle's own code, reading a real non-blocking pipe."""

    def __init__(self, output: Iterable[bytes]) -> None:
        super().__init__("piped", "none", sandbox=PLAIN)
        self.output = output
        self.requests: list[bytes] = []
        self._fd = -1
        self._nonces = ZeroNonces()  # type: ignore[assignment]

    def _fresh(self) -> None:  # a pipe is always fresh
        self._serving = True
        self._fresh_needed = False

    def _launch(self) -> None:
        self._kill()
        read, write = os.pipe()
        os.set_blocking(read, False)
        self._fd = read
        self._buffer = b""
        self._poll = select.poll()
        self._poll.register(read, select.POLLIN | select.POLLHUP)
        threading.Thread(target=_write_all, args=(write, self.output), daemon=True).start()
        self.starts += 1

    def _reply_fd(self) -> int:
        return self._fd

    def _send(self, data: bytes) -> None:
        self.requests.append(data)

    def _kill(self) -> None:
        super()._kill()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def play_piped(output: bytes) -> Any:
    """One round between a piped host answering ``output`` (seat 0) and an in-process bot."""
    host = PipedHost([output])
    other = InProcessHandle(UniformBot(), "uniform")
    try:
        return Referee(move_time=5.0).play_round([host, other], deck=DECK, seed=1)
    finally:
        host.close()


def line(message: dict[str, Any]) -> bytes:
    """``message`` as a host's line, answering the piped host's request (nonce 0)."""
    return json.dumps({"nonce": 0, **message}).encode() + b"\n"


DEEP = b"[" * 1000 + b"]" * 1000
NASTY_LINES = [
    b'{"type": "action", "action": "Guard->' + b"9" * 5000 + b':Priest"}\n',
    b'{"type": "action", "action": ' + DEEP + b"}\n",
    b'{"type": "error", "kind": "crash", "message": ' + DEEP + b"}\n",
    b'{"type": ' + DEEP + b"}\n",
    DEEP + b"\n",
    b"[" * 1100 + b"]" * 1100 + b"\n",
    b'{"type": "action", "action": NaN}\n',
    b'{"type": "action", "action": "Guard->1:Priest", "x": 1e999}\n',
    b'{"type": "action", "action": "\xff\xfe"}\n',
    b'{"type": "action", "action": "\\ud800"}\n',
    b'\xef\xbb\xbf{"type": "action", "action": "Guard->1:Priest"}\n',
    b'{"type": "action", "action": "Guard->\xd9\xa1:Priest"}\n',  # an Arabic-Indic 1
    b'{"type": "action", "action": "Guard->1:Priest\\u0000"}\n',
    b'{"type": "hello", "protocol": 1}\n',
    b'{"type": "error", "kind": {"protocol": true}, "message": "x"}\n',
    b'{"type": "error", "kind": "protocol", "message": "' + b"x" * 100_000 + b'"}\n',
    b'{"type": "action"}\n',
    b"",
    b"\n",
]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(LEGAL)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
action_texts = (
    st.sampled_from([*LEGAL, "Guard->3:Princess", "Handmaid", "Guard->1", "King->0"])
    | st.from_regex(r"\A[A-Za-z0-9 :>\-\t]{0,70}\Z")
    | st.builds(
        lambda card, digits, guess: f"{card}->{digits}{guess}",
        st.sampled_from(["Guard", "Priest", "1", "guard", "\u0661"]),
        st.text("0123456789\u0661\u00b2", min_size=1, max_size=6000),
        st.sampled_from(["", ":Priest", ":2", ":\u00b2"]),
    )
    | st.text()
)
messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["action", "error", "hello", "act", "listing"]) | json_values},
    optional={
        "action": action_texts | json_values,
        "kind": st.sampled_from(["crash", "protocol", "setup"]) | json_values,
        "message": st.text() | json_values,
        "protocol": json_values,
        "nonce": st.just(0) | json_values,
    },
)
encoded_messages = messages.map(lambda m: json.dumps(m, allow_nan=True).encode())
outputs = st.builds(
    lambda lines, end: b"\n".join(lines) + end,
    st.lists(encoded_messages | st.binary(max_size=300), max_size=4),
    st.sampled_from([b"", b"\n"]),
)


def check_round(record: Any) -> None:
    """Every fault is the piped seat's and one a bot can earn; its first turn is a legal
    action played or a fault."""
    assert all(f.seat == 0 and f.kind in ANSWER_FAULTS for f in record.faults), record.faults
    played = bool(record.actions) and record.actions[0][0] == 0
    assert played or (record.faults and record.faults[0].move == 0)
    if played:
        assert record.actions[0][1] in LEGAL


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs)
@example(b"".join(NASTY_LINES))
@example(b'{"type": "action", "action": "Guard->1:Priest"}\n' * 2000)
def test_any_bytes_a_host_sends_are_a_legal_action_or_a_fault_of_its_seat(output: bytes) -> None:
    check_round(play_piped(output))


@pytest.mark.parametrize("nasty", NASTY_LINES, ids=range(len(NASTY_LINES)))
def test_nasty_lines_are_faults_of_their_seat(nasty: bytes) -> None:
    record = play_piped(nasty)
    check_round(record)
    assert record.faults and record.faults[0].move == 0
    assert all(len(f.message) <= 2000 and f.message.isprintable() for f in record.faults)


@settings(max_examples=300, deadline=None)
@given(encoded_messages.map(lambda b: b + b"\n") | st.binary(max_size=300))
def test_the_handle_returns_a_string_or_raises_a_bot_error(output: bytes) -> None:
    host = PipedHost([output])
    try:
        host.start(0, 2, "classic", 1)
        try:
            answer = host.act(Turn(Game(2, deck=DECK), 0), 5.0)
        except BotError:
            return
        assert isinstance(answer, str)
        try:
            parsed = _parse_answer(answer)
        except InvalidActionError:
            return
        assert isinstance(parsed, Action)
    finally:
        host.close()


@settings(max_examples=300, deadline=None)
@given(json_values | action_texts)
@example("Guard->" + "9" * 5000)
@example("Guard->\u0661:Priest")
def test_parsing_any_answer_gives_an_action_or_invalid_action_error(answer: Any) -> None:
    try:
        action = _parse_answer(answer)
    except InvalidActionError as exc:
        assert len(str(exc)) <= 400  # the answer is quoted in a bounded excerpt
        return
    assert Action.from_str(str(action)) == action


def test_a_deeply_nested_answer_is_invalid() -> None:
    """Too deep for Python's repr, so not an example of the property above (Hypothesis prints
    its examples)."""
    with pytest.raises(InvalidActionError, match=r"answer \[\[\[\[\.\.\.\]\]\]\] is not"):
        _parse_answer(orjson.loads(DEEP))


def test_a_line_of_the_longest_length_is_read_and_a_longer_one_is_a_protocol_fault() -> None:
    head = b'{"type": "action", "action": "Guard->1:Priest", "nonce": 0, "pad": "'
    for extra, expected in ((0, "Guard->1:Priest"), (1, None)):
        text = head + b"x" * (P.MAX_LINE_BYTES - len(head) - 2 + extra) + b'"}'
        host = PipedHost([text + b"\n"])
        try:
            host.start(0, 2, "classic", 1)
            turn = Turn(Game(2, deck=DECK), 0)
            if expected is None:
                with pytest.raises(BotProtocolError, match="a line longer than 1048576 bytes"):
                    host.act(turn, 5.0)
            else:
                assert host.act(turn, 5.0) == expected
        finally:
            host.close()


def test_an_endless_line_is_cut_off_at_the_cap_with_bounded_memory() -> None:
    flood = itertools.repeat(b"9" * 65536, 4096)  # 256 MiB, no newline
    host = PipedHost(flood)
    tracemalloc.start()
    try:
        host.start(0, 2, "classic", 1)
        begun = time.monotonic()
        with pytest.raises(BotProtocolError, match="longer than"):
            host.act(Turn(Game(2, deck=DECK), 0), 30.0)
        assert time.monotonic() - begun < 5.0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        host.close()
    assert peak < 3 * P.MAX_LINE_BYTES


# --- the attacks as real bots -----------------------------------------------------------------

ATTACKS = [
    ("digits", "malformed", "an action string of 5014 characters"),
    ("flooder", "protocol", "a line longer than 1048576 bytes"),
    ("wrongtype", "protocol", "'action' message whose 'action' is list"),
    ("wrongtype[shape=number]", "protocol", "'action' is int"),
    ("wrongtype[shape=list]", "protocol", "'action' is list"),
    ("wrongtype[shape=kind]", "protocol", "'kind' is dict"),
    ("wrongtype[shape=message]", "protocol", "'message' is list"),
    ("wrongtype[shape=type]", "protocol", "not a message"),
    # the fork server it was forked from keeps the pipe open: the bot just never answers
    ("closer", "timeout", "no answer to a move within"),
]


def hosted(spec: str, plugin: str = "faulty") -> HostHandle:
    return HostHandle(spec, plugin, sandbox=PLAIN)


@pytest.mark.parametrize(("spec", "kind", "needle"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attacks_through_the_real_host_are_faults_of_their_seat(
    faulty_bots: Path, spec: str, kind: str, needle: str
) -> None:
    bad, good = hosted(spec), hosted("uniform", "reference")
    referee = Referee(move_time=2.0)
    try:
        records = [referee.play_round([bad, good], deck=DECK, seed=0)]
        tracemalloc.start()  # the second round, with everything imported and compiled
        try:
            records.append(referee.play_round([bad, good], deck=DECK, seed=1))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        for record in records:
            assert [(f.seat, f.kind) for f in record.faults] == [(0, kind)], record.faults
            assert needle in record.faults[0].message
            assert record.winners == [1]
        assert bad.starts == 2 and good.starts == 1
        assert peak < 3 * P.MAX_LINE_BYTES
    finally:
        bad.close()
        good.close()


def arena_play(*args: str) -> Any:
    return CliRunner().invoke(cli, ["play", *args, "--sandbox", "none", "--move-time", "2"])


@pytest.mark.parametrize(("spec", "kind", "needle"), ATTACKS[:3], ids=[a[0] for a in ATTACKS[:3]])
def test_arena_play_records_the_attack_and_exits_0(
    faulty_bots: Path, spec: str, kind: str, needle: str
) -> None:
    assert arena_play("honest", "uniform").exit_code == 0  # everything imported and compiled
    tracemalloc.start()
    try:
        result = arena_play(spec, "uniform")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.output
    assert result.exception is None
    assert "Traceback" not in result.output
    assert f"fault: seat 0 ({spec}) {kind}: " in result.output
    assert needle in result.output
    assert peak < 8 << 20


# --- unexpected errors ------------------------------------------------------------------------


class Unreliable(BotHandle):
    """A handle that raises an error no handle should (not a BotError) at ``where``; else it
    plays the first legal action, or answers ``answer`` when given."""

    def __init__(self, where: str, answer: str | None = None) -> None:
        self.name = f"unreliable-{where}"
        self.where = where
        self.answer = answer

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        if self.where == "start":
            raise RuntimeError("start broke")

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        if self.where == "act":
            raise KeyError("act broke")
        return self.answer or str(turn.observation.legal_actions[0])

    def after_fault(self) -> None:
        if self.where == "after_fault":
            raise OSError("cleaning up broke")


@pytest.mark.parametrize(
    ("where", "answer", "kind", "needle"),
    [
        ("start", None, "internal", "RuntimeError: start broke"),
        ("act", None, "internal", "KeyError: 'act broke'"),
        ("after_fault", "no action", "malformed", "then cleaning up: the referee failed"),
    ],
)
def test_an_unexpected_error_of_a_handle_is_an_internal_fault_of_its_seat(
    where: str, answer: str | None, kind: str, needle: str
) -> None:
    referee = Referee(move_time=None)
    handles = [Unreliable(where, answer), InProcessHandle(UniformBot(), "uniform")]
    record = referee.play_round(handles, deck=DECK, seed=1)
    assert [(f.seat, f.kind) for f in record.faults] == [(0, kind)]
    assert needle in record.faults[0].message
    assert record.winners == [1] and record.end_reason == "last_standing"
    # the referee's own failure counts against no bot; the bot's malformed answer does
    assert referee.fault_counts == ({} if kind == "internal" else {handles[0].name: 1})


def test_a_game_the_worker_cannot_play_is_recorded_and_the_block_goes_on(
    faulty_bots: Path,
) -> None:
    deck = tuple(DECK)
    setup = WorkerSetup(
        variant="classic",
        move_time=2.0,
        max_faults=3,
        entrants={"honest": "faulty", "uniform": "reference"},
        decks=(deck, (1, 2, 3), deck),  # deck 1 is not a deck of the variant
        sandbox=PLAIN,
    )
    seats = [("honest", "uniform"), ("uniform", "honest")]
    games = tuple(
        ScheduledGame(i, f"game {i}", i // 2, 0, i % 2, seats[i % 2], i) for i in range(6)
    )
    player = BlockPlayer(setup)
    try:
        result = player.play(BlockTask(0, games, {"honest": 1}))
    finally:
        player.close()
    records = [o.record for o in result.outcomes if o.record is not None]
    assert len(records) == 6
    broken = [r for r in records if r.end_reason == "internal"]
    assert [r.seats for r in broken] == [["honest", "uniform"], ["uniform", "honest"]]
    for record in broken:
        assert [f.kind for f in record.faults] == ["internal", "internal"]
        assert "the game could not be played: InvalidDeckError" in record.faults[0].message
        assert record.winners == []
    assert all(r.winners for r in records if r not in broken)
    # the worker's counts are exactly those of the records (the coordinator checks with them)
    counted = {"honest": 1}
    for record in records:
        for name in faulted(record):
            counted[name] = counted.get(name, 0) + 1
    # the games the worker could not play are the arena's failures: counted against no bot
    assert player.referee.fault_counts == counted == {"honest": 1}


# --- a tournament -----------------------------------------------------------------------------


def cli_output(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert result.exception is None
    return result.output


@pytest.mark.slow
def test_a_tournament_with_attackers_and_an_unplayable_game_finishes_and_reports(
    faulty_bots: Path, tmp_path: Path
) -> None:
    spec = TournamentSpec(
        decks="random:2:1", bots=("digits", "flooder", "wrongtype", "honest"), max_faults=None
    )
    plan = plan_tournament(spec, load_catalog(PLAIN))
    assert len(plan.schedule) == 24
    # every game on deck 1 is unplayable: the workers get a deck that is not one
    setup = dataclasses.replace(worker_setup(plan, PLAIN), decks=(plan.decks[0], (1, 2, 3)))
    store = Store(f"sqlite:///{tmp_path}/t.db")
    summary = run_tournament(plan, store, lambda: LocalPool(setup, 1), block_size=12)
    assert summary.complete and summary.played == 24
    assert store.status(summary.tournament_id) == "finished"
    # what `arena tournament` says of them (and why it then exits 1, not 0)
    assert summary.arena_failed == 12
    said = arena_failures(summary)
    assert said is not None and said.startswith("12 of 24 games could not be played for the")
    assert "the arena failed (a bug" in said and "InvalidDeckError" in said
    expected = {"digits": "malformed", "flooder": "protocol", "wrongtype": "protocol"}
    internal = 0
    seen: set[tuple[str, str]] = set()
    for game in store.stored_games(summary.tournament_id):
        record = game.record
        if game.deck == 1:
            assert [f.kind for f in record.faults] == ["internal", "internal"]
            internal += 1
            continue
        # the first attacker to move faults, and its game is over
        assert len(record.faults) <= 1
        for fault in record.faults:
            assert fault.kind == expected[record.seats[fault.seat]]
            seen.add((record.seats[fault.seat], fault.kind))
    assert internal == 12
    assert seen == set(expected.items())
    url = store.url
    board = json.loads(cli_output("leaderboard", "--json", "--db", url))["standings"]
    assert {row["bot"] for row in board} == set(spec.bots)
    assert all(row["games"] == 6 for row in board)  # the unplayable games are not rated
    assert "internal" in cli_output("report", "--db", url)
    page = tmp_path / "report.html"
    cli_output("report", "--html", str(page), "--db", url)
    assert "internal" in page.read_text()
    report = json.loads(cli_output("report", "--json", "--db", url))
    assert report["games"] == 24
    unplayable = next(g for g in store.stored_games(summary.tournament_id) if g.deck == 1)
    assert "internal: the game could not be played" in cli_output(
        "replay", str(unplayable.id), "--db", url
    )
