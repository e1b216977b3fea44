"""The OpenSpiel game (``python_love_letter``): OpenSpiel's random simulation test, serialisation
round trips, a known deal, the information states against what each seat may know, the
resampling ISMCTS needs, and ISMCTS itself."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import pyspiel

import arena.rl.openspiel  # noqa: F401 - registers the game
from arena.errors import UnknownVariantError
from arena.game import Action, Card, Game
from arena.rl.encoding import encode_observation, field_slice, index_action

#: Set aside: Guard; face up: Guard, Guard, Priest; seat 0 holds the Handmaid and draws a Guard;
#: seat 1 holds the King.
DECK = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]
#: The same deal with seat 1's King and the last card, the Princess, exchanged.
DECK_PRINCESS = [1, 1, 1, 2, 4, 8, 1, 1, 2, 3, 3, 4, 5, 5, 7, 6]


def dealt(deck: list[int], **params: object) -> object:
    """A state after the deal of ``deck`` (its chance outcomes, top card first)."""
    state = pyspiel.load_game("python_love_letter", params).new_initial_state()
    for card in deck:
        assert state.is_chance_node()
        state.apply_action(card - 1)
    return state


@pytest.mark.parametrize("params", [{}, {"players": 3}, {"players": 4}, {"variant": "huibers"}])
def test_openspiel_random_simulation_test(params: dict[str, object]) -> None:
    game = pyspiel.load_game("python_love_letter", params)
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_the_game_as_openspiel_describes_it() -> None:
    game = pyspiel.load_game("python_love_letter")
    assert game.num_players() == 2
    assert game.num_distinct_actions() == 41
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert game.max_game_length() == 10  # the draw pile of the two-player classic round
    assert pyspiel.load_game("python_love_letter(variant=huibers)").max_game_length() == 13
    assert pyspiel.load_game("python_love_letter(players=4)").num_players() == 4
    assert game.information_state_tensor_size() == 11 * 184 + 10 * 45
    assert game.observation_tensor_size() == 184


def test_the_deal_is_chance_with_the_copies_left() -> None:
    state = pyspiel.load_game("python_love_letter").new_initial_state()
    assert state.chance_outcomes() == [
        (0, 5 / 16),
        (1, 2 / 16),
        (2, 2 / 16),
        (3, 2 / 16),
        (4, 2 / 16),
        (5, 1 / 16),
        (6, 1 / 16),
        (7, 1 / 16),
    ]
    state.apply_action(7)  # the Princess is set aside
    assert [o for o, _ in state.chance_outcomes()] == list(range(7))
    assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)


def test_a_known_deal_is_the_engine_s_round() -> None:
    state = dealt(DECK)
    game = Game(2, deck=DECK)
    assert state.current_player() == 0
    legal = [index_action(a, 0, 2) for a in state.legal_actions()]
    assert legal == game.legal_actions()
    assert state.observation_tensor(0) == pytest.approx(encode_observation(game.observation(0)))
    assert state.observation_tensor(1) == pytest.approx(encode_observation(game.observation(1)))
    (hit,) = [a for a in state.legal_actions() if state.action_to_string(0, a) == "Guard->1:King"]
    state.apply_action(hit)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]


def test_information_states_hold_what_the_seat_knows_and_nothing_else() -> None:
    king, princess = dealt(DECK), dealt(DECK_PRINCESS)
    for state in (king, princess):
        state.apply_action(state.legal_actions()[-1])  # the Handmaid
    assert king.information_state_string(0) == princess.information_state_string(0)
    assert king.information_state_tensor(0) == princess.information_state_tensor(0)
    assert king.information_state_string(1) != princess.information_state_string(1)
    text = king.information_state_string(0)
    assert "seat 0 plays Handmaid" in text and "hand Handmaid,Guard" in text  # held card first
    assert "King" not in text and "Princess" not in text


def test_a_public_observer_leaves_the_hand_out() -> None:
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("python_love_letter")
    public = make_observation(
        game,
        pyspiel.IIGObservationType(
            perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
        ),
    )
    state = dealt(DECK)
    public.set_from(state, 0)
    assert not public.tensor[field_slice("hand")].any()
    assert public.tensor[field_slice("face_up")].any()
    assert "hand" not in public.string_from(state, 0)


@pytest.mark.parametrize("moves", [0, 1, 2])
def test_serialisation_round_trips(moves: int) -> None:
    game = pyspiel.load_game("python_love_letter(players=3)")
    rng = np.random.default_rng(moves)
    states = [game.new_initial_state()]
    state = states[0]
    for _ in range(7):
        state.apply_action(state.chance_outcomes()[0][0])
    states.append(state.clone())  # in the middle of the deal
    while state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probabilities)))
    for _ in range(moves):
        if not state.is_terminal():
            state.apply_action(int(rng.choice(state.legal_actions())))
    states.append(state)
    for original in states:
        text = pyspiel.serialize_game_and_state(game, original)
        _, copy = pyspiel.deserialize_game_and_state(text)
        assert copy.history() == original.history()
        assert str(copy) == str(original)
        if not copy.is_chance_node():
            for seat in range(3):
                assert copy.information_state_string(seat) == original.information_state_string(
                    seat
                )
                assert copy.observation_tensor(seat) == original.observation_tensor(seat)


def test_resampling_keeps_the_seat_s_information_state() -> None:
    state = dealt(DECK)
    state.apply_action(state.legal_actions()[-1])  # seat 0 plays the Handmaid
    hands = set()
    for seed in range(20):
        sampler = iter([seed / 20]).__next__
        sample = state.resample_from_infostate(1, sampler)
        assert sample.information_state_string(1) == state.information_state_string(1)
        assert sample.observation_string(1) == state.observation_string(1)
        assert sample.legal_actions() == state.legal_actions()
        hands.add(sample.observation_string(0).rsplit("hand ", 1)[1].split(";")[0])
    assert len(hands) > 1  # seat 0's hidden card is dealt again


def test_openspiel_s_ismcts_plays_it() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("python_love_letter")
    rng = np.random.RandomState(1)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, rng), uct_c=1.0, max_simulations=20, random_state=rng
    )
    state = dealt(DECK)
    while not state.is_terminal():
        action = bot.step(state) if state.current_player() == 0 else state.legal_actions()[0]
        assert action in state.legal_actions()
        state.apply_action(action)


def test_an_impossible_chance_outcome_or_an_illegal_move_is_refused() -> None:
    from arena.errors import IllegalActionError, InvalidCardError

    state = pyspiel.load_game("python_love_letter").new_initial_state()
    state.apply_action(7)  # the Princess
    with pytest.raises(InvalidCardError, match="value 8"):
        state.apply_action(7)  # there is one Princess
    state = dealt(DECK)
    with pytest.raises(IllegalActionError, match="not legal for seat 0"):
        state.apply_action(36)  # a King: seat 0 holds none


def test_bad_parameters_are_arena_errors() -> None:
    with pytest.raises(UnknownVariantError, match="not 7"):
        pyspiel.load_game("python_love_letter(players=7)")
    with pytest.raises(UnknownVariantError, match="unknown variant 'chess'"):
        pyspiel.load_game("python_love_letter(variant=chess)")
    assert Action(Card.GUARD, 1, Card.KING) == index_action(5, 0, 2)
