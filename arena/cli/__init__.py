"""The ``arena`` command: :mod:`~arena.cli.main` holds the click group (one-line errors) and adds
the commands of every other module, each of which owns one command or command group:
:mod:`~arena.cli.play`, :mod:`~arena.cli.bots`, :mod:`~arena.cli.kit` (``new-bot``, ``check``),
:mod:`~arena.cli.tournament` (``tournament``, ``tournaments``, ``leaderboard``, ``report``,
``replay``), :mod:`~arena.cli.match`, :mod:`~arena.cli.games` (``games``, ``export``),
:mod:`~arena.cli.decks`, :mod:`~arena.cli.research` (``simulate``, ``solve``),
:mod:`~arena.cli.submit` (``submit``, ``submissions``, ``withdraw``) and
:mod:`~arena.cli.bench`. Options they share are in :mod:`~arena.cli.options`.

May import: every subsystem. Nothing imports it.
"""
