"""Tools a model may call during a turn."""
