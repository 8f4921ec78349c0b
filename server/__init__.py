"""Switchman's front ends: the language server (``switchman serve``) and the CLI.

Everything here adapts the engine (``switchman.engine``) to a protocol: LSP
handlers and CLI commands translate their inputs into engine calls and engine
results into protocol messages. No routing or session logic lives here.
"""
