"""``Match``: rounds played until one seat holds enough tokens of affection."""

from __future__ import annotations

from collections.abc import Sequence

from arena.errors import ArenaError
from arena.game.cards import Card
from arena.game.round import Game
from arena.game.variants import Variant
from arena.seeds import derive_seed


class Match:
    """A match of rounds; each round's winner gets a token and starts the next round.

    A shared round gives every winner a token; the next round is started by the first of them in
    turn order from the previous starter. The match ends when one seat alone holds the most tokens
    and at least :meth:`Variant.tokens_to_win` (7, 5 or 4 for 2, 3 or 4 players); if two seats
    reach the target together, rounds go on until one leads. Round ``k`` is dealt from a deck
    shuffled with a seed derived from the match seed and ``k``, unless decks are given.
    """

    def __init__(
        self,
        players: int = 2,
        variant: Variant | str = "classic",
        seed: int = 0,
        tokens_to_win: int | None = None,
        first: int = 0,
    ) -> None:
        self.variant = Variant.get(variant)
        self.variant.check_players(players)
        self.players = players
        self.seed = seed
        self.target = tokens_to_win or self.variant.tokens_to_win(players)
        self.tokens = [0] * players
        self.rounds: list[Game] = []
        self.next_first = first

    @property
    def over(self) -> bool:
        """Whether one seat has won the match."""
        best = max(self.tokens)
        return best >= self.target and self.tokens.count(best) == 1

    @property
    def winner(self) -> int | None:
        """The seat that won the match, once it is over."""
        return self.tokens.index(max(self.tokens)) if self.over else None

    def new_round(self, deck: Sequence[Card | int] | None = None) -> Game:
        """Deal the next round (from ``deck`` if given)."""
        if self.over:
            raise ArenaError("the match is over")
        if self.rounds and not self.rounds[-1].over:
            raise ArenaError("the current round is not over")
        k = len(self.rounds)
        game = Game(
            self.players,
            self.variant,
            deck=deck,
            seed=derive_seed(self.seed, "round", k),
            first=self.next_first,
        )
        self.rounds.append(game)
        return game

    def score_round(self, game: Game) -> None:
        """Give the finished round's winners their tokens and choose who starts next."""
        if not game.over:
            raise ArenaError("the round is not over")
        for seat in game.winners:
            self.tokens[seat] += 1
        order = [(game.first + i) % self.players for i in range(self.players)]
        self.next_first = next(s for s in order if s in game.winners)
