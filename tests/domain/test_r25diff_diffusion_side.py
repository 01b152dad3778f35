"""A latent diffusion model's image side (workload.diffusion_side_problem): a whole multiple
of the VAE's factor 8, as diffusers' pipelines require, and at least 64 pixels."""

from __future__ import annotations

import pytest

from app.domain.workload import DIFFUSION_MIN_SIDE, DIFFUSION_SIDE_MULTIPLE, diffusion_side_problem


@pytest.mark.parametrize("side", [64, 512, 768, 1000, 1024, 2048])
def test_sides_a_pipeline_generates_pass(side: float) -> None:
    assert diffusion_side_problem(side) is None


@pytest.mark.parametrize(
    ("side", "nearest"),
    [(7.5, 64), (1001, 1000), (1019, 1016), (1021, 1024), (56, 64), (1023.5, 1024)],
)
def test_other_sides_are_refused_with_the_nearest_that_runs(side: float, nearest: float) -> None:
    said = diffusion_side_problem(side)
    assert said is not None and said.startswith(f"input_size {side:g}:")
    assert (
        f"multiple of {DIFFUSION_SIDE_MULTIPLE}" in said
        and f"at least {DIFFUSION_MIN_SIDE}" in said
    )
    assert said.endswith(f"e.g. {nearest:g}")
