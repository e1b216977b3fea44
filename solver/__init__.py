"""The Dynamic Programming solver of two-player Love Letter (Huibers 2016)."""
