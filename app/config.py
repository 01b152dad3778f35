"""The one Settings object. Nothing else reads ``os.environ``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.resources import shipped_path

# The checkout's root; shipped folders (data/, templates/, ...) come from app.resources,
# which also finds them inside an installed wheel.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def default_database_url() -> str:
    base = Path(user_data_dir("gpu-advisor", appauthor=False))
    return f"sqlite:///{base / 'gpu-advisor.db'}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GPU_ADVISOR_", extra="ignore")

    database_url: str = Field(default_factory=default_database_url)
    admin_token: str | None = None
    # Optional: uploads of device reports require this bearer token when set.
    upload_token: str | None = None
    data_dir: Path = Field(default_factory=lambda: shipped_path("data"))
    docs_dir: Path = Field(default_factory=lambda: shipped_path("docs"))
    max_report_bytes: int = 2_000_000
    bench_timeout_s: float = 600.0
    bench_jobs_dir: Path | None = None
    # The command the job runner starts in a child process; tests point it elsewhere.
    bench_command: list[str] | None = None
    # Offers (cloud and purchase prices) older than this are flagged stale wherever shown.
    offer_stale_days: int = Field(default=90, ge=1, le=36500)
    seed_on_start: bool = True
    migrate_on_start: bool = True
    # Application logs go to stderr: "json" (one object per line, with the request id) or
    # "text"; and from which level.
    log_format: Literal["json", "text"] = "json"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


@lru_cache
def get_settings() -> Settings:
    return Settings()
