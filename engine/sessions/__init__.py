"""Chat sessions: turns, the tool loop, slash commands, and the per-workspace session manager."""
