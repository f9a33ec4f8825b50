"""Manifest data shipped as package data (loaded with importlib.resources)."""
