"""The reference bots, registered through the project's own ``arena.bots`` entry points.

Each bot is one module that declares itself in a module-level ``BOT`` (its policy, parameters
and registration in one place; :mod:`bots.policy` says how); :mod:`bots.plugin` registers every
module that does. The other modules are the bots' shared machinery (views, determinizations,
playouts, search trees) and the simulator (:mod:`bots.simulate`).

May import: arena.errors, arena.engine, arena.game, arena.bot, arena.botspec, arena.hookspecs,
solver.
"""
