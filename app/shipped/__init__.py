"""Readers of the folders shipped with the package: where they are (paths.py), how their YAML
is parsed (yamlio.py), and the engine's rule tables in data/ (rules.py)."""
