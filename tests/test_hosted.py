"""Bots in their own host processes: the protocol, every kind of fault, restarts, the bot's log,
and disqualification. The misbehaving bots come from the ``faulty_bots`` fixture package."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from arena.errors import BotCrashedError
from arena.game import Game
from arena.hosting.hosted import BotLog, HostHandle
from arena.hosting.sandbox import Limits, Sandbox, choose_sandbox
from arena.referee.play import Referee, Turn

PLAIN = Sandbox("none")
DECK = [8, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7]


def hosted(spec: str, plugin: str = "faulty", **kw: object) -> HostHandle:
    return HostHandle(spec, plugin, sandbox=PLAIN, **kw)  # type: ignore[arg-type]


def test_hosted_uniform_plays_like_the_in_process_one() -> None:
    """The same seeds give the same record whether the bot runs here or in a host."""
    from arena.referee.play import InProcessHandle
    from bots.uniform import UniformBot

    referee = Referee("classic", move_time=None)
    a, b = hosted("uniform", "reference"), hosted("uniform", "reference")
    try:
        for seed in range(5):
            remote = referee.play_round([a, b], seed=seed)
            local = referee.play_round(
                [
                    InProcessHandle(UniformBot(), "uniform"),
                    InProcessHandle(UniformBot(), "uniform"),
                ],
                seed=seed,
            )
            assert remote.actions == local.actions and remote.winners == local.winners
            assert remote.faults == []
        assert a.starts == 1  # one host for all five rounds
    finally:
        a.close()
        b.close()


def test_bot_output_goes_to_its_log_not_the_protocol(faulty_bots: Path) -> None:
    honest, other = hosted("honest"), hosted("uniform", "reference")
    try:
        record = Referee().play_round([honest, other], seed=3)
        assert record.faults == []
        time.sleep(0.1)
        assert "thinking about move" in honest.log.text()
        assert "a note on stderr" in honest.log.text()
    finally:
        honest.close()
        other.close()


@pytest.mark.parametrize(
    ("spec", "kind", "needle"),
    [
        ("crasher", "crash", "the bot crashed on purpose"),
        ("badreset", "crash", "reset failed: ValueError: no seeds today"),
        ("exiter", "exited", "about to exit"),
        ("liar", "illegal", "Guard->3:Princess"),
        ("garbler", "malformed", "not an action at all"),
        ("viewliar", "illegal", "Guard->3:Princess"),
        ("viewgarbler", "crash", "TypeError"),
        ("corrupter", "protocol", "not JSON"),
        ("hog", "crash", "MemoryError"),
    ],
)
@pytest.mark.parametrize("box", ["none", "bwrap"], ids=["plain", "sandboxed"])
def test_each_fault_loses_the_round_and_the_host_restarts(
    faulty_bots: Path, request: pytest.FixtureRequest, spec: str, kind: str, needle: str, box: str
) -> None:
    """Each fault, from a plain host and from a sandboxed one (whose bot a held fork server
    serves from processes of their own: a process that exits is ``exited`` with its status the
    moment it exits, not a timeout after the move time)."""
    if box == "bwrap":
        request.getfixturevalue("bubblewrap")
    sandbox = PLAIN if box == "none" else choose_sandbox("bwrap", Limits(memory_mb=1024))
    bad = HostHandle(spec, "faulty", sandbox=sandbox, memory_mb=1024)
    good = hosted("uniform", "reference")
    referee = Referee(move_time=2.0)
    try:
        for seed in (1, 2):
            begun = time.monotonic()
            record = referee.play_round([bad, good], deck=DECK, seed=seed)
            assert [f.kind for f in record.faults] == [kind], record.faults
            assert needle in record.faults[0].message
            if spec == "exiter":
                said = "exited with code 3" if box == "none" or _kernel_says_how() else "exited"
                assert said in record.faults[0].message
                assert time.monotonic() - begun < 2.0  # when it exits, not at the move time
            assert record.faults[0].seat == 0 and record.winners == [1]
            assert record.end_reason == "last_standing"
        assert bad.starts == 2  # restarted for the second round
        assert good.starts == 1
        assert referee.fault_counts == {spec: 2}
    finally:
        bad.close()
        good.close()


def _kernel_says_how() -> bool:
    """Whether this kernel tells a pidfd's holder how its process ended (Linux 6.15)."""
    found = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return found is not None and (int(found[1]), int(found[2])) >= (6, 15)


def test_timeout_never_blocks_past_the_limit(faulty_bots: Path) -> None:
    slow, good = hosted("sleeper[seconds=30]"), hosted("uniform", "reference")
    referee = Referee(move_time=0.3)
    try:
        begun = time.monotonic()
        record = referee.play_round([slow, good], deck=DECK)
        assert time.monotonic() - begun < 0.3 + 0.25 + 2.0  # limit, grace, host start
        assert [f.kind for f in record.faults] == ["timeout"]
        assert not slow.running  # killed, not left sleeping
    finally:
        slow.close()
        good.close()


def test_three_players_go_on_after_a_fault(faulty_bots: Path) -> None:
    handles = [hosted("uniform", "reference"), hosted("crasher"), hosted("uniform", "reference")]
    try:
        record = Referee().play_round(handles, seed=5)
        assert [f.kind for f in record.faults] == ["crash"]
        assert 1 not in record.winners
        assert len(record.actions) >= 1
    finally:
        for h in handles:
            h.close()


def test_max_faults_disqualifies_for_the_rest_of_the_run(faulty_bots: Path) -> None:
    bad, good = hosted("liar"), hosted("uniform", "reference")
    referee = Referee(max_faults=2)
    try:
        kinds = [referee.play_round([bad, good], seed=s).faults[0].kind for s in range(4)]
        assert kinds == ["illegal", "illegal", "disqualified", "disqualified"]
        assert bad.starts == 2  # a disqualified bot is not even started
    finally:
        bad.close()
        good.close()


def test_a_host_that_cannot_set_up_its_bot_is_a_crash(faulty_bots: Path) -> None:
    handle = hosted("nosuchbot")
    try:
        with pytest.raises(BotCrashedError, match="could not be set up"):
            handle.start(0, 2, "classic", 1)
    finally:
        handle.close()


def test_the_host_sends_only_new_events(faulty_bots: Path) -> None:
    """Events are sent once each; the host rebuilds the whole observation from them."""
    handle = hosted("honest")
    game = Game(2, deck=DECK)
    try:
        handle.start(0, 2, "classic", 1)
        assert handle.act(Turn(game, 0), 2.0) == "Guard->1:Priest"
        game.play("Priest->1")
        game.play("Priest->0")
        # Seat 0 now holds a Guard and drew a Baron; it knows seat 1's Guard.
        assert handle.act(Turn(game, 0), 2.0) == "Guard->1:Priest"
        time.sleep(0.1)
        counts = [line for line in handle.log.text().splitlines() if "thinking" in line]
        assert counts[-1] == f"thinking about move {len(game.observation(0).events)}"
    finally:
        handle.close()


def test_bot_log_keeps_the_most_recent_bytes() -> None:
    log = BotLog(limit=10)
    log.write(b"0123456789")
    log.write(b"abcde")
    assert log.text() == "[5 earlier bytes dropped]\n56789abcde"
    assert log.tail() == "56789abcde"


def test_catalog_lists_plugins_bots_deck_sets_and_errors(faulty_bots: Path) -> None:
    from arena.hosting.catalog import load_catalog

    catalog = load_catalog(PLAIN)
    assert catalog.bots["uniform"].distribution == "loveletter-arena"
    sleeper = catalog.bots["sleeper"]
    assert (sleeper.plugin, sleeper.distribution, sleeper.version) == (
        "faulty",
        "arena-test-faulty-bots",
        "1.0",
    )
    assert sleeper.params == {"seconds": 5.0}
    assert catalog.bots["twoonly"].players == (2,) and catalog.bots["twoonly"].variants == (
        "classic",
    )
    decks = catalog.deck_sets["two"].decks["huibers"]
    assert decks[0] == [8, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7] and len(decks) == 2
    assert "broken" not in catalog.deck_sets
    assert any("deck set 'broken'" in e.error for e in catalog.errors)


def test_play_writes_each_bots_log(faulty_bots: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli.main import cli

    logs = tmp_path / "logs"
    deck = ",".join(map(str, DECK))  # honest misses with its Guard, then crasher moves
    args = ["play", "honest", "crasher", "--deck", deck, "--sandbox", "none"]
    args += ["--bot-logs", str(logs)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "crash: RuntimeError: the bot crashed on purpose" in result.output
    assert "thinking about move" in (logs / "seat0-honest.log").read_text()
    assert (logs / "seat1-crasher.log").exists()


def test_the_host_warms_the_bot_up_before_hello(faulty_bots: Path) -> None:
    handle = hosted("warm")
    try:
        handle.start(0, 2, "classic", 1)  # returns once the host said hello
        time.sleep(0.1)
        assert "warmed up before the first round" in handle.log.text()
    finally:
        handle.close()


def test_policy_bots_warm_up_without_changing_their_play() -> None:
    from arena.game import Game
    from bots.policy import policy_bot

    bot = policy_bot("random")()
    bot.reset(4)
    obs = Game(2, seed=9).observation(0)
    first = bot.act(obs)
    bot.reset(4)
    bot.warm_up()
    assert bot.act(obs) == first


def test_a_policy_bot_answers_the_same_from_the_view_as_from_the_observation() -> None:
    """``act_view`` (the host's fast path, docs/protocol.md) makes the choice ``act`` makes."""
    import random

    from arena.game import Action
    from bots.policy import policy_bot

    rng = random.Random(5)
    small = {"montecarlo": {"playouts": 20}, "pimc": {"determinizations": 4, "iterations": 20}}
    for name in ("knowledge", "montecarlo", "pimc"):
        bot = policy_bot(name)(**small.get(name, {}))
        for r in range(6):
            game = Game(2, "classic", seed=r)
            while not game.over:
                obs = game.observation(game.turn)
                bot.reset(r)
                chosen = bot.act(obs)
                bot.reset(r)
                view = game.view(game.turn).tolist()
                packed = bot.act_view(view, [a.to_int() for a in obs.legal_actions])
                assert Action.from_int(packed) == chosen
                game.play(rng.choice(obs.legal_actions))


def test_hosted_policy_bots_play_like_the_in_process_ones() -> None:
    """A hosted policy bot answers through ``act_view``; the records are those of the same bots
    in this process, answering through ``act``."""
    from arena.referee.play import InProcessHandle
    from bots.policy import policy_bot

    referee = Referee("classic", move_time=None)
    specs = ("knowledge", "montecarlo[playouts=20]")
    a, b = hosted(specs[0], "reference"), hosted(specs[1], "reference")
    try:
        for seed in range(4):
            remote = referee.play_round([a, b], seed=seed)
            local = referee.play_round(
                [
                    InProcessHandle(policy_bot("knowledge")(), specs[0]),
                    InProcessHandle(policy_bot("montecarlo")(playouts=20), specs[1]),
                ],
                seed=seed,
            )
            assert remote.actions == local.actions and remote.winners == local.winners
            assert remote.faults == []
    finally:
        a.close()
        b.close()
