"""The Dynamic Programming solver of two-player Love Letter (Huibers 2016, section 3.2).

:func:`load_table` gives the win chance and the best choice for every configuration
f(b1, b2, c, A, maid, known, p) reachable from the openings of the ``huibers`` variant, from the
user's cache directory (built in under a second and saved the first time; :func:`open_table` also
says whether it was loaded or built). Slots are numbered by
:func:`solver.index.state_index`; ``docs/solver.md`` describes the model.

May import: arena.errors, arena.engine.
"""

from solver.opening import opening_rows
from solver.table import (
    SOLVER_VERSION,
    CachedTable,
    DPTable,
    build_table,
    load_table,
    open_table,
    read_table,
    save_table,
    table_path,
)

__all__ = [
    "SOLVER_VERSION",
    "CachedTable",
    "DPTable",
    "build_table",
    "load_table",
    "open_table",
    "opening_rows",
    "read_table",
    "save_table",
    "table_path",
]
