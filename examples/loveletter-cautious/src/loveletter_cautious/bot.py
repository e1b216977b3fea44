"""The ``cautious`` bot: a few plain rules of thumb, as a score for every legal action.

What it reads from the :class:`~arena.game.Observation`:

- ``legal_actions``: the moves it may make; it always answers one of them.
- ``hand``: its two cards, to tell which card it keeps after playing the other.
- ``seat`` and ``opponents`` (the other seats still in the round).
- ``known[s]``: the card it knows seat ``s`` holds (Priest look, Baron tie, King swap), or None.
- ``known_by[s]``: the card of its own that it knows seat ``s`` knows about, or None.
- ``unseen[v - 1]``: copies of the card of value ``v`` it has seen nowhere (not in its hand, not
  face up, not discarded, not known in another hand): its estimate of what others may hold.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.bot import Bot
from arena.game import Action, Card, Observation

#: Score of a move that knocks an opponent out for sure.
SURE_KNOCKOUT = 20.0
#: Score of a move that knocks this bot out: only ever played when it is the only move.
SUICIDE = -1000.0


def _kept(hand: Sequence[Card], played: Card) -> Card:
    """The card left in ``hand`` after ``played`` is played."""
    rest = list(hand)
    if played in rest:
        rest.remove(played)
    return rest[0] if rest else played


def _chance(observation: Observation, card: Card) -> float:
    """The chance that an opponent whose card we do not know holds ``card``, estimated as the
    share of ``card`` among the copies we have not seen."""
    total = sum(observation.unseen)
    return observation.unseen_count(card) / total if total else 0.0


def _mean_unseen(observation: Observation) -> float:
    """The average value of the cards we have not seen."""
    total = sum(observation.unseen)
    if not total:
        return 0.0
    return sum(value * n for value, n in enumerate(observation.unseen, 1)) / total


class CautiousBot(Bot):
    """Scores every legal action with a few rules of thumb and plays the best one (ties at
    random, from ``self.rng``):

    - never the Princess, nor a Prince at itself while it holds the Princess;
    - a Guard names the card it knows its target holds, else the card with most unseen copies;
    - a Baron only when it knows it wins, or when the odds are good enough for its aggression;
    - otherwise it plays the lower of its two cards and keeps the higher one for the showdown;
    - it gets rid of a card that an opponent knows it holds.

    ``aggression`` (0 to 1, default 0.5) sets how much a Baron's risk of losing weighs (three
    times a win's chance at 0, twice at 0.5, as much at 1) and how little a Handmaid is worth.
    """

    name = "cautious"

    def __init__(self, aggression: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= aggression <= 1.0:
            raise ValueError(f"aggression must be between 0 and 1, not {aggression}")
        self.aggression = aggression

    def act(self, observation: Observation) -> Action:
        """The legal action with the best :meth:`score`."""
        scored = [(self.score(observation, a), a) for a in observation.legal_actions]
        best = max(score for score, _ in scored)
        return self.rng.choice([a for score, a in scored if score >= best - 1e-9])

    def score(self, observation: Observation, action: Action) -> float:
        """How much this bot likes ``action`` now: higher is better."""
        kept = _kept(observation.hand, action.card)
        # Play the lower card: the card kept is what wins when the deck runs out.
        value = -float(action.card)
        # An opponent that knows we hold this card can Guard it: better to play it.
        watchers = [s for s in observation.opponents if observation.known_by[s] == action.card]
        value += 3.0 * len(watchers)
        return value + self._effect(observation, action, kept)

    def _effect(self, observation: Observation, action: Action, kept: Card) -> float:
        """What the card's effect is worth."""
        card, target = action.card, action.target
        if card == Card.PRINCESS:
            return SUICIDE
        if card == Card.HANDMAID:
            threatened = any(observation.known_by[s] == kept for s in observation.opponents)
            return 1.0 + 2.0 * (1.0 - self.aggression) + (4.0 if threatened else 0.0)
        if target is None:  # the Countess, or a card played without effect
            return 0.0
        known = observation.known[target]
        if card == Card.GUARD:
            if known is not None:
                return SURE_KNOCKOUT if action.guess == known else -5.0
            return 10.0 * _chance(observation, action.guess or Card.GUARD)
        if card == Card.PRIEST:
            return 1.5 if known is None else -0.5
        if card == Card.BARON:
            return self._baron(observation, kept, known)
        if card == Card.PRINCE:
            if target == observation.seat:
                # We discard the card we keep and draw another; the Princess would knock us out.
                return SUICIDE if kept == Card.PRINCESS else _mean_unseen(observation) - kept
            if known is not None:
                return SURE_KNOCKOUT + 5.0 if known == Card.PRINCESS else known / 2.0
            return 1.0 + 20.0 * _chance(observation, Card.PRINCESS)
        if card == Card.KING:
            # We give our kept card away (and the target learns it) for theirs.
            theirs = float(known) if known is not None else _mean_unseen(observation)
            return theirs - kept - 1.0
        return 0.0

    def _baron(self, observation: Observation, kept: Card, known: Card | None) -> float:
        """A Baron compares ``kept`` with the target's card: the lower one is out."""
        if known is not None:
            if kept > known:
                return SURE_KNOCKOUT
            return -50.0 if kept < known else 0.0
        total = sum(observation.unseen)
        if not total:
            return 0.0
        win = sum(n for value, n in enumerate(observation.unseen, 1) if value < kept) / total
        lose = sum(n for value, n in enumerate(observation.unseen, 1) if value > kept) / total
        return 10.0 * (win - (3.0 - 2.0 * self.aggression) * lose)
