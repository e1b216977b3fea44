"""Deck sets: the fixed orders a tournament plays (``fixed36``, ``balanced:N``, ``random:N``,
``file:PATH`` and plugins' sets), which of them are secret, and their balance figures.

Modules: :mod:`~arena.decks.sets`.

May import: arena.errors, arena.seeds, arena.engine, arena.game, arena.hosting, solver.
"""
