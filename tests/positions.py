"""Positions for bot tests: decks with chosen cards on top, games after chosen actions, and the
decisions of random rounds. Shared by the bot tests (``from positions import ...``)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.game import Action, Game
from bots.policy import reference_bots

#: Every card of the deck, by value.
ALL_CARDS = [1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8]


def deal(*top: int) -> list[int]:
    """A 16-card deck with ``top`` on top (in that order) and the other cards below."""
    rest = list(ALL_CARDS)
    for card in top:
        rest.remove(card)
    return [*top, *rest]


def after(game: Game, *actions: str) -> Game:
    """``game`` once ``actions`` are played."""
    for action in actions:
        game.play(action)
    return game


def random_positions(
    variant: str, players: int, rounds: int, seed: int
) -> Iterator[tuple[Game, int]]:
    """(game, seat to move) at every decision of ``rounds`` rounds of uniformly random play."""
    rng = random.Random(seed)
    for r in range(rounds):
        game = Game(players, variant, seed=seed * 1000 + r, first=rng.randrange(players))
        while not game.over:
            yield game, game.turn
            game.play(rng.choice(game.legal_actions()))


def bot_choice(name: str, game: Game, seed: int = 0, **settings: float) -> Action:
    """What the reference bot ``name`` (default parameters unless ``settings``) plays for the
    seat to move, its generator seeded with ``seed``."""
    bot = reference_bots()[name].factory()(**settings)
    bot.reset(seed)
    return bot.act(game.observation(game.turn))
