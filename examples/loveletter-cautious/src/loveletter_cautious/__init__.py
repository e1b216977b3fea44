"""cautious: a careful heuristic Love Letter bot for loveletter-arena."""
