"""JSON Schemas shipped as package data (loaded with importlib.resources)."""
