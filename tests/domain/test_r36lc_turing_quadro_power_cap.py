"""The Turing Quadros' power figure is the cap the driver enforces, not the total board power
(issue 21, llama.cpp prompt ranks on the tuning scoreboard).

The Quadro RTX 6000 and RTX 8000 are one die (full TU102, 72 SMs, 1.77 GHz boost) on one board
design; nvidia-smi reports a 260 W power cap on both (gpu-burn issue #21, public logs), and
NVIDIA's 295 W "maximum" adds the 35 W the boards budget for their VirtualLink USB-C port, which
the GPU cannot spend. The engine's power-capped clock (``efficiency.sm_clock_share`` on the MMQ
path, ``llm_step.sustained_clock`` on the cuBLAS path) must therefore give the twins one clock.
"""

from __future__ import annotations

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import efficiency, llm_step
from app.domain.gpu import GpuSpec
from app.shipped.rules import DATA_DIR, load_efficiency

_SLUGS = ("quadro-rtx-6000", "quadro-rtx-8000", "quadro-rtx-5000")


@pytest.fixture(scope="module")
def quadros() -> dict[str, GpuSpec]:
    specs = {g.slug: g for g in read_gpu_specs(DATA_DIR) if g.slug in _SLUGS}
    assert set(specs) == set(_SLUGS)
    return specs


def test_the_turing_quadros_hold_the_power_cap_the_driver_enforces(
    quadros: dict[str, GpuSpec],
) -> None:
    # nvidia-smi's Pwr Cap on the actively cooled 24 GB and 48 GB cards; the RTX 5000's TGP
    assert quadros["quadro-rtx-6000"].tdp_w == 260
    assert quadros["quadro-rtx-8000"].tdp_w == 260
    assert quadros["quadro-rtx-5000"].tdp_w == 230


def test_one_die_at_one_cap_runs_mmq_at_one_clock(quadros: dict[str, GpuSpec]) -> None:
    rtx6000, rtx8000 = quadros["quadro-rtx-6000"], quadros["quadro-rtx-8000"]
    table = load_efficiency()
    prof = table.profile(rtx6000, "cuda", "llama.cpp", "int4", "prefill")
    assert prof.compute_basis == "sm"
    assert prof.tensor_tflops_per_watt == pytest.approx(0.343)  # Turing's, from the T4
    share = efficiency.sm_clock_share(rtx6000, prof)
    # 260 W × 0.343 TFLOPS/W ÷ (72 SMs × 1.77 GHz × 1024 FLOP): ~0.68 of boost, not 295 W's 0.78
    assert share == pytest.approx(260 * 0.343 / (16.3 * 2 * 4), rel=0.01)
    assert share < 0.70
    assert efficiency.sm_clock_share(rtx8000, prof) == pytest.approx(share)
    basis_6000 = efficiency.basis_tflops(rtx6000, "sm", prof)
    basis_8000 = efficiency.basis_tflops(rtx8000, "sm", prof)
    assert basis_6000 is not None and basis_8000 is not None
    assert basis_6000 == pytest.approx(basis_8000, rel=0.01)
    assert llm_step.sustained_clock(rtx6000, prof) == pytest.approx(share)
