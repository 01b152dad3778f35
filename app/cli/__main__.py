"""`python -m app.cli` (the job runner and tests start the CLI this way)."""

from app.cli.main import main

main()
