"""Storage of tournaments and games, rating maths and standings reports."""
