"""FLUX.1's QK RMSNorms: the fused kernel the shipped table traces, and the eight-kernel chain
diffusers ran before its Flux attention refactor (issue 21, r37 "ed").

The table (data/operators/flux-1-dev.yaml) was traced on torch 2.13 / diffusers 0.42.1, whose
``torch.nn.RMSNorm`` runs ATen's fused kernel: one pass that reads each element once and
writes it once at 16 bits. Before diffusers PR #11916 (opened 2025-07-14) FLUX.1's blocks ran
diffusers' own ``RMSNorm``: a cast up, pow, mean, + eps, rsqrt, a product promoted to fp32, a
cast down and the weight product, ~34 bytes an element where the fused kernel moves ~4
(app.domain.composite_norm). A job that states that stack (``WorkloadSpec.composite_rms_norm``,
which benchmarks read off a run's date) prices it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from app.domain import composite_norm, perf
from app.domain.operators import Op, parse_table, table_ops
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = DATA / "operators" / "flux-1-dev.yaml"
QK_NORMS = 19 * 4 + 38 * 2  # double-stream blocks: image q, k and text q, k; single: joint q, k


@pytest.fixture(scope="module")
def table_ops_bf16() -> list[Op]:
    table = parse_table(yaml.safe_load(TABLE.read_text()))
    return table_ops(table, 1.0, act_b=2.0, w_b=2.0, dtype="bf16")


@pytest.fixture(scope="module")
def qk_ops(table_ops_bf16: list[Op]) -> list[Op]:
    return [o for o in table_ops_bf16 if o.kind == "norm" and composite_norm.is_qk_rms_norm(o.name)]


def test_the_flux_table_holds_one_qk_norm_per_query_and_key_per_block(qk_ops: list[Op]) -> None:
    assert sum(o.count for o in qk_ops) == QK_NORMS
    # the block norms (LayerNorm, AdaLayerNorm) are not QK RMSNorms
    assert not composite_norm.is_qk_rms_norm("transformer_blocks.[0-18].norm1.norm")


def test_the_qk_norms_normalise_1_61_g_elements_a_transformer_pass(qk_ops: list[Op]) -> None:
    elements = sum(o.count * o.bytes_read / 2.0 for o in qk_ops)
    assert elements == pytest.approx(1.6138e9, rel=1e-3)


def test_each_qk_norm_is_traced_as_the_fused_kernel_one_read_one_write(qk_ops: list[Op]) -> None:
    # bf16 in, bf16 out (+ one fp32 reciprocal RMS per 128-wide head row): ~4 bytes an element
    for o in qk_ops:
        per_element = o.bytes / (o.bytes_read / 2.0)
        assert 4.0 <= per_element < 4.1, o.name


def test_the_composite_path_is_eight_kernels_of_34_bytes_an_element(qk_ops: list[Op]) -> None:
    fused = qk_ops[0]  # the double blocks' image-stream query norm: 4096 tokens x 24 heads
    elements = fused.bytes_read / 2.0
    chain = composite_norm.composite_ops(fused, 2.0)
    assert len(chain) == composite_norm.KERNELS == 8
    assert all(o.count == fused.count for o in chain)
    rows = 4096 * 24
    # 2+4 (cast up), 4+4 (pow), 4 (mean), 2+4 (x * rstd), 4+2 (cast down), 2+2 (weight)
    assert sum(o.bytes for o in chain) == pytest.approx(34 * elements + 6 * 4 * rows)
    assert [o.role for o in chain].count("cast") == 2


def test_expand_replaces_the_qk_norms_alone(table_ops_bf16: list[Op]) -> None:
    out = composite_norm.expand(table_ops_bf16, 2.0)
    assert len(out) == len(table_ops_bf16) + (composite_norm.KERNELS - 1) * len(
        [o for o in table_ops_bf16 if o.kind == "norm" and composite_norm.is_qk_rms_norm(o.name)]
    )
    assert not [o for o in out if o.kind == "norm" and composite_norm.is_qk_rms_norm(o.name)]
    table = parse_table(yaml.safe_load(TABLE.read_text()))
    assert composite_norm.extra_calls(table) == QK_NORMS * 7


def _flux(**kw: object) -> WorkloadSpec:
    p = load_presets(DATA)["flux-1-dev"]
    args: dict[str, object] = {
        "task": "inference",
        "model": p.model,
        "precision": "bf16",
        "batch_size": 1,
        "runtime": "pytorch",
        "efficiency": load_efficiency(DATA),
    }
    args.update(kw)
    return WorkloadSpec(**args)  # type: ignore[arg-type]


def test_the_old_stack_costs_a_flux_h100_image_about_a_tenth_more() -> None:
    today = perf.estimate(H100, _flux())
    old = perf.estimate(H100, _flux(composite_rms_norm=True))
    # 28 steps x ~48 GB more traffic at the H100's bandwidth: ~0.5 s of a ~5.4 s image
    assert 1.07 < old.step_time_s / today.step_time_s < 1.15
    # the host dispatches seven more ATen calls per QK norm per transformer call
    calls = perf.table_host_calls(_flux(composite_rms_norm=True))
    base = perf.table_host_calls(_flux())
    assert calls is not None and base is not None
    steps = _flux().model.passes_per_sample or 1
    assert calls - base == pytest.approx(QK_NORMS * 7 * steps)


def test_a_compiled_job_keeps_the_fused_norm() -> None:
    # Inductor fuses the chain back into one kernel: the stack field changes nothing
    a = perf.estimate(H100, _flux(runtime="torch-compile"))
    b = perf.estimate(
        H100, dataclasses.replace(_flux(runtime="torch-compile"), composite_rms_norm=True)
    )
    assert a.step_time_s == b.step_time_s
