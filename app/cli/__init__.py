"""The `gpu-advisor` command: main.py (serve, worker, db) and one module per feature's
commands (recommend.py, bench.py, offers.py), each registered on main's Typer app."""
