"""Editor tooling for Switchman's config files: cursor, completion, hover, fixes, outline.

Builds on :mod:`switchman.engine.config` (parsing, schema, checks) and adds what only an
editor needs; nothing here is used to route a turn.
"""
