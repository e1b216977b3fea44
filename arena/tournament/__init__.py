"""Tournaments: the schedule of a field's games, the executors that play it in blocks, and what
keeps a run honest and resumable.

Modules: :mod:`~arena.tournament.runner` (choose the entrants and decks, plan, play the schedule in
blocks and store each), :mod:`~arena.tournament.schedule` (the games, each with its key and seed),
:mod:`~arena.tournament.worker` (what one worker does with a block),
:mod:`~arena.tournament.start_budget` (a bot's hosts started in the background, its restarts held
to a budget), :mod:`~arena.tournament.pool`
(local worker processes) and :mod:`~arena.tournament.ray_executor` (Ray actors),
:mod:`~arena.tournament.disqualification`, :mod:`~arena.tournament.lease` (one runner per
tournament), :mod:`~arena.tournament.match` (two bots head to head with a sequential test) and
:mod:`~arena.tournament.progress` (the progress line).

May import: arena, arena.errors, arena.seeds, arena.engine, arena.game, arena.bot, arena.botspec,
arena.hookspecs, arena.referee, solver, bots, arena.hosting, arena.decks, leaderboard.
"""
