"""A person at the table: what the screen shows (pure functions of the Observation), the human
seat played by the referee, and the real `arena play --human` in a pseudo-terminal."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner
from processes import interruptible, left_running

from arena.cli.main import cli
from arena.game import Card, Game
from arena.hosting.human import (
    ChoiceError,
    HumanBot,
    LeftTable,
    event_lines,
    move_lines,
    parse_choice,
    play_human,
    seat_names,
    table_lines,
)
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import MatchRecord
from bots.uniform import UniformBot

ARENA = str(Path(sys.executable).with_name("arena"))
#: Classic, two players, top card first: a Guard set aside, three Guards face up, seat 0 is dealt
#: a Prince and seat 1 the Princess; seat 0 draws a Priest, seat 1 a Guard.
DECK = "1,1,1,1,5,8,2,1,2,3,3,4,4,5,6,7"
CARD_NAMES = "|".join(str(c) for c in Card)
PROMPT = r"your move \[1-(\d+)\]: "


def opening() -> Game:
    """A round dealt from :data:`DECK`, seat 0 to move."""
    return Game(2, "classic", deck=[int(c) for c in DECK.split(",")])


def test_the_moves_are_numbered_with_their_effect_in_words() -> None:
    observation = opening().observation(0)
    assert move_lines(observation, seat_names(["random"], 0)) == [
        "  1) Priest: look at the hand of seat 1 (random)",
        "  2) Prince: discard your own Priest and draw a new card",
        "  3) Prince: seat 1 (random) discards their hand and draws a new card",
    ]


def test_a_guard_names_a_seat_and_a_card_and_a_forced_countess_says_why() -> None:
    game = opening()
    game.play("Priest->1")
    names = seat_names(["random"], 1)
    lines = move_lines(game.observation(1), names)
    assert lines[0] == "  1) Guard: guess seat 0 (random) holds a Priest"
    assert len(lines) == 7 + 1  # the Guard's seven guesses, and the Princess
    assert lines[-1] == "  8) Princess: you are out of the round"
    # seat 0 holds King and Countess: the rules leave one move, and the screen says why.
    countess = Game(2, "classic", deck=[1, 1, 1, 1, 6, 8, 7, 1, 2, 2, 3, 3, 4, 4, 5, 5])
    assert move_lines(countess.observation(0), seat_names(["random"], 0)) == [
        "  1) Countess: no effect (you must play it: you hold a King)"
    ]


def test_the_table_shows_the_hand_and_not_the_opponents_card_until_a_priest_shows_it() -> None:
    game = opening()
    names = seat_names(["random"], 0)
    before = "\n".join(table_lines(game.observation(0), names))
    assert "your hand: Prince, Priest" in before
    assert "face up: Guard, Guard, Guard" in before
    assert "deck: 9 cards" in before
    assert "Princess" not in before
    game.play("Priest->1")
    game.play("Guard->0:Baron")
    after = table_lines(game.observation(0), names)
    assert "you know seat 1 (random) holds a Princess" in after
    assert "  seat 0 (you)     discards: Priest" in after
    seen = "\n".join(event_lines(game.observation(0), 0, names))
    assert "seat 0 (you) sees that seat 1 (random) holds Princess" in seen
    assert "seat 1 (random) draws" not in seen
    # And from the other side: seat 1 knows it was seen.
    theirs = table_lines(game.observation(1), seat_names(["random"], 1))
    assert "seat 0 (random) knows you hold a Princess" in theirs
    assert theirs[-1] == "your hand: Princess"


def test_protection_and_knockouts_are_on_the_table() -> None:
    game = opening()
    game.play("Priest->1")
    game.play("Guard->0:Prince")  # seat 0 holds a Prince: out
    lines = table_lines(game.observation(1), seat_names(["random"], 1))
    assert "  seat 0 (random)  discards: Priest, Prince  [out]" in lines


def test_a_choice_is_a_number_or_the_action_written_out() -> None:
    observation = opening().observation(0)
    assert str(parse_choice(" 3 ", observation)) == "Prince->1"
    assert str(parse_choice("Prince->0", observation)) == "Prince->0"
    for answer, says in [
        ("", "no move chosen"),
        ("0", "there is no move 0"),
        ("4", "there is no move 4"),
        ("Guard->1:Priest", "is not one of the moves"),
        ("banana", "is not one of the moves"),
        ("٣", "is not one of the moves"),
    ]:
        with pytest.raises(ChoiceError, match=says) as caught:
            parse_choice(answer, observation)
        assert "type a number from 1 to 3, or q to leave" in str(caught.value)


def test_the_human_bot_asks_again_until_the_answer_is_a_move_and_leaves_on_eof() -> None:
    answers = iter(["", "9", "2"])
    shown: list[str] = []
    bot = HumanBot(0, seat_names(["random"], 0), lambda prompt: next(answers), shown.append)
    assert str(bot.act(opening().observation(0))) == "Prince->0"
    assert shown.count("there is no move 9: type a number from 1 to 3, or q to leave") == 1
    assert any(line.startswith("no move chosen") for line in shown)

    def end_of_input(prompt: str) -> str:
        raise EOFError

    with pytest.raises(LeftTable, match="end of input"):
        HumanBot(0, ["you", "random"], end_of_input, shown.append).act(opening().observation(0))
    with pytest.raises(LeftTable, match="you quit"):
        HumanBot(0, ["you", "random"], lambda p: "q", shown.append).act(opening().observation(0))


def test_a_match_with_the_human_seat_through_the_referee() -> None:
    """The human seat is played by the referee like any bot: always the first move, to the end
    of a match against the uniform bot, in seat 1 with seat 1 starting."""
    shown: list[str] = []
    record = play_human(
        Referee("classic", move_time=1.0),
        [InProcessHandle(UniformBot(), "uniform")],
        seat=1,
        whole_match=True,
        round_options={"seed": 11, "first": 1},
        ask=lambda prompt: "1",
        say=shown.append,
    )
    assert isinstance(record, MatchRecord)
    assert record.seats == ["uniform", "human"]
    assert record.rounds[0].first == 1
    assert all(not r.faults for r in record.rounds)
    assert shown.count("== round 1 == you are seat 1") == 1
    results = [line for line in shown if re.fullmatch(r"you (win|lose|share) the round", line)]
    assert len(results) == len(record.rounds)
    assert max(record.tokens) == 7
    winner = "you win" if record.winner == 1 else "seat 0 (uniform) wins"
    assert shown[-1] == f"{winner} the match"


class CannotStart(UniformBot):
    """A bot whose round never starts."""

    def reset(self, seed: int) -> None:
        raise RuntimeError("no table for me")


def test_a_bot_that_cannot_start_is_a_fault_the_person_sees() -> None:
    shown: list[str] = []
    record = play_human(
        Referee("classic"),
        [InProcessHandle(CannotStart(), "broken")],
        seat=0,
        whole_match=False,
        round_options={"seed": 3},
        ask=lambda prompt: "1",
        say=shown.append,
    )
    assert record.winners == [0]
    assert shown[1] == "== round 1 == you are seat 0"
    assert "  · seat 1 (broken) forfeits the round (fault)" in shown
    assert any(line.startswith("fault: seat 1 (broken) crash: reset raised") for line in shown)
    assert shown[-1] == "you win the round"


# --- the real command in a pseudo-terminal ---------------------------------------------------


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """``arena play --human ARGS`` in a pseudo-terminal, taking Ctrl-C as a terminal does."""
    return pexpect.spawn(
        ARENA,
        ["play", "--human", *args],
        encoding="utf-8",
        timeout=60,
        env=env,
        preexec_fn=interruptible,
        dimensions=(50, 200),
    )


def play_out(child: pexpect.spawn, choose: str = "1") -> str:
    """Answer ``choose`` at every prompt until the command ends; the whole screen."""
    screen = []
    while child.expect([PROMPT, pexpect.EOF]) == 0:
        screen.append(child.before + child.after)
        child.sendline(choose)
    screen.append(child.before)
    child.close()
    return "".join(screen)


def test_a_whole_round_in_a_terminal() -> None:
    child = spawn("random", "--deck", DECK, "--seed", "4", "--sandbox", "none")
    child.expect(PROMPT)
    first = child.before
    assert "your hand: Prince, Priest" in first
    assert "Princess" not in first  # seat 1 holds it, and nothing has shown it yet
    for answer, says in [("7", "there is no move 7"), ("", "no move chosen"), ("x", "'x' is not")]:
        child.sendline(answer)
        child.expect(says)
        child.expect(r"your move \[1-3\]: ")
    number = re.search(r"(\d+)\) Priest: look at the hand of seat 1 \(random\)", first)
    assert number is not None
    child.sendline(number.group(1))
    child.expect("sees that seat 1 \\(random\\) holds Princess")
    rest = play_out(child)
    screen = first + rest
    assert child.exitstatus == 0, screen
    assert "seat 1 (random) is dealt" not in screen
    assert re.search(rf"seat 1 \(random\) draws ({CARD_NAMES})", screen) is None
    assert re.search(r"round over \(.*\): .*(wins|shared)", screen)
    assert re.search(r"you (win|lose|share) the round", screen)


def test_a_match_in_a_terminal_runs_to_its_winner() -> None:
    child = spawn("random", "--match", "--seed", "7", "--seat", "1", "--sandbox", "none")
    screen = play_out(child)
    assert child.exitstatus == 0, screen[-2000:]
    assert "== round 1 == you are seat 1" in screen and "== round 7 ==" in screen
    tokens = re.search(r"tokens: seat 0 \(random\) (\d+), seat 1 \(you\) (\d+)", screen)
    assert tokens is not None
    random_tokens, my_tokens = int(tokens.group(1)), int(tokens.group(2))
    assert max(random_tokens, my_tokens) == 7
    won = "you win" if my_tokens == 7 else "seat 0 (random) wins"
    assert f"{won} the match" in screen
    assert "seat 0 (random) is dealt" not in screen


def test_end_of_input_leaves_the_table_in_one_line() -> None:
    child = spawn("random", "--deck", DECK, "--seed", "4", "--sandbox", "none")
    child.expect(r"your move \[1-3\]: ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert "arena: you left the table (end of input); the game was not finished" in child.before
    assert "Traceback" not in child.before
    assert child.exitstatus == 1


def plain(text: str) -> str:
    """``text`` without terminal escape sequences, one line per line."""
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).replace("\r\n", "\n")


def test_ctrl_c_leaves_in_one_line_with_no_process_left(tmp_path: Path) -> None:
    marker = tmp_path / "human-ctrl-c"
    marker.mkdir()
    env = {**os.environ, "PYTHONPATH": str(marker)}
    # Seat 0 holds two Handmaids: it cannot knock the person in seat 1 out before they move.
    deck = "1,4,2,3,4,1,1,1,1,2,3,5,5,6,7,8"
    child = spawn("random", "random", "--deck", deck, "--seat", "1", env=env)
    child.expect(PROMPT)
    assert left_running(str(marker)), "the bots' hosts should be running"
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    # What follows the prompt, but for the terminal's echo of ^C and the colour reset numba's
    # colorama writes to a terminal at exit.
    lines = (line.strip() for line in plain(child.before).splitlines())
    after = [line for line in lines if line and line != "^C"]
    assert after == ["arena: interrupted"], after
    assert "Traceback" not in child.before
    assert child.signalstatus is None and child.exitstatus == 130
    assert left_running(str(marker)) == []


def test_ctrl_c_while_a_bot_thinks_leaves_the_same_way(
    faulty_site: Path, tmp_path: Path, bubblewrap: None
) -> None:
    marker = tmp_path / "human-ctrl-c-thinking"
    marker.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{faulty_site}:{marker}"}
    child = spawn(
        "sleeper[seconds=60]", "--seat", "1", "--first", "0", "--move-time", "120", env=env
    )
    child.expect("seat 0")  # the table is drawn: the bot in seat 0 is asked its move
    deadline = time.monotonic() + 60
    while not left_running(str(marker)):
        assert time.monotonic() < deadline, "the bot's host never started"
        time.sleep(0.05)
    # Its host has started and the bot sleeps in act: the person is not asked anything.
    assert child.expect([PROMPT, pexpect.TIMEOUT], timeout=2.0) == 1
    child.sendintr()
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    lines = (line.strip() for line in plain(child.before).splitlines())
    assert [line for line in lines if line and line != "^C"][-1:] == ["arena: interrupted"]
    assert "Traceback" not in child.before
    assert child.signalstatus is None and child.exitstatus == 130
    assert left_running(str(marker)) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "Missing argument 'BOTS...' (or --human to play yourself)"),
        (("--human", "random", "--seat", "2"), "seat 2 is not one of the 2 seats"),
        (("--human", "random", "--first", "2"), "seat 2 is not one of the 2 seats"),
        (("--human", "random", "--reveal"), "--reveal would show you the hidden cards"),
        (("--human", "random", "--json"), "--json is for machines"),
        (("--human", "random", "random", "--variant", "huibers"), "for 2 players, not 3"),
    ],
)
def test_what_cannot_be_played_is_one_line(args: tuple[str, ...], says: str) -> None:
    result = CliRunner().invoke(cli, ["play", *args])
    assert result.exit_code == 2
    assert says in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_first_starts_the_first_round_of_a_match() -> None:
    args = ["uniform", "uniform", "--match", "--first", "1", "--json", "--sandbox", "none"]
    result = CliRunner().invoke(cli, ["play", *args])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rounds"][0]["first"] == 1
