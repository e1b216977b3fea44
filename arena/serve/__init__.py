"""``arena serve``: the competition server over the arena's database (docs/serve.md).

Modules: :mod:`~arena.serve.app` (the HTTP API, a Starlette application),
:mod:`~arena.serve.pipeline` (uploads built in the sandbox and checked, one at a time),
:mod:`~arena.serve.ladder` (placement sets, rated rounds and the ladder's standings),
:mod:`~arena.serve.background` (the thread and child processes both of those run),
:mod:`~arena.serve.privacy` (who sees a bot's private output: the one place that decides) and
:mod:`~arena.serve.client` (``arena submit --server``, the other end).
Against hostile traffic: :mod:`~arena.serve.traffic` (the limits, the cap the open-file limit
allows), :mod:`~arena.serve.connections` (each connection held to them),
:mod:`~arena.serve.server` (uvicorn with its own acceptor) and :mod:`~arena.serve.logs` (the
log rate-limited).

May import: arena, arena.errors, arena.seeds, arena.engine, arena.game, arena.bot, arena.botspec,
arena.hookspecs, arena.referee, solver, bots, arena.hosting, arena.decks, leaderboard,
arena.tournament, arena.kit.
"""
