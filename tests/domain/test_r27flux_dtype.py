"""FLUX.1 in bf16 as diffusers runs it: what it upcasts is priced at the bytes it moves.

diffusers' apply_rotary_emb (embeddings.py, used by FluxAttnProcessor) computes
``(x.float() * cos + x_rotated.float() * sin).to(x.dtype)``: two casts up, two fp32 products
with the fp32 cos / sin tables, an fp32 sum and a cast back. FLUX.1's QK norms are
``torch.nn.RMSNorm``, whose ``F.rms_norm`` ATen runs as one fused kernel on CUDA
(``_fused_rms_norm``: bf16 in and out, an fp32 reciprocal RMS per row). The tables are traced in
bf16 (operators.F32_FIELDS: the 4-byte words among an op's elements)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.operators import parse_table, table_ops
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)


def _ops(raw: list[dict], act_b: float = 2.0) -> list:
    t = parse_table({"model": "t", "source": "s", "gflops_forward": None, "ops": raw})
    return table_ops(t, 1.0, act_b=act_b)


def test_fp32_words_move_four_bytes_whatever_the_activation_width() -> None:
    up = {"kind": "elementwise", "name": "attn:_to_copy", "count": 1, "elements_in": 100,
          "elements_out": 100, "f32_out": 100}  # fmt: skip
    mixed = {"kind": "elementwise", "name": "attn:mul", "count": 1, "elements_in": 110,
             "elements_out": 100, "f32_in": 10}  # fmt: skip
    a, b = _ops([up, mixed])
    assert (a.bytes_read, a.bytes_written) == (200.0, 400.0)
    assert a.role == "cast"  # a traced cast between widths
    assert (b.bytes_read, b.bytes_written) == (100 * 2 + 10 * 4, 200.0)
    # an fp32 job: every element at 4 bytes, the words too
    a32, b32 = _ops([up, mixed], act_b=4.0)
    assert (a32.bytes_read, a32.bytes_written) == (400.0, 400.0)
    assert b32.bytes_read == 440.0


def test_more_fp32_words_than_elements_is_refused() -> None:
    bad = {"kind": "norm", "name": "n", "count": 1, "elements_in": 4, "elements_out": 4,
           "f32_out": 5}  # fmt: skip
    with pytest.raises(ValueError, match="f32_out beyond elements_out"):
        _ops([bad])


def _rope_bytes_per_application(preset: str) -> tuple[float, float]:
    """Bytes the transformer's rotary embedding moves per application (on q or on k of one
    double-stream block), priced at bf16, and the tokens it runs over."""
    m = PRESETS[preset].model
    assert m.operators is not None
    ops = [
        o
        for o in table_ops(m.operators, 1.0, act_b=2.0)
        if o.name.startswith("transformer_blocks.")
        and o.name.rsplit(":", 1)[-1] in ("neg", "stack", "_to_copy", "mul", "add")
        and o.name.split(":")[0].endswith(".attn")
    ]
    applications = 2 * 19  # q and k in each of the 19 double-stream blocks
    return sum(o.bytes * o.count for o in ops) / applications, 4096 + m.max_context  # type: ignore[operator]


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_the_rotary_embedding_runs_in_fp32(preset: str) -> None:
    got, tokens = _rope_bytes_per_application(preset)
    e = tokens * 24 * 128  # q (or k) over every joint token: 24 heads of 128
    table = tokens * 128 * 4.0  # the fp32 cos (or sin) table, one row per token
    expected = (
        (2 + 4) * e  # x.float(): bf16 in, fp32 out
        + (2 + 2) * (e / 2)  # -x_imag: half the elements, bf16 in and out
        + (2 + 2) * e  # stack([-x_imag, x_real]): bf16 in and out
        + (2 + 4) * e  # x_rotated.float()
        + 2 * (4 * e + table + 4 * e)  # x * cos and x_rotated * sin, fp32
        + (8 + 4) * e  # the fp32 sum
        + (4 + 2) * e  # .to(x.dtype): back to bf16
    )
    assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_the_qk_rms_norms_are_one_fused_kernel_each(preset: str) -> None:
    m = PRESETS[preset].model
    assert m.operators is not None
    norms = ("norm_q", "norm_k", "norm_added_q", "norm_added_k")
    qk = [o for o in m.operators.ops if o["name"].split(":")[0].endswith(norms)]
    # one op per norm module: 4 per double-stream block, 2 per single-stream one
    assert all(o["kind"] == "norm" for o in qk)
    assert sum(o["count"] for o in qk) == 4 * 19 + 2 * 38
    priced = table_ops(m.operators, 1.0, act_b=2.0)
    q = next(o for o in priced if o.name == "single_transformer_blocks.[0-37].attn.norm_q")
    e = (4096 + (m.max_context or 0)) * 24 * 128
    rows = e / 128
    # bf16 in, bf16 out and one fp32 reciprocal RMS per (token, head) row
    assert (q.bytes_read, q.bytes_written) == (2 * e, 2 * e + 4 * rows)
