"""The one Settings object. Nothing else reads ``os.environ``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.shipped.paths import shipped_path


def default_database_url() -> str:
    base = Path(user_data_dir("gpu-advisor", appauthor=False))
    return f"sqlite:///{base / 'gpu-advisor.db'}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GPU_ADVISOR_", extra="ignore")

    database_url: str = Field(default_factory=default_database_url)
    admin_token: str | None = None
    # Optional: uploads of device reports require this bearer token when set.
    upload_token: str | None = None
    # Optional: starting and cancelling benchmark runs require this bearer token when set.
    run_token: str | None = None
    # The task queue benchmark workers take runs from (README "Benchmark workers"): unset
    # means a SQLite file next to the SQLite database (one machine); redis://host:6379/0
    # lets workers on several hosts share it.
    queue_url: str | None = None
    # This worker's label (`gpu-advisor worker --label`), and the label a run goes to when
    # the request names none: the host name unless set.
    worker_label: str | None = None
    # A running run's worker writes a heartbeat this often; a run whose heartbeat is older
    # than the lapse is failed (its worker died).
    run_heartbeat_s: float = 2.0
    run_heartbeat_lapse_s: float = 30.0
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

    # --- limits (README "Configuration", "Under load and attack"); 0 turns a rate limit off
    # Requests admitted at once per web process; the connection pool is sized from it.
    # Python runs one thread at a time (GIL): past a few threads, more only add contention.
    max_concurrent_requests: int = Field(default=8, ge=1, le=256)
    # A request waiting longer than this for a slot gets 503 with Retry-After.
    queue_timeout_s: float = 90.0
    # Largest request body on any endpoint other than device-report uploads.
    max_body_bytes: int = 262_144
    # Deepest JSON nesting accepted in any body.
    max_json_depth: int = 64
    # Per client address: writes (uploads, edits, runs) and expensive reads
    # (recommendations, estimates, comparisons), as a burst and a sustained rate per minute.
    rate_limit_writes_burst: int = 240
    rate_limit_writes_per_minute: int = 120
    rate_limit_expensive_burst: int = 600
    rate_limit_expensive_per_minute: int = 1200
    # Device reports kept: the oldest go first when either bound is passed.
    report_retention_count: int = 10_000
    report_retention_bytes: int = 2_000_000_000
    # Readiness fails below this much free disk where the database (SQLite) and runs live.
    min_free_disk_bytes: int = 200_000_000
    # Origins besides the request's own host allowed to send writes (behind a proxy).
    trusted_origins: list[str] = Field(default_factory=list)


@lru_cache
def get_settings() -> Settings:
    return Settings()
