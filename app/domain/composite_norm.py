"""FLUX.1's QK RMSNorms as diffusers ran them before its attention refactor: eight kernels.

The shipped FLUX.1 tables (benchmarks/gen_operator_tables.py) trace today's stack, where each
query / key RMSNorm is ``torch.nn.RMSNorm``: one fused kernel that reads the 16-bit input once
and writes it once. Until diffusers PR #11916 ("[refactor] Flux/Chroma single file
implementation + Attention Dispatcher", opened 2025-07-14) FLUX.1's blocks built diffusers'
``Attention(qk_norm="rms_norm")``, whose norms are diffusers' own ``RMSNorm``
(src/diffusers/models/normalization.py)::

    variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
    hidden_states = hidden_states.to(self.weight.dtype)   # weight in 16 bits
    hidden_states = hidden_states * self.weight

In eager PyTorch every call is a kernel of its own, and the product of a 16-bit input with the
fp32 ``rsqrt`` promotes to fp32, so three full-size fp32 tensors are written and read between
the cast up and the cast down: ~34 bytes an element at 16 bits where the fused kernel moves 4.
xDiT's FLUX.1 processors of that time call the same ``attn.norm_q`` / ``norm_k``
(xfuser/model_executor/layers/attention_processor.py, ``xFuserFluxAttnProcessor2_0``).
A job states the old stack with ``WorkloadSpec.composite_rms_norm`` (benchmarks read it off a
published run's date); today's jobs keep the traced fused kernel.

Pure: no file access, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from app.domain.operators import ForwardTable, Op, derive, memory_op

# The table entries that are FLUX.1's query / key RMSNorms (their module names' last part)
QK_RMS_NORMS = ("norm_q", "norm_k", "norm_added_q", "norm_added_k")
F32 = 4.0  # bytes of an fp32 word

# The composite path, kernel by kernel: (ATen op, role, bytes read, bytes written) per element
# of the normalised tensor, "a" the activation width, "f" fp32, "" none; the per-row
# statistics (one fp32 word per 128-wide head row) the mean writes and the product reads are
# added in ``composite_ops``.
_PER_ELEMENT = (
    ("_to_copy", "cast", "a", "f"),  # hidden_states.to(float32)
    ("pow", "act", "f", "f"),  # .pow(2)
    ("mean", "act", "f", ""),  # .mean(-1, keepdim=True): one word a row out
    ("mul", "act", "a", "f"),  # hidden_states (16-bit) * rsqrt(...) (fp32) -> fp32
    ("_to_copy", "cast", "f", "a"),  # .to(weight.dtype)
    ("mul", "act", "a", "a"),  # * self.weight
)
# the statistics kernels on the rows alone (one fp32 word a row in, one out): + eps, rsqrt
_PER_ROW = ("add", "rsqrt")
# kernels the composite path launches where the fused one launches one
KERNELS = len(_PER_ELEMENT) + len(_PER_ROW)


def is_qk_rms_norm(op_name: str) -> bool:
    """Whether a table entry (``transformer_blocks.[0-18].attn.norm_q``) is a QK RMSNorm."""
    return op_name.rsplit(".", 1)[-1] in QK_RMS_NORMS


def composite_ops(op: Op, act_b: float) -> list[Op]:
    """The fused ``op`` as diffusers' own RMSNorm runs it: its elements from its 16-bit read,
    its rows from the fp32 reciprocal RMS it writes beside its output (the traced fused kernel's
    second output)."""
    elements = op.bytes_read / act_b
    rows = max(0.0, (op.bytes_written - elements * act_b) / F32)
    width = {"a": act_b, "f": F32, "": 0.0}
    out = [
        derive(
            memory_op("elementwise", f"{op.name}:{aten}", role, elements, elements, count=op.count),
            bytes_read=elements * width[r],
            bytes_written=elements * width[w] + (rows * F32 if aten == "mean" else 0.0),
            dtype=op.dtype,
        )
        for aten, role, r, w in _PER_ELEMENT
    ]
    stats = [
        derive(
            memory_op("elementwise", f"{op.name}:{aten}", "act", rows, rows, count=op.count),
            bytes_read=rows * F32,
            bytes_written=rows * F32,
            dtype=op.dtype,
        )
        for aten in _PER_ROW
    ]
    # the scaling product also reads the row statistic it broadcasts
    scale = out[3]
    out[3] = derive(scale, bytes_read=scale.bytes_read + rows * F32)
    return out[:3] + stats + out[3:]


def expand(ops: Iterable[Op], act_b: float) -> list[Op]:
    """``ops`` with every QK RMSNorm run as the composite path (``composite_ops``)."""
    out: list[Op] = []
    for o in ops:
        if o.kind == "norm" and is_qk_rms_norm(o.name):
            out.extend(composite_ops(o, act_b))
        else:
            out.append(o)
    return out


def extra_calls(table: ForwardTable) -> float:
    """ATen calls the composite path adds per network call over the traced fused kernel."""
    norms = math.fsum(
        float(o.get("count") or 1)
        for o in table.ops
        if o.get("kind") == "norm" and is_qk_rms_norm(str(o.get("name") or ""))
    )
    return norms * (KERNELS - 1)
