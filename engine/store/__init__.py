"""Durable state in embedded SQLite: sessions, transcripts, turns, events, the cost ledger."""
