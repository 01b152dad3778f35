"""Per-client token buckets, in process.

Each web process keeps its own buckets, so with N workers a client gets up to N times the
configured rate (the load balancer spreads it); README "Under load and attack" says so.
Buckets of clients idle long enough to be full again are dropped, so memory stays bounded by
active clients.
"""

from __future__ import annotations

import threading
import time


class RateLimiter:
    def __init__(self, burst: int, per_second: float, max_clients: int = 100_000) -> None:
        self.burst = float(burst)
        self.rate = per_second
        self.max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.burst > 0 and self.rate > 0

    def take(self, client: str, now: float | None = None) -> float:
        """Take one token; 0 when allowed, else the seconds until one is available."""
        if not self.enabled:
            return 0.0
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, at = self._buckets.get(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                allowed = True
            else:
                self._buckets[client] = (tokens, now)
                allowed = False
            if len(self._buckets) > self.max_clients:
                self._prune(now)
        return 0.0 if allowed else (1.0 - tokens) / self.rate

    def _prune(self, now: float) -> None:
        full_after = self.burst / self.rate
        for key in [k for k, (_, at) in self._buckets.items() if now - at > full_after]:
            del self._buckets[key]
