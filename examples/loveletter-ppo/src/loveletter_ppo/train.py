"""Training: PPO (Schulman et al. 2017: a clipped policy gradient with a learned value as the
baseline) in NumPy, against the arena's reference bots in ``arena.rl.SingleSeatEnv``.

    pip install -e '.[train]'
    python -m loveletter_ppo.train --iterations 3000 --out src/loveletter_ppo/weights.npz

The budget is ``--iterations`` (2,048 moves each), so a run trains the same bot however busy the
machine is; ``--minutes`` caps the wall time as well, and says so when it cut training short.
NumPy's BLAS runs one thread (set below, before NumPy is imported). ``--opponents
random,strategic`` (the default) seats half the environments against each; the learning seat is
drawn each round. Every ``--report`` iterations a line gives the time, the iteration, the moves
played and the greedy policy's score against each opponent (500 rounds through the arena's
referee, in this process); at the end the weights are saved.
"""

from __future__ import annotations

import os

# One BLAS thread, set before NumPy is first imported: the network's matrices are small, and
# OpenBLAS's threads on a shared or busy machine made each iteration about ten times slower.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402

from arena.rl import SingleSeatEnv  # noqa: E402
from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE  # noqa: E402

from .network import NAMES, WEIGHTS, Network, masked_log_softmax  # noqa: E402


@dataclass
class Settings:
    """Training's settings (the command's options)."""

    opponents: tuple[str, ...] = ("random", "strategic")
    envs: int = 64  # environments stepped together, one batch through the network a step
    steps: int = 32  # steps of every environment per iteration: envs * steps samples
    epochs: int = 4  # passes over an iteration's samples
    minibatch: int = 512
    learning_rate: float = 1e-3
    clip: float = 0.2  # PPO's clipping of the probability ratio
    entropy: float = 0.01  # weight of the entropy bonus
    value: float = 0.5  # weight of the value loss
    max_norm: float = 0.5  # the gradient's norm is clipped to it
    hidden: int = 128
    seed: int = 0


@dataclass
class Adam:
    """Adam's moments for each parameter of a :class:`Network`."""

    learning_rate: float
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    steps: int = 0
    moments: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def update(self, network: Network, grads: dict[str, np.ndarray]) -> None:
        """One step down ``grads``."""
        self.steps += 1
        for name, grad in grads.items():
            m, v = self.moments.get(name, (np.zeros_like(grad), np.zeros_like(grad)))
            m = self.beta1 * m + (1 - self.beta1) * grad
            v = self.beta2 * v + (1 - self.beta2) * grad * grad
            self.moments[name] = (m, v)
            m_hat = m / (1 - self.beta1**self.steps)
            v_hat = v / (1 - self.beta2**self.steps)
            param = getattr(network, name)
            param -= (self.learning_rate * m_hat / (np.sqrt(v_hat) + self.epsilon)).astype(
                np.float32
            )


def gradients(
    network: Network,
    obs: np.ndarray,
    mask: np.ndarray,
    actions: np.ndarray,
    old_logp: np.ndarray,
    advantages: np.ndarray,
    returns: np.ndarray,
    settings: Settings,
) -> dict[str, np.ndarray]:
    """The gradient of PPO's loss (clipped surrogate, value loss, entropy bonus) on one
    minibatch, by hand through the network's two ``tanh`` layers."""
    n = len(obs)
    rows = np.arange(n)
    logits, values, h1, h2 = network.forward(obs)
    logp_all = masked_log_softmax(logits, mask)
    p = np.exp(logp_all)
    ratio = np.exp(logp_all[rows, actions] - old_logp)
    clipped = np.clip(ratio, 1 - settings.clip, 1 + settings.clip)
    unclipped = ratio * advantages <= clipped * advantages
    # loss = -mean(min(ratio * A, clipped * A)): d/d log p(a) = -A * ratio where unclipped wins
    g_logp = np.where(unclipped, -advantages * ratio, 0.0) / n
    g_logits = -p * g_logp[:, None]
    g_logits[rows, actions] += g_logp
    # entropy bonus: loss -= c * H, with dH/dlogit_i = -p_i (log p_i + H)
    legal_logp = np.where(mask.astype(bool), logp_all, 0.0)
    entropy = -(p * legal_logp).sum(axis=1)
    g_logits += settings.entropy * p * (legal_logp + entropy[:, None]) / n
    g_values = settings.value * (values - returns) / n
    g_h2 = g_logits @ network.wp.T + g_values[:, None] @ network.wv.T
    g_z2 = g_h2 * (1 - h2 * h2)
    g_h1 = g_z2 @ network.w2.T
    g_z1 = g_h1 * (1 - h1 * h1)
    grads = {
        "wp": h2.T @ g_logits,
        "bp": g_logits.sum(axis=0),
        "wv": h2.T @ g_values[:, None],
        "bv": g_values.sum(keepdims=True),
        "w2": h1.T @ g_z2,
        "b2": g_z2.sum(axis=0),
        "w1": obs.T @ g_z1,
        "b1": g_z1.sum(axis=0),
    }
    norm = np.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    scale = min(1.0, settings.max_norm / (norm + 1e-12))
    return {name: (grads[name] * scale).astype(np.float32) for name in NAMES}


class Rollouts:
    """``settings.envs`` environments stepped together by the current network, each round's
    reward handed back to every move of it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.envs = [
            SingleSeatEnv(settings.opponents[i % len(settings.opponents)])
            for i in range(settings.envs)
        ]
        self.rng = np.random.default_rng(settings.seed)
        self.obs = np.zeros((settings.envs, OBSERVATION_SIZE), np.float32)
        self.mask = np.zeros((settings.envs, N_ACTIONS), np.int8)
        for i, env in enumerate(self.envs):
            self.obs[i], info = env.reset(seed=settings.seed * 1000 + i)
            self.mask[i] = info["action_mask"]
        self.moves = 0

    def collect(self, network: Network) -> dict[str, np.ndarray]:
        """One iteration's samples: observations, masks, actions, their log-probabilities and
        values when chosen, and the returns (the round's reward; the value of the position
        reached, for a round still going at the end)."""
        s = self.settings
        size = s.envs * s.steps
        obs = np.zeros((size, OBSERVATION_SIZE), np.float32)
        mask = np.zeros((size, N_ACTIONS), np.int8)
        actions = np.zeros(size, np.int64)
        logp = np.zeros(size, np.float32)
        values = np.zeros(size, np.float32)
        returns = np.zeros(size, np.float32)
        pending: list[list[int]] = [[] for _ in self.envs]
        row = 0
        for _ in range(s.steps):
            logits, value, _, _ = network.forward(self.obs)
            logp_all = masked_log_softmax(logits, self.mask)
            gumbel = -np.log(-np.log(self.rng.uniform(1e-12, 1.0, logits.shape)))
            chosen = np.argmax(logp_all + gumbel, axis=1)
            for i, env in enumerate(self.envs):
                obs[row] = self.obs[i]
                mask[row] = self.mask[i]
                actions[row] = chosen[i]
                logp[row] = logp_all[i, chosen[i]]
                values[row] = value[i]
                pending[i].append(row)
                row += 1
                seen, reward, terminated, _, info = env.step(int(chosen[i]))
                if terminated:
                    returns[pending[i]] = reward
                    pending[i] = []
                    seen, info = env.reset()
                self.obs[i] = seen
                self.mask[i] = info["action_mask"]
        self.moves += size
        _, value, _, _ = network.forward(self.obs)
        for i, rows in enumerate(pending):
            returns[rows] = value[i]
        return {
            "obs": obs,
            "mask": mask,
            "actions": actions,
            "logp": logp,
            "advantages": returns - values,
            "returns": returns,
        }


def update(network: Network, adam: Adam, batch: dict[str, np.ndarray], settings: Settings) -> None:
    """``settings.epochs`` passes of minibatch steps over one iteration's samples."""
    size = len(batch["obs"])
    advantages = batch["advantages"]
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    rng = np.random.default_rng(adam.steps)
    for _ in range(settings.epochs):
        order = rng.permutation(size)
        for start in range(0, size, settings.minibatch):
            rows = order[start : start + settings.minibatch]
            grads = gradients(
                network,
                batch["obs"][rows],
                batch["mask"][rows],
                batch["actions"][rows],
                batch["logp"][rows],
                advantages[rows],
                batch["returns"][rows],
                settings,
            )
            adam.update(network, grads)


def evaluate(network: Network, opponent: str, deals: int, seed: int = 12345) -> float:
    """The greedy policy's score against ``opponent`` through the arena's referee, in this
    process: ``deals`` deals, each played in both seatings (wins plus half the shared rounds,
    over rounds)."""
    from arena.referee.play import InProcessHandle, Referee
    from bots.policy import policy_bot

    from .bot import PPOBot

    learner = PPOBot(network=network)
    other = policy_bot(opponent)()
    referee = Referee("classic", move_time=None)
    score = 0.0
    for deal in range(deals):
        for seat in (0, 1):
            handles = [InProcessHandle(other, opponent), InProcessHandle(other, opponent)]
            handles[seat] = InProcessHandle(learner, "ppo")
            winners = referee.play_round(handles, seed=seed + deal).winners
            score += 1 / len(winners) if seat in winners else 0.0
    return score / (2 * deals)


def train(
    settings: Settings, iterations: int, seconds: float | None = None, report: int = 400
) -> tuple[Network, int]:
    """Train a fresh network for ``iterations`` (at most ``seconds`` of wall time, when given);
    print a line every ``report`` iterations. The network and the iterations it had: fewer than
    ``iterations`` only when ``seconds`` cut training short."""
    network = Network.initial(
        OBSERVATION_SIZE, N_ACTIONS, settings.hidden, np.random.default_rng(settings.seed)
    )
    adam = Adam(settings.learning_rate)
    rollouts = Rollouts(settings)
    begun = time.monotonic()
    iteration = 0
    while iteration < iterations:
        if seconds is not None and time.monotonic() - begun >= seconds:
            break
        update(network, adam, rollouts.collect(network), settings)
        iteration += 1
        if iteration % report == 0:
            scores = ", ".join(
                f"{name} {evaluate(network, name, 250):.3f}" for name in settings.opponents
            )
            print(
                f"{time.monotonic() - begun:6.0f} s  iteration {iteration}  "
                f"{rollouts.moves:,} moves  score against {scores}",
                flush=True,
            )
    return network, iteration


def main(argv: Sequence[str] | None = None) -> None:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(prog="python -m loveletter_ppo.train", description=__doc__)
    parser.add_argument(
        "--iterations", type=int, default=3000, help="training iterations (the budget)"
    )
    parser.add_argument(
        "--minutes", type=float, default=None, help="an optional cap on the wall time as well"
    )
    parser.add_argument("--opponents", default="random,strategic", help="bots trained against")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", type=int, default=400, help="iterations between lines")
    parser.add_argument("--out", default=str(WEIGHTS), help="where the weights are saved")
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.report < 1:
        parser.error("--iterations and --report must be at least 1")
    if args.minutes is not None and not args.minutes > 0:
        parser.error("--minutes must be above 0")
    settings = Settings(opponents=tuple(args.opponents.split(",")), seed=args.seed)
    seconds = None if args.minutes is None else args.minutes * 60
    network, done = train(settings, args.iterations, seconds, args.report)
    if done < args.iterations:
        print(
            f"--minutes {args.minutes:g} cut training short: {done} of {args.iterations} "
            "iterations (a weaker bot than the full budget trains)",
            flush=True,
        )
    network.save(args.out)
    scores = ", ".join(f"{n} {evaluate(network, n, 1000):.3f}" for n in settings.opponents)
    print(f"saved {args.out}; score over 2,000 rounds (1,000 deals, both seats) against {scores}")


if __name__ == "__main__":
    main()
