"""The bot author's kit: what an author runs before submitting.

Modules: :mod:`~arena.kit.scaffold` (``arena new-bot``: a ready package),
:mod:`~arena.kit.conformance` (``arena check``: the conformance run) and :mod:`~arena.kit.wheel`
(a pure-Python wheel written byte by byte, to submit).

May import: arena, arena.errors, arena.seeds, arena.engine, arena.game, arena.bot, arena.botspec,
arena.hookspecs, arena.referee, solver, bots, arena.hosting, arena.decks, leaderboard,
arena.tournament.
"""
