"""Memory units. The engine counts bytes in 10^9 (GB); vendors label cards in 2^30-byte "GB"
(an "80 GB" H100 holds 80 GiB: nvidia-smi shows 81,559 MiB). Every figure a person reads —
explanations, reasons, pages — is in the vendors' unit, so a need and a capacity compare
directly and a card reads as its label."""

from __future__ import annotations

GIB_PER_GB = float(1 << 30) / 1e9


def vram(gb: float) -> float:
    """``gb`` (10^9 bytes) in the vendors' GB (2^30 bytes)."""
    return gb / GIB_PER_GB
