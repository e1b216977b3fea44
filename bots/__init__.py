"""The reference bots, registered through the project's own ``arena.bots`` entry points."""
