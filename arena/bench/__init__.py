"""``arena bench``: the project's speed figures, each measured the same way every time.

Modules: :mod:`~arena.bench.measure` (the benchmarks and how they are run),
:mod:`~arena.bench.goals` (the goal each figure is held to) and :mod:`~arena.bench.field` (the
package of entrants the field benchmarks play).

May import: every subsystem but arena.cli.
"""
