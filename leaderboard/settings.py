"""A stored tournament's settings, as every ``--json`` output about a tournament carries them.

:func:`with_settings` puts the tournament's id (``tournament``) and :func:`tournament_settings`
(``settings``) in front of a command's own JSON data, so that a saved output says what it
came from.
"""

from __future__ import annotations

from typing import Any

from leaderboard.store import TournamentDetail, TournamentInfo


def tournament_settings(t: TournamentDetail | TournamentInfo) -> dict[str, Any]:
    """The stored configuration of tournament ``t``, with what it was created with.

    ``name``; ``decks`` (the deck set as given), ``deck_count``, ``secret_decks``;
    ``variant``; ``players`` per table; ``seed``; ``repeat``; ``games_per_table`` (every
    deck in every seat rotation, ``repeat`` times: the games each pair plays at two
    players); ``move_time`` (seconds); ``max_faults`` (``None``: no limit); ``entrants`` (in
    the order they were entered), ``gauntlet`` and ``additions`` (``None`` and ``[]`` when it
    has none); ``sandboxes`` (how bots ran in each run, oldest first); ``arena_version`` and
    ``created`` (ISO 8601, UTC).
    """
    config = t.configuration
    deck_count = len(t.decks) if isinstance(t, TournamentDetail) else t.deck_count
    entrants = [e.name for e in t.entrants] if isinstance(t, TournamentDetail) else list(t.entrants)
    repeat = int(config.get("repeat", 1))
    return {
        "name": t.name,
        "decks": config.get("decks"),
        "deck_count": deck_count,
        "secret_decks": t.secret_decks,
        "variant": t.variant,
        "players": t.players,
        "seed": t.seed,
        "repeat": repeat,
        "games_per_table": t.players * deck_count * repeat,
        "move_time": config.get("move_time"),
        "max_faults": config.get("max_faults"),
        "entrants": entrants,
        "gauntlet": config.get("gauntlet"),
        "additions": [list(group) for group in config.get("additions") or []],
        "sandboxes": [dict(s) for s in t.sandboxes],
        "arena_version": t.arena_version,
        "created": t.created.isoformat(),
    }


def with_settings(
    t: TournamentDetail | TournamentInfo,
    data: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``data`` after the keys ``tournament`` (the id of ``t``) and ``settings``
    (:func:`tournament_settings`, with a command's own ``extra`` settings added)."""
    settings = {**tournament_settings(t), **(extra or {})}
    return {"tournament": t.id, "settings": settings, **data}
