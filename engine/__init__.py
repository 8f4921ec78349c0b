"""Switchman's routing engine: configuration, the policy chain, availability, patterns.

Boundary: this package is editor-independent. It never imports ``pygls`` or
``lsprotocol``; the language server in ``switchman.server`` adapts it to LSP.
Records that cross a boundary (problems, decisions, events) are msgspec Structs.
Everything the engine needs from the outside world (the clock, the environment,
file contents) comes in through small parameters so tests can drive it directly.
"""

__version__ = "0.1.0"
