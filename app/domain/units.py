"""Memory units. The engine counts bytes in 10^9 (GB, the API's *_gb fields); vendors label
cards in 2^30-byte "GB" (an "80 GB" H100 holds 80 GiB: nvidia-smi shows 81,559 MiB). Every
figure a person reads — explanations, reasons, pages — is in GiB, labelled "GiB", so a need
and a capacity compare directly, a card reads as its label, and no "GB" in words stands for
a figure the API gives in another unit."""

from __future__ import annotations

from app.domain.figures import sig_figs

GIB_PER_GB = float(1 << 30) / 1e9


def vram(gb: float) -> float:
    """``gb`` (10^9 bytes) in GiB (2^30 bytes), the vendors' "GB"; say it "GiB"."""
    return gb / GIB_PER_GB


def gib(gb: float) -> str:
    """``gb`` (10^9 bytes) written in GiB as a person reads it: the pages' three significant
    figures (figures.sig_figs), without the unit. An exclusion's "needs 140.0 GiB" had shown
    four figures where the row beside it, the pages and the README's rule show three."""
    return sig_figs(vram(gb))
