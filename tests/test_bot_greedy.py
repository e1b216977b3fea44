"""The greedy player of Malarczyk 3.2: positions where the thesis's scoring function dictates the
play, and a statistical check against the random player.

Every expected play below is worked out by hand from the thesis's criterion function F (3.2.3):
Guard naming g: 1 + P[g] + .08; Priest 1.07; Baron: 1 - P[higher than the kept card] + P[lower]
+ .06; Handmaid 1.05; Prince at an opponent 1 + P[Princess] + .04, at itself 1.04; King 1 +
P[Princess] + P[Countess] + .03; Countess 1.02 (10.02 when forced); Princess 0. P is the share of
the cards the seat has not seen (hand, face-up cards, discards and known cards excluded), or
certainty for a card the seat knows the target holds. Decks are top first: deck[0] set aside,
then (2-player classic) three face up, one card per seat in seat order, then the draw pile.
"""

from __future__ import annotations

from arena.game import Action, Game
from bots.policy import policy_bot
from bots.simulate import simulate


def greedy_choice(game: Game) -> Action:
    """The greedy bot's play for the seat to move."""
    return policy_bot("greedy")().act(game.observation(game.turn))


def test_thesis_example_guard_naming_the_likeliest_card_beats_the_baron() -> None:
    """The thesis's own example (3.2.2): face up King, Prince, Handmaid; seat 0 holds a Guard and
    draws a Baron. Unseen (11 cards): Guard 4, Priest 2, Baron 1, Handmaid 1, Prince 1, Countess
    1, Princess 1. (The thesis counts four Guards, so its table has 10 cards; the rules have five.)
    Guard naming the Priest: 1 + 2/11 + .08 = 1.262; naming any other card 1 + 1/11 + .08.
    Baron, keeping the Guard: it can only lose, 1 - 7/11 + 0 + .06 = 0.424. So Guard->1:Priest,
    the thesis's answer."""
    game = Game(2, "classic", deck=[1, 6, 5, 4, 1, 2, 3, 1, 1, 2, 3, 4, 5, 7, 8, 1])
    assert greedy_choice(game) == Action.from_str("Guard->1:Priest")


def test_equally_likely_guesses_go_to_the_higher_card() -> None:
    """Face up Priest, Baron, Prince; seat 0 holds a Guard and draws a Handmaid. Every non-Guard
    value has one unseen copy of 11: each guess scores 1 + 1/11 + .08 = 1.171 > Handmaid 1.05.
    The thesis: with equal chances "the algorithm should always aim at the higher-numbered card",
    so the Guard names the Princess."""
    game = Game(2, "classic", deck=[1, 2, 3, 5, 1, 1, 4, 1, 1, 2, 3, 4, 5, 6, 7, 8])
    assert greedy_choice(game) == Action.from_str("Guard->1:Princess")


def test_a_card_seen_with_the_priest_is_named_by_the_guard() -> None:
    """huibers. Seat 0 (Priest, Guard) plays Priest->1 and sees seat 1's Baron; seat 1 (Baron,
    Guard) plays Guard->0:Princess and misses; seat 0 draws a Prince. Seat 1's card is known: P is
    1 for the Baron, 0 for every other card. Guard naming the Baron: 1 + 1 + .08 = 2.08; Prince at
    seat 1: 1 + 0 + .04; at itself 1.04. So Guard->1:Baron."""
    game = Game(2, "huibers", deck=[4, 2, 3, 1, 1, 5, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8])
    game.play("Priest->1")
    game.play("Guard->0:Princess")
    assert greedy_choice(game) == Action.from_str("Guard->1:Baron")


def test_baron_with_a_strong_kept_card_beats_the_prince() -> None:
    """Face up Guard, Guard, Priest; seat 0 holds a Baron and draws a Prince. Unseen (11): Guard
    3, Priest 1, Baron 1, Handmaid 2, Prince 1, King 1, Countess 1, Princess 1. Baron keeping the
    Prince (5): loses to King, Countess, Princess (3/11), wins against 7/11: 1 + 4/11 + .06 = 1.424.
    Prince at seat 1: 1 + 1/11 + .04 = 1.131; at itself 1.04. So Baron->1."""
    game = Game(2, "classic", deck=[4, 1, 1, 2, 3, 1, 5, 1, 1, 2, 3, 4, 5, 6, 7, 8])
    assert greedy_choice(game) == Action.from_str("Baron->1")


def test_baron_whose_chances_cancel_still_beats_the_handmaid_by_its_constant() -> None:
    """Face up Guard, Guard, Priest; seat 0 holds a Baron and draws a Handmaid. Unseen (11): Guard
    3, Priest 1, Baron 1, Handmaid 1, Prince 2, King, Countess, Princess. Baron keeping the
    Handmaid (4): loses to Prince, King, Countess, Princess (5/11), wins against Guard, Priest,
    Baron (5/11): 1 - 5/11 + 5/11 + .06 = 1.06 > Handmaid 1.05. So Baron->1."""
    game = Game(2, "classic", deck=[5, 1, 1, 2, 3, 1, 4, 1, 1, 2, 3, 4, 5, 6, 7, 8])
    assert greedy_choice(game) == Action.from_str("Baron->1")


def test_prince_at_the_opponent_while_the_princess_is_unseen() -> None:
    """Face up three Guards; seat 0 holds a Prince and draws a Handmaid. The Princess is one of 11
    unseen cards: Prince at seat 1 scores 1 + 1/11 + .04 = 1.131 > Handmaid 1.05 > Prince at
    itself 1.04. So Prince->1."""
    game = Game(2, "classic", deck=[1, 1, 1, 1, 5, 1, 4, 2, 2, 3, 3, 4, 5, 6, 7, 8])
    assert greedy_choice(game) == Action.from_str("Prince->1")


def test_handmaid_once_the_princess_is_seen() -> None:
    """Face up Princess, Guard, Guard; seat 0 holds a Prince and draws a Handmaid. P[Princess] is
    0: Prince at seat 1 and at itself both score 1.04 < Handmaid 1.05. So Handmaid."""
    game = Game(2, "classic", deck=[1, 8, 1, 1, 5, 1, 4, 1, 2, 2, 3, 3, 4, 5, 6, 7])
    assert greedy_choice(game) == Action.from_str("Handmaid")


def test_king_only_while_the_princess_or_countess_may_be_won() -> None:
    """Seat 0 holds a King and draws a Priest.

    classic, face up Countess, Princess, Guard: King scores 1 + 0 + 0 + .03 = 1.03 < Priest 1.07,
    so Priest->1. huibers, nothing face up: 14 unseen cards hold the Countess and the Princess,
    King scores 1 + 1/14 + 1/14 + .03 = 1.173 > Priest 1.07, so King->1."""
    seen = Game(2, "classic", deck=[1, 7, 8, 1, 6, 1, 2, 1, 1, 2, 3, 3, 4, 4, 5, 5])
    assert greedy_choice(seen) == Action.from_str("Priest->1")
    unseen = Game(2, "huibers", deck=[1, 6, 1, 2, 1, 1, 1, 2, 3, 3, 4, 4, 5, 5, 7, 8])
    assert greedy_choice(unseen) == Action.from_str("King->1")


def test_a_card_without_a_target_has_no_chances() -> None:
    """huibers, seat 1 first: it plays the Handmaid; seat 0 holds a King and draws a Handmaid.
    The King can only be played without effect: its chances are 0 and it scores 1.03 < Handmaid
    1.05 (scored with the unseen cards it would have been 1.03 + 2/13 and won). So Handmaid."""
    game = Game(2, "huibers", deck=[1, 6, 4, 1, 4, 1, 1, 1, 2, 2, 3, 3, 5, 5, 7, 8], first=1)
    game.play("Handmaid")
    assert greedy_choice(game) == Action.from_str("Handmaid")


def test_equal_scores_of_different_cards_go_to_the_lower_card() -> None:
    """huibers, seat 1 first: it plays the Handmaid; seat 0 holds the Princess and draws a Prince.
    Its legal plays are Prince->0 (discarding the Princess: 0, "the Princess can never be
    discarded") and the Princess (0). Equal scores: the lower card, Prince->0. (Scored 1.04 as
    the pseudocode's Prince-on-itself line says, the Prince would win as well.)"""
    game = Game(2, "huibers", deck=[1, 8, 4, 1, 5, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7], first=1)
    game.play("Handmaid")
    assert greedy_choice(game) == Action.from_str("Prince->0")


def test_three_players_equal_targets_go_to_the_next_seat_in_turn_order() -> None:
    """3 players, seat 1 first, holding a Guard and drawing a Handmaid. Both opponents' cards are
    unknown and share one distribution (14 unseen: Guard 4, Priest 2, Baron 2, Handmaid 1, Prince
    2, King, Countess, Princess). Priest, Baron and Prince tie at 2/14; the higher card, the
    Prince, is named (1 + 2/14 + .08 = 1.223 > Handmaid 1.05). Seats 2 and 0 tie; the next seat
    after seat 1 in turn order is seat 2. So Guard->2:Prince."""
    game = Game(3, "classic", deck=[2, 3, 1, 5, 4, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8], first=1)
    assert greedy_choice(game) == Action.from_str("Guard->2:Prince")


def test_four_players_the_target_with_a_known_princess_is_named() -> None:
    """4 players. Seat 0 (Priest, Guard) plays Priest->2 and sees seat 2's Princess; seat 1
    (Guard, Guard) misses with Guard->3:Countess; seat 2 (Princess, Priest) plays Priest->3; seat
    3 (Baron, Guard) misses with Guard->1:Countess; seat 0 draws a Baron. Guard at seat 2 naming
    the Princess: 1 + 1 + .08 = 2.08. Seats 1 and 3 are unknown; seat 0's unseen (9): Guard 2,
    Baron 1, Handmaid 2, Prince 2, King, Countess, so at best 1 + 2/9 + .08 = 1.302 (naming the
    Prince). The Baron keeping a Guard can only lose or tie (at most 1.06). So Guard->2:Princess,
    not the next seat in turn order."""
    game = Game(4, "classic", deck=[4, 2, 1, 8, 3, 1, 1, 2, 1, 3, 1, 4, 5, 5, 6, 7])
    for action in ("Priest->2", "Guard->3:Countess", "Priest->3", "Guard->1:Countess"):
        game.play(action)
    assert greedy_choice(game) == Action.from_str("Guard->2:Princess")


def test_three_players_each_target_is_scored_with_its_own_chances() -> None:
    """3 players. Seat 0 (Priest, Baron) plays Priest->2 and sees seat 2's Guard; seat 1 (Guard,
    Priest) plays Priest->0; seat 2 (Guard, Countess) plays the Countess; seat 0 draws a Handmaid.
    Seat 0's unseen (10): Guard 4, Baron 1, Handmaid 1, Prince 2, King, Princess. Baron keeping
    the Handmaid (4) at seat 2 (known Guard): 1 - 0 + 1 + .06 = 2.06; at seat 1 (unknown): loses
    to Prince 2, King, Princess (4/10), wins against Guard 4, Baron 1 (5/10): 1.16; Handmaid
    1.05. So Baron->2, though seat 1 comes first in turn order."""
    game = Game(3, "classic", deck=[1, 2, 1, 1, 3, 2, 7, 4, 1, 1, 3, 4, 5, 5, 6, 8])
    for action in ("Priest->2", "Priest->0", "Countess"):
        game.play(action)
    assert greedy_choice(game) == Action.from_str("Baron->2")


def test_greedy_beats_random_from_either_seat() -> None:
    """Over 20,000 simulated rounds per seat order and variant (fixed seeds), greedy wins more
    than half the rounds whether it moves first or second."""
    for variant in ("classic", "huibers"):
        first = simulate(["greedy", "random"], 20_000, variant, seed=1)
        assert first.first_seat_ci[0] > 0.5
        second = simulate(["random", "greedy"], 20_000, variant, seed=2)
        assert second.first_seat_ci[1] < 0.5
