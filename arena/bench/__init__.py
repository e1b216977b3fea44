"""``arena bench``: the project's speed figures, each measured the same way every time.

Modules: :mod:`~arena.bench.measure` (the benchmarks and how they are run),
:mod:`~arena.bench.goals` (the goal each figure is held to) and :mod:`~arena.bench.field` (the
package of entrants the field benchmarks play), :mod:`~arena.bench.serve_pages` (the page loads
of ``arena serve`` over a ladder of 100,000 games).

May import: every subsystem but arena.cli.
"""
