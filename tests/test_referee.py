"""The referee: observations per seat, validation of answers, faults, records and matches."""

from __future__ import annotations

import time
from typing import Any

import pytest

from arena.bot import Bot
from arena.game import Action, Observation
from arena.referee.play import InProcessHandle, Referee
from arena.referee.records import GameRecord, MatchRecord
from bots.uniform import UniformBot


class Recorder(UniformBot):
    """A uniform bot that keeps every observation it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Observation] = []

    def act(self, observation: Observation) -> Action:
        self.seen.append(observation)
        return super().act(observation)


class Answering(Bot):
    """Answers every move with a fixed object."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer

    def act(self, observation: Observation) -> Any:
        return self.answer


class Raising(Bot):
    def act(self, observation: Observation) -> Action:
        raise RuntimeError("boom")


class Sleepy(UniformBot):
    def act(self, observation: Observation) -> Action:
        time.sleep(0.35)
        return super().act(observation)


def handles(*bots: Any) -> list[InProcessHandle]:
    return [InProcessHandle(b) for b in bots]


def test_each_bot_sees_only_its_own_seat() -> None:
    a, b = Recorder(), Recorder()
    record = Referee().play_round(handles(a, b), seed=11)
    assert a.seen and b.seen
    assert all(o.seat == 0 and o.turn == 0 for o in a.seen)
    assert all(o.seat == 1 and o.turn == 1 for o in b.seen)
    for o in a.seen + b.seen:
        assert o.legal_actions, "the seat to move always gets its legal actions"
        assert all(e.visible(o.seat) for e in o.events)
    assert record.moves == [len(a.seen), len(b.seen)]
    assert not record.faults


@pytest.mark.parametrize(
    ("bad", "kind"),
    [(Answering("Jester->1"), "malformed"), (Answering(42), "malformed"), (Raising(), "crash")],
)
def test_bad_answers_forfeit_the_round(bad: Bot, kind: str) -> None:
    record = Referee().play_round(handles(bad, UniformBot()), seed=3)
    assert record.winners == [1]
    assert record.end_reason == "last_standing"
    assert [(f.seat, f.kind, f.move) for f in record.faults] == [(0, kind, 0)]
    assert record.faults[0].message


def test_illegal_action_is_a_fault() -> None:
    # Seat 0 always answers "Princess": legal only if it holds her, so it forfeits at once here.
    deck = [1, 2, 3, 1, 4, 5, 6, 7, 1, 1, 2, 3, 4, 5, 1, 8]  # seat 0 holds Handmaid, draws King
    record = Referee().play_round(handles(Answering("Princess"), UniformBot()), deck=deck)
    assert [(f.seat, f.kind) for f in record.faults] == [(0, "illegal")]
    assert "Princess" in record.faults[0].message
    assert record.winners == [1]


def test_three_player_round_goes_on_after_a_fault() -> None:
    record = Referee().play_round(handles(UniformBot(), Raising(), UniformBot()), seed=5)
    assert [f.seat for f in record.faults] == [1]
    assert 1 not in record.winners
    assert record.moves[0] >= 1 and record.moves[2] >= 1


def test_late_answer_is_a_timeout() -> None:
    record = Referee(move_time=0.05).play_round(handles(Sleepy(), UniformBot()), seed=2)
    assert [(f.seat, f.kind) for f in record.faults] == [(0, "timeout")]


def test_record_json_round_trip_and_log() -> None:
    record = Referee().play_round(handles(UniformBot(), UniformBot()), seed=9)
    again = GameRecord.from_json(record.to_json())
    assert again == record
    public = record.log_lines()
    everything = record.log_lines(reveal=True)
    assert len(everything) > len(public)
    assert public[0].startswith("1. ") or public[0].startswith(" 1. ")
    assert not any("dealt" in line for line in public)
    assert any("dealt" in line for line in everything)


def test_match_until_seven_tokens() -> None:
    match = Referee().play_match(handles(UniformBot(), UniformBot()), seed=1)
    assert max(match.tokens) == 7 and match.tokens.count(7) == 1
    assert match.winner == match.tokens.index(7)
    assert sum(len(r.winners) for r in match.rounds) == sum(match.tokens)
    for previous, current in zip(match.rounds, match.rounds[1:], strict=False):
        assert current.first in previous.winners
    assert MatchRecord.from_json(match.to_json()) == match


def test_same_seed_same_record() -> None:
    one = Referee().play_round(handles(UniformBot(), UniformBot(), UniformBot()), seed=77)
    two = Referee().play_round(handles(UniformBot(), UniformBot(), UniformBot()), seed=77)
    a, b = one.to_json(), two.to_json()
    for timed in ("times", "slowest"):
        a.pop(timed)
        b.pop(timed)
    assert a == b
    assert all(0 < s <= t for s, t in zip(one.slowest, one.times, strict=True))


def test_opening_moves_are_played_before_the_bots() -> None:
    # Huibers deal: seat 0 holds the Baron, seat 1 the Princess; seat 0 draws a Guard.
    deck = [3, 1, 8, 1, 1, 1, 1, 2, 2, 4, 4, 5, 5, 6, 7, 3]
    a, b = Recorder(), Recorder()
    record = Referee("huibers").play_round(handles(a, b), deck=deck, opening=["Guard->1:Princess"])
    assert record.actions == [(0, "Guard->1:Princess")]
    assert record.opening == 1
    assert record.winners == [0] and record.end_reason == "last_standing"
    assert a.seen == [] and b.seen == []
    assert GameRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize(
    ("opening", "error"),
    [(["Guard->1"], "InvalidActionError"), (["Baron->1"], "IllegalActionError")],
)
def test_bad_opening_moves_raise_before_any_bot_is_asked(opening: list[str], error: str) -> None:
    deck = [3, 1, 8, 1, 1, 1, 1, 2, 2, 4, 4, 5, 5, 6, 7, 3]
    a = Recorder()
    with pytest.raises(Exception) as info:
        Referee("huibers").play_round(handles(a, Recorder()), deck=deck, opening=opening)
    assert type(info.value).__name__ == error
    assert a.seen == []
