"""How bots run: plugins found through entry-point metadata, one host process per bot in a sandbox,
and the referee's handle on each.

Modules: :mod:`~arena.hosting.names` (who owns a bot name), :mod:`~arena.hosting.plugins` (pluggy
and the bot registry, inside a host), :mod:`~arena.hosting.catalog` (the bots installed here, as
the referee's process knows them, without importing any), :mod:`~arena.hosting.listing_cache`
(each plugin's answer, remembered by its package's content), :mod:`~arena.hosting.protocol` (the
JSON lines between referee and host), :mod:`~arena.hosting.host` (the host, ``python -m
arena.hosting.host``), :mod:`~arena.hosting.hosted` (the referee's side of a host),
:mod:`~arena.hosting.sandbox`, :mod:`~arena.hosting.seccomp` and :mod:`~arena.hosting.cgroups`
(bubblewrap, the system-call filter and kernel limits), :mod:`~arena.hosting.kernels` (the trusted
compile step of the arena's own bots), :mod:`~arena.hosting.starts` (bots that could not start),
:mod:`~arena.hosting.human` (a person's seat in the terminal), :mod:`~arena.hosting.submissions`
(the store of submitted bots' read-only snapshots and their versions),
:mod:`~arena.hosting.build` (``arena submit``: a submission built inside the sandbox) and
:mod:`~arena.hosting.copyout` (what crosses back from a build: its output, copied by bounded
code).

May import: arena, arena.errors, arena.seeds, arena.engine, arena.game, arena.bot, arena.botspec,
arena.hookspecs, arena.referee, solver, bots.
"""
