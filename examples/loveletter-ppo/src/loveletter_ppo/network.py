"""The policy network, in NumPy: what the bot needs to play, and all of it.

Two hidden layers of ``tanh`` units over the arena's observation vector
(:mod:`arena.rl.encoding`, 184 floats), then two heads: one logit per action index (41; the
illegal ones are masked out before the softmax) and the value of the position (the expected
reward, from -1 to 1), which only training uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The weights that ship with the package (written by ``python -m loveletter_ppo.train``).
WEIGHTS = Path(__file__).with_name("weights.npz")
#: The parameters' names, in order.
NAMES = ("w1", "b1", "w2", "b2", "wp", "bp", "wv", "bv")


@dataclass
class Network:
    """The network's parameters (``float32``): ``w1, b1`` and ``w2, b2`` the hidden layers,
    ``wp, bp`` the policy head, ``wv, bv`` the value head."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    wp: np.ndarray
    bp: np.ndarray
    wv: np.ndarray
    bv: np.ndarray

    @classmethod
    def initial(cls, inputs: int, actions: int, hidden: int, rng: np.random.Generator) -> Network:
        """Fresh parameters: orthogonal-like scaled normal weights, the policy head small (so
        that the first policy is near uniform among the legal actions), zero biases."""

        def layer(rows: int, columns: int, scale: float) -> np.ndarray:
            return (rng.standard_normal((rows, columns)) * scale / np.sqrt(rows)).astype(np.float32)

        return cls(
            layer(inputs, hidden, 1.0),
            np.zeros(hidden, np.float32),
            layer(hidden, hidden, 1.0),
            np.zeros(hidden, np.float32),
            layer(hidden, actions, 0.01),
            np.zeros(actions, np.float32),
            layer(hidden, 1, 1.0),
            np.zeros(1, np.float32),
        )

    @classmethod
    def load(cls, path: Path | str = WEIGHTS) -> Network:
        """The parameters saved at ``path``; :class:`ValueError` (one line) if it holds none."""
        try:
            with np.load(path) as saved:
                return cls(*(saved[name].astype(np.float32) for name in NAMES))
        except (OSError, ValueError, KeyError, EOFError) as exc:
            raise ValueError(f"cannot load the weights {path}: {exc}") from None

    def save(self, path: Path | str) -> None:
        """Save the parameters to ``path`` (a ``.npz`` file)."""
        np.savez(path, **self.arrays())  # type: ignore[arg-type]

    def arrays(self) -> dict[str, np.ndarray]:
        """The parameters by name."""
        return {name: getattr(self, name) for name in NAMES}

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For a batch of observations (rows): the action logits, the values, and the two hidden
        layers' outputs (which training's backward pass reuses)."""
        h1 = np.tanh(obs @ self.w1 + self.b1)
        h2 = np.tanh(h1 @ self.w2 + self.b2)
        return h2 @ self.wp + self.bp, (h2 @ self.wv + self.bv)[:, 0], h1, h2


def masked_log_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Log-probabilities of a softmax over the legal actions of each row (``-inf`` elsewhere)."""
    masked = np.where(mask.astype(bool), logits, -np.inf)
    top = masked.max(axis=1, keepdims=True)
    shifted = masked - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def choose(
    network: Network,
    obs: np.ndarray,
    mask: np.ndarray,
    temperature: float = 0.0,
    rng: np.random.Generator | None = None,
) -> int:
    """The action index ``network`` plays for one observation: its likeliest legal action, or
    with ``temperature`` above 0 one drawn from its probabilities so sharpened or flattened."""
    logits = network.forward(obs[None, :])[0][0]
    legal = np.flatnonzero(mask)
    if temperature <= 0.0 or rng is None:
        return int(legal[np.argmax(logits[legal])])
    scaled = logits[legal] / temperature
    p = np.exp(scaled - scaled.max())
    return int(rng.choice(legal, p=p / p.sum()))
