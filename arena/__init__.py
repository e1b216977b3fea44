"""loveletter-arena: a referee, tournament runner and leaderboard for Love Letter bots."""

__version__ = "0.1.0"
