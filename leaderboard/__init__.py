"""Storage of tournaments and games, rating maths, standings and reports.

May import: arena, arena.errors, arena.engine, arena.game, arena.referee, arena.hosting,
arena.decks.
"""
