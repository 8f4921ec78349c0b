"""Delegation (spec 000 §6, 001): planners hand sub-tasks to worker sessions."""
