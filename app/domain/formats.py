"""Weight and KV-cache formats: one row per precision, read by every LLM path.

Inference (perf, workload memory) and serving (serving.py) both size weights and KV caches
from this table, so an int4 checkpoint is the same number of bytes whichever task asks.
Stored bits per weight include the quantisation scales (docs/methodology.md §6.2):

* int4 = AWQ/GPTQ with group size 128: 4 bits, an fp16 scale (16/128) and a packed 4-bit zero
  point (4/128) per group — 4.16 bits (AutoGPTQ QuantLinear: qweight int32 [in/8, out], qzeros
  packed 4-bit [in/g, out/8], scales fp16 [in/g, out]; data/efficiency.yaml ``gptq``/``awq``);
* fp4 = NVFP4: one E4M3 scale per 16 values, 4 + 8/16 = 4.5 bits (MXFP4: one E8M0 scale per
  32, 4.25; data/efficiency.yaml ``nvfp4``/``mxfp4``);
* fp8 and int8 keep per-channel or per-block scales, a negligible share of the bytes.

Quantised checkpoints keep the input embeddings and the LM head in 16-bit (llm-compressor,
AutoAWQ and ModelOpt skip them), so ``weight_bytes`` counts those at 2 bytes; a runtime's own
format (llama.cpp's GGUF, MLX's affine 4-bit: ``runtime_bits``) is a whole-file mean and is
taken as given.

Pure data: a new format is one row here plus its kernels' rules (data/frameworks.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.vocab import KV_CACHE_PRECISIONS

if TYPE_CHECKING:
    from app.domain.workload import ModelSpec


@dataclass(frozen=True, slots=True)
class WeightFormat:
    bits: float  # stored bits per weight, scales included
    # bytes per value of a KV cache kept in this precision; None: no KV format of that name
    kv_bytes: float | None
    # the tensor-core datapath its GEMMs run on where the runtime has native kernels; weight-
    # only formats (int4) dequantise to 16-bit and run there
    datapath: str
    label: str


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    "fp32": WeightFormat(32.0, 4.0, "fp32", "fp32"),
    "tf32": WeightFormat(32.0, 4.0, "tf32", "fp32 (TF32 math)"),
    "bf16": WeightFormat(16.0, 2.0, "bf16", "bf16"),
    "fp16": WeightFormat(16.0, 2.0, "fp16", "fp16"),
    "fp8": WeightFormat(8.0, 1.0, "fp8", "FP8 (E4M3, per-channel or block scales)"),
    "int8": WeightFormat(8.0, None, "int8", "INT8 (per-channel scales)"),
    "int4": WeightFormat(
        4.0 + 16.0 / 128 + 4.0 / 128,
        None,
        "bf16",
        "AWQ/GPTQ int4, group 128 (4.16 bits per weight)",
    ),
    "fp4": WeightFormat(4.0 + 8.0 / 16, None, "fp4", "NVFP4 (4.5 bits per weight; MXFP4 4.25)"),
}

# MLX's own 4-bit format, what `mlx_lm.convert -q` writes: mlx.nn.quantize with its defaults
# (group_size 64, bits 4, mode "affine") quantises every Linear and Embedding layer ("By default
# all Linear and Embedding layers will be quantized", mlx python/mlx/nn/layers/quantized.py;
# mlx_lm convert's q_group_size 64, q_bits 4), the input embedding and the LM head (tied:
# QuantizedEmbedding.as_linear; untied: a QuantizedLinear) included; each group of 64 values
# keeps a scale and a bias in the model's 16-bit dtype (mlx.core.quantize, mode affine):
# 4 + (16 + 16) / 64 = 4.5 bits per weight over the whole file (norms stay 16-bit: negligible).
MLX_AFFINE_GROUP = 64
MLX_AFFINE_4BIT_BITS = 4.0 + (16.0 + 16.0) / MLX_AFFINE_GROUP

# KV-cache formats the serving runtimes store (vLLM/SGLang --kv-cache-dtype, TensorRT-LLM
# kv_cache_config.dtype): 16-bit or fp8.
KV_FORMATS = KV_CACHE_PRECISIONS


def bits(precision: str) -> float:
    return WEIGHT_FORMATS[precision].bits


def bytes_per_weight(precision: str) -> float:
    return WEIGHT_FORMATS[precision].bits / 8.0


def kv_bytes(precision: str) -> float:
    """Bytes per KV value stored in ``precision`` (bf16, fp16, fp8, fp32)."""
    kv = WEIGHT_FORMATS[precision].kv_bytes
    if kv is None:
        raise ValueError(f"no KV-cache format {precision!r}")
    return kv


def runtime_bits(runtime: str, precision: str) -> float | None:
    """Bits per weight over the whole file where ``runtime`` stores weights at ``precision`` in
    its own format with no named format asked (``weight_bytes``' ``own_bits``): MLX at int4 is
    `mlx_lm.convert -q`'s affine 4-bit, embeddings and LM head quantised too
    (``MLX_AFFINE_4BIT_BITS``); None where the precision's own row applies (llama.cpp's int4
    is a GGUF format named by the job)."""
    if runtime == "mlx" and precision == "int4":
        return MLX_AFFINE_4BIT_BITS
    return None


def sixteen_bit_params(m: ModelSpec) -> float:
    """Parameters a quantised checkpoint keeps in 16-bit: the input embedding and a decoder's
    LM head, one matrix where the model says they are tied (``ModelSpec.tied_embeddings``,
    from a config.json), else two (activations.py's parameter-count guess misreads MoE and
    MLA models such as DeepSeek-V3 as tied, so it is not used here). An encoder's inference
    has no vocabulary head: its embedding table alone."""
    if not m.vocab_size or not m.hidden_size:
        return 0.0
    table = float(m.vocab_size) * float(m.hidden_size)
    tables = 2.0 if m.family == "decoder" and not m.tied_embeddings else 1.0
    return min(table * tables, m.params * 0.5)


def table_value_bytes(
    precision: str, own_bits: float | None = None, *, format_bits: float | None = None
) -> float:
    """Bytes per value of the input embedding table as ``weight_bytes`` stores it: a runtime's
    own format's whole-file mean (``own_bits``: GGUF and MLX quantise the table with the rest),
    the format's own at 16 bits and above, else 2 (``sixteen_bit_params``)."""
    if own_bits is not None:
        return own_bits / 8
    b = format_bits if format_bits is not None else bits(precision)
    return b / 8 if b >= 16 else 2.0


def quantised_value_bytes(
    precision: str, own_bits: float | None = None, *, format_bits: float | None = None
) -> float:
    """Bytes per value of a weight ``weight_bytes`` stores in the format itself (not among the
    16-bit tables): a routed expert's. A runtime's own format is a whole-file mean."""
    if own_bits is not None:
        return own_bits / 8
    return (format_bits if format_bits is not None else bits(precision)) / 8


def weight_bytes(
    m: ModelSpec,
    precision: str,
    own_bits: float | None = None,
    *,
    format_bits: float | None = None,
) -> float:
    """Stored weights of ``m`` at ``precision``: the ONE weight-memory rule, which inference
    (workload memory, perf) and serving both call.

    ``format_bits``: a named format's bits per quantised weight, scales included (AWQ/GPTQ
    4.16, NVFP4 4.5, MXFP4 4.25; data/efficiency.yaml ``quantization``) where it differs from
    the precision's row. ``own_bits``: a runtime's own format given as a mean over the whole
    file, embeddings included (llama.cpp's GGUF, llama-quantize's bits per weight). Otherwise
    every format below 16 bits keeps the embeddings and LM head in 16-bit (``sixteen_bit_params``).
    """
    if own_bits is not None:
        return m.params * own_bits / 8
    b = format_bits if format_bits is not None else bits(precision)
    if b >= 16:
        return m.params * b / 8
    emb = sixteen_bit_params(m)
    return (m.params - emb) * b / 8 + emb * 2.0
