"""Routing: predicates, the policy chain, validation, overrides and explanations."""
