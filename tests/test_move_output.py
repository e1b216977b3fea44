"""What a bot writes beside each of its moves (arena.referee.records.MoveOutput): recorded by
the referee from a handle that keeps output, bounded and made printable, kept through JSON,
shown beside the move on the replay page, and to its own seat's reader alone."""

from __future__ import annotations

from typing import Any

from arena.referee.play import InProcessHandle, Referee, Turn
from arena.referee.records import MOVE_OUTPUT_CHARS, SEAT_OUTPUT_CHARS, GameRecord
from bots.uniform import UniformBot
from leaderboard.replay_page import replay_data

DECK = [8, 1, 1, 1, 2, 3, 1, 6, 4, 5, 2, 3, 4, 5, 7, 1]


class Talking(InProcessHandle):
    """An in-process bot that "writes" ``say(move)`` as it chooses each move."""

    def __init__(self, name: str, say: Any) -> None:
        super().__init__(UniformBot(), name=name)
        self.say, self.written, self.moves = say, "", 0

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        self.moves += 1
        self.written += self.say(self.moves)
        return super().act(turn, time_limit)

    def output_mark(self) -> int:
        return len(self.written)

    def output_since(self, mark: int, limit: int) -> str:
        return self.written[mark:][-limit:]


def _record(say0: Any, say1: Any) -> GameRecord:
    handles = [Talking("a", say0), Talking("b", say1)]
    return Referee(move_time=None).play_round(handles, deck=DECK, seed=3)


def test_each_move_keeps_what_its_bot_wrote_choosing_it() -> None:
    record = _record(lambda n: f"a thinks {n}\n", lambda n: "" if n % 2 else "b\x1b[2J\n")
    mine = [o for o in record.output if o.seat == 0]
    assert [o.text for o in mine] == [f"a thinks {n}\n" for n in range(1, len(mine) + 1)]
    assert [record.actions[o.move][0] for o in record.output] == [o.seat for o in record.output]
    assert all(o.text == "b\\x1b[2J\n" for o in record.output if o.seat == 1)  # escaped
    again = GameRecord.from_json(record.to_json())
    assert again.output == record.output
    assert record.with_messages_of({1}).output == [o for o in record.output if o.seat == 1]
    assert "output" not in _record(lambda n: "", lambda n: "").to_json()


def test_output_is_bounded_per_move_and_per_seat() -> None:
    record = _record(lambda n: "x" * 5000, lambda n: "")
    assert all(len(o.text) <= MOVE_OUTPUT_CHARS for o in record.output)
    assert sum(len(o.text) for o in record.output) <= SEAT_OUTPUT_CHARS


def test_the_replay_page_shows_it_beside_the_move_and_hides_others_seats() -> None:
    record = _record(lambda n: f"a{n}", lambda n: f"b{n}")
    shown = replay_data(record, game_id=1, tournament_id=1, hidden=False)
    said = [(s["seat"], s["output"]) for s in shown["steps"] if "output" in s]
    assert said == [(o.seat, o.text) for o in record.output]
    hidden = replay_data(record, game_id=1, tournament_id=1, hidden=True, own_seats={1})
    assert {s["seat"] for s in hidden["steps"] if "output" in s} == {1}
    public = replay_data(record, game_id=1, tournament_id=1, hidden=True)
    assert not [s for s in public["steps"] if "output" in s]
