"""Match a measured device name to a catalog GPU (name tokens, then memory size)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.gpu import GpuSpec

# Variant words that must agree both ways: an "RTX 4090" is not an "RTX 4090 Laptop".
_VARIANTS = (
    "ti",
    "super",
    "laptop",
    "max-q",
    "sxm",
    "pcie",
    "nvl",
    "xt",
    "xtx",
    "ultra",
    "max",
    "pro",
)
_NOISE = {
    "nvidia",
    "geforce",
    "amd",
    "radeon",
    "intel",
    "apple",
    "graphics",
    "gpu",
    "tensor",
    "core",
}


def _tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)?", text.lower().replace("_", " "))
    out: set[str] = set()
    for w in words:
        out.update(w.split("-") if w != "max-q" else [w])
    # "SXM4"/"SXM5" are still SXM parts for the variant check.
    out |= {m.group(1) for t in out if (m := re.fullmatch(r"(sxm|pcie)\d", t))}
    return out - _NOISE


def _memory_type_tokens(tokens: set[str]) -> set[str]:
    return {t for t in tokens if re.fullmatch(r"(hbm|gddr|lpddr)\d*[a-z]?", t)}


def _memory_tokens(tokens: set[str]) -> set[str]:
    return {t for t in tokens if re.fullmatch(r"\d+gb", t)}


def match_device(
    device_name: str, memory_gib: float | None, gpus: Sequence[GpuSpec]
) -> GpuSpec | None:
    dev = _tokens(device_name)
    model_tokens = {t for t in dev if re.search(r"\d", t)} - _memory_tokens(dev)
    model_tokens -= _memory_type_tokens(dev) | {"sxm4", "sxm5", "sxm2"}
    if not model_tokens:
        return None
    best: tuple[float, str, GpuSpec] | None = None
    for gpu in gpus:
        cand = _tokens(f"{gpu.name} {gpu.slug.replace('-', ' ')}")
        if not model_tokens <= cand:
            continue
        if any((v in dev) != (v in cand) for v in _VARIANTS if v not in ("pcie", "sxm", "pro")):
            continue
        score = 0.0
        if memory_gib:
            # Vendors' "80 GB" is GiB in practice, and drivers report a little less.
            score -= abs(gpu.memory_gb - memory_gib) / max(gpu.memory_gb, 1.0)
        score += sum(0.2 for v in ("pcie", "sxm") if v in dev and v in cand)
        mem_type = _tokens(gpu.memory_type or "")
        if _memory_type_tokens(dev) & mem_type:
            score += 0.1  # "H100 80GB HBM3" is the SXM part; the PCIe card has HBM2e
        key = (score, gpu.slug)
        if best is None or key[0] > best[0] or (key[0] == best[0] and key[1] < best[1]):
            best = (score, gpu.slug, gpu)
    if best is None:
        return None
    if memory_gib and abs(best[2].memory_gb - memory_gib) / best[2].memory_gb > 0.25:
        return None
    return best[2]
