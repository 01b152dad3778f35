"""The shipped kernel profiles (data/profiles/<gpu-slug>.yaml), parsed against the catalog:
published sweeps and vendor figures per GPU, each point with its source."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain.gpu import GpuSpec
from app.domain.kernel_profiles import GpuProfile, ProfileStore, parse_profile
from app.shipped import yamlio
from app.shipped.paths import shipped_path

DATA_DIR = shipped_path("data")


def read_profiles(data_dir: Path, gpus: dict[str, GpuSpec]) -> ProfileStore:
    """Every profile file whose GPU is in ``gpus``; a file naming another GPU, or a point
    without a listed source, is an error that names the file."""
    profiles: dict[str, GpuProfile] = {}
    for path in sorted((data_dir / "profiles").glob("*.yaml")):
        data = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
        slug = data.get("gpu")
        if slug != path.stem:
            raise ValueError(f"{path.name}: 'gpu' must be the file's name ({path.stem})")
        gpu = gpus.get(slug)
        if gpu is None:
            raise ValueError(f"{path.name}: {slug!r} is not in the catalog")
        profiles[slug] = parse_profile(data, gpu, where=path.name)
    return ProfileStore(profiles)


@lru_cache(maxsize=4)
def shipped_profiles(data_dir: Path = DATA_DIR) -> tuple[ProfileStore, dict[str, GpuSpec]]:
    """The shipped profiles and the catalog specs they were read against."""
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    return read_profiles(data_dir, gpus), gpus
