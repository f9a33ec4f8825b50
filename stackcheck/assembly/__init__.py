"""Assembling the parts for a command: which box and interpreter (target), facts probed or read, --assume-*,
evaluation, plan (pipeline), and the audit's plan cache (here, not in plan/, so that a cache hit never imports
the planner)."""
