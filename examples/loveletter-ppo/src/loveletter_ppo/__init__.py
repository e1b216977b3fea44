"""ppo: a Love Letter bot trained by reinforcement learning (PPO, in NumPy) against the arena's
reference bots, played as an ordinary bot package."""
