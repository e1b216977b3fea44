"""The referee: it alone holds a round's true state, plays rounds and matches between bot handles
and records them.

Modules: :mod:`~arena.referee.play` (the :class:`~arena.referee.play.Referee`, the handle
interface a seat is played through, and in-process handles) and :mod:`~arena.referee.records`
(what finished play leaves: faults, :class:`~arena.referee.records.GameRecord`, match records).
How bots run in their own processes is :mod:`arena.hosting`'s; the referee sees only handles.

May import: arena.game, arena.errors, arena.seeds.
"""
