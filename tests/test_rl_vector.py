"""The Gymnasium environment in batches (``arena.rl.SingleSeatVectorEnv``): Gymnasium's vector
API (spaces, next-step autoreset, infos with their masks), legal masks, seeding, and the same
episodes as ``SingleSeatEnv`` stepped in Gymnasium's own ``SyncVectorEnv``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

import gymnasium
from gymnasium.utils.env_checker import (
    check_reset_options,
    check_reset_return_type,
    check_reset_seed_determinism,
    check_returned_data_not_reused,
    data_equivalence,
)
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from arena.errors import ArenaError, UnknownBotError, UnknownVariantError
from arena.rl import SingleSeatEnv, SingleSeatVectorEnv
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE, field_slice

#: The deck of tests/test_rl_gymnasium.py: seat 0 moves first holding the Handmaid and a Guard.
DECK = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]


def _legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly drawn legal action per row of ``masks`` (0 for a row without one)."""
    drawn = (rng.random(len(masks)) * masks.sum(axis=1)).astype(np.int64)
    return np.argmax(masks.cumsum(axis=1) > drawn[:, None], axis=1)


def _play(env: SingleSeatVectorEnv, seed: int, steps: int, actions_seed: int = 0) -> list[tuple]:
    """Every result of ``reset(seed=seed)`` and ``steps`` steps of random legal actions."""
    rng = np.random.default_rng(actions_seed)
    results: list[tuple] = [env.reset(seed=seed)]
    for _ in range(steps):
        results.append(env.step(_legal(env.action_masks(), rng)))
    return results


def test_spaces_shapes_and_dtypes() -> None:
    env = SingleSeatVectorEnv(5, "random")
    assert env.num_envs == 5
    assert env.single_observation_space == gymnasium.spaces.Box(
        0.0, 1.0, (OBSERVATION_SIZE,), np.float32
    )
    assert env.single_action_space == gymnasium.spaces.Discrete(N_ACTIONS)
    assert env.observation_space.shape == (5, OBSERVATION_SIZE)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([N_ACTIONS] * 5)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and obs.dtype == np.float32
    assert info["seat"].shape == (5,) and info["_seat"].all()
    assert info["action_mask"].shape == (5, N_ACTIONS) and info["action_mask"].dtype == np.int8
    for _ in range(20):
        masks = env.action_masks()
        assert masks.shape == (5, N_ACTIONS) and masks.dtype == np.bool_
        obs, rewards, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs in env.observation_space
        assert rewards.shape == (5,) and rewards.dtype == np.float64
        assert terminated.shape == truncated.shape == (5,)
        assert terminated.dtype == truncated.dtype == np.bool_
        assert not truncated.any()
    env.close()
    assert env.closed


def test_gymnasium_checks_that_apply_to_vector_environments() -> None:
    env = SingleSeatVectorEnv(1, "strategic")
    check_reset_return_type(env)  # type: ignore[arg-type]
    check_reset_options(env)  # type: ignore[arg-type]
    check_reset_seed_determinism(env)  # type: ignore[arg-type]
    check_returned_data_not_reused(env)  # type: ignore[arg-type]


@pytest.mark.parametrize("seeding", ["engine", "single_seat"])
def test_an_action_from_the_mask_is_always_legal(seeding: str) -> None:
    env = SingleSeatVectorEnv(16, ["random", "strategic", "greedy"], players=4, seeding=seeding)
    rng = np.random.default_rng(1)
    env.reset(seed=3)
    ended = 0
    for _ in range(150):
        masks = env.action_masks()
        waiting = ~masks.any(axis=1)  # rounds that ended at the last step: dealt again now
        _, rewards, terminated, _, info = env.step(_legal(masks, rng))
        assert "illegal_action" not in info
        assert (rewards[~terminated] == 0).all() and (rewards[waiting] == 0).all()
        # a round's rewards sum to 0: -1/3 each lost, +1 a sole win, shares of a shared one
        assert (rewards >= -1 / 3 - 1e-9).all() and (rewards <= 1).all()
        assert not terminated[waiting].any()
        ended += int(terminated.sum())
    assert ended > 50


def test_an_illegal_action_forfeits_that_round_only() -> None:
    env = SingleSeatVectorEnv(3, "random")
    env.reset(seed=5)
    masks = env.action_masks()
    actions = _legal(masks, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~masks[1])[0])
    actions[1] = illegal
    actions[2] = N_ACTIONS  # out of the space: illegal too
    obs, rewards, terminated, _, info = env.step(actions)
    assert terminated[1] and terminated[2] and rewards[1] == rewards[2] == -1.0
    assert list(info["_illegal_action"]) == [False, True, True]
    assert info["illegal_action"][1] and not info["illegal_action"][0]
    assert info["_winners"][1] and not info["winners"][1][info["seat"][1]]
    assert obs[1, field_slice("ended")][0] == 1.0
    assert not env.action_masks()[1].any()


def test_next_step_autoreset() -> None:
    """The step after a round's end ignores its action and gives the new round's first
    observation and infos, reward 0, not terminated; the other rounds step on."""
    env = SingleSeatVectorEnv(4, "random", seeding="single_seat")
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=11)
    singles = [SingleSeatEnv("random") for _ in range(4)]
    for i, single in enumerate(singles):
        single.reset(seed=11 + i)
    checked = 0
    for _ in range(60):
        masks = env.action_masks()
        waiting = np.logical_not(masks.any(axis=1))
        actions = _legal(masks, rng)
        actions[waiting] = 7  # ignored, legal or not
        obs, rewards, terminated, truncated, info = env.step(actions)
        for i, single in enumerate(singles):
            if waiting[i]:
                first, single_info = single.reset()
                assert np.array_equal(obs[i], first)
                assert rewards[i] == 0.0 and not terminated[i] and not truncated[i]
                assert info["seat"][i] == single_info["seat"]
                assert np.array_equal(info["action_mask"][i], single_info["action_mask"])
                assert obs[i, field_slice("ended")][0] == 0.0
                checked += 1
            else:
                seen, reward, ended, _, _ = single.step(int(actions[i]))
                assert np.array_equal(obs[i], seen) and rewards[i] == reward
                assert terminated[i] == ended
    assert checked > 10


@pytest.mark.parametrize(
    ("opponents", "players", "seat"),
    [("strategic", 2, None), (["random", "knowledge", "greedy"], 4, None), ("random", 3, 2)],
)
def test_the_same_episodes_as_single_seat_envs_in_sync_vector_env(
    opponents: object, players: int, seat: int | None
) -> None:
    """With ``seeding="single_seat"``, round ``i`` of the batch plays what ``SingleSeatEnv``
    plays in Gymnasium's ``SyncVectorEnv`` (seeded ``seed + i``), illegal actions included."""
    n = 6
    batch = SingleSeatVectorEnv(n, opponents, players, seat=seat, seeding="single_seat")  # type: ignore[arg-type]
    sync = SyncVectorEnv([lambda: SingleSeatEnv(opponents, players, seat=seat)] * n)  # type: ignore[arg-type]
    assert data_equivalence(batch.reset(seed=9), sync.reset(seed=9), exact=True)
    rng = np.random.default_rng(4)
    for step in range(80):
        masks = batch.action_masks()
        actions = _legal(masks, rng)
        if step % 7 == 0:
            actions[step % n] = N_ACTIONS - 1 if not masks[step % n, -1] else 0
        ours, theirs = batch.step(actions), sync.step(actions)
        assert data_equivalence(ours[:4], theirs[:4], exact=True), step
        info, sync_info = ours[4], theirs[4]
        for key in ("seat", "action_mask", "illegal_action"):
            assert (key in info) == (key in sync_info)
            if key in info:
                assert np.array_equal(info[key], sync_info[key])
                assert np.array_equal(info[f"_{key}"], sync_info[f"_{key}"])
        if "winners" in sync_info:
            assert np.array_equal(info["_winners"], sync_info["_winners"])
            for i in np.flatnonzero(sync_info["_winners"]):
                assert tuple(np.flatnonzero(info["winners"][i])) == sync_info["winners"][i]


@pytest.mark.parametrize("seeding", ["engine", "single_seat"])
def test_a_seed_replays_the_batch(seeding: str) -> None:
    env = SingleSeatVectorEnv(8, "strategic", seeding=seeding)
    first = _play(env, 21, 40)
    again = _play(SingleSeatVectorEnv(8, "strategic", seeding=seeding), 21, 40)
    assert data_equivalence(first, again, exact=True)
    assert data_equivalence(first, _play(env, 21, 40), exact=True)  # reset(seed) again
    other = _play(env, 22, 40)
    assert not data_equivalence(first, other)
    # round i is seeded from seed + i, as Gymnasium's vector environments seed theirs
    shifted = _play(SingleSeatVectorEnv(8, "strategic", seeding=seeding), 22, 0)[0]
    assert np.array_equal(first[0][0][1:], shifted[0][:-1])
    listed = env.reset(seed=list(range(21, 29)))
    assert data_equivalence(listed, first[0], exact=True)


def test_engine_seeding_draws_both_seats_and_different_deals() -> None:
    env = SingleSeatVectorEnv(32, "random")
    obs, info = env.reset(seed=0)
    assert set(info["seat"].tolist()) == {0, 1}
    assert len({row.tobytes() for row in obs}) > 16
    env = SingleSeatVectorEnv(8, "random", seat=1)
    _, info = env.reset(seed=0)
    assert (info["seat"] == 1).all()


def test_reset_options() -> None:
    env = SingleSeatVectorEnv(3, "random")
    obs, info = env.reset(seed=1, options={"seat": 0, "deck": DECK})
    assert (info["seat"] == 0).all() and (obs == obs[0]).all()
    hand = field_slice("hand")
    assert obs[0, hand][[0, 3]].tolist() == [0.5, 0.5]  # a Guard and the Handmaid
    _, info = env.reset(seed=1, options={"seat": 1})
    assert (info["seat"] == 1).all()
    # reset_mask: only the rounds chosen are dealt again; the others keep their round
    before = env.step(_legal(env.action_masks(), np.random.default_rng(0)))[0]
    mask = np.array([True, False, False])
    obs, info = env.reset(seed=[4, None, None], options={"reset_mask": mask})
    assert np.array_equal(obs[1:], before[1:])
    assert list(info["_seat"]) == [True, False, False]
    with pytest.raises(ArenaError):
        env.reset(options={"reset_mask": np.zeros(3, dtype=bool)})


def test_bad_settings_are_arena_errors() -> None:
    with pytest.raises(ArenaError, match="hosted"):
        SingleSeatVectorEnv(2, "random", hosted=True)
    with pytest.raises(UnknownBotError, match="SingleSeatEnv"):
        SingleSeatVectorEnv(2, "uniform")  # a plain Python bot: it plays only in its host
    with pytest.raises(UnknownVariantError):
        SingleSeatVectorEnv(2, "random", players=3, variant="huibers")
    with pytest.raises(ArenaError):
        SingleSeatVectorEnv(0, "random")
    with pytest.raises(ArenaError):
        SingleSeatVectorEnv(2, ["random"], players=3)
    with pytest.raises(ArenaError):
        SingleSeatVectorEnv(2, "random", seeding="numpy")
    env = SingleSeatVectorEnv(2, "random")
    with pytest.raises(ArenaError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(ArenaError, match="one action per"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ArenaError):
        env.reset(options={"seat": 2})


def test_make_vec_makes_the_batch_from_the_registered_id() -> None:
    from arena.rl.single_seat import GYMNASIUM_ID

    env = gymnasium.make_vec(
        GYMNASIUM_ID, num_envs=4, vectorization_mode="vector_entry_point", opponents="greedy"
    )
    assert isinstance(env, SingleSeatVectorEnv) and env.num_envs == 4
    made = _play(env, 5, 20)
    assert data_equivalence(made, _play(SingleSeatVectorEnv(4, "greedy"), 5, 20), exact=True)
