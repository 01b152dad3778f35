"""LLM fine-tuning throughput (LoRA, QLoRA, full) in tokens/s per GPU against published runs.

    python benchmarks/finetune.py [-v]      (also printed by benchmarks/accuracy.py)

Rows: tests/data/finetune_throughput.yaml (Qwen's README profile: HF Trainer + PEFT on one
A100 80GB, LoRA, GPTQ Q-LoRA and full fine-tuning at six sequence lengths) and the held-out
tests/data/heldout_finetune.yaml (NeMo's fine-tuning table), which accuracy.py scores with the
other held-out regimes. A row is priced by ``perf.estimate`` as the job it ran: ``peft``,
``lora_rank``, precision, gradient checkpointing, micro-batch and accumulation steps. Printed
per method (does the engine price LoRA, QLoRA and full fine-tuning alike?) and per model (one
model, one GPU, several sequence lengths: does it rank the shapes?).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import perf  # noqa: E402
from app.domain.calibration import Calibration  # noqa: E402
from app.domain.formats import runtime_bits  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from app.domain.workload import ModelSpec, WorkloadSpec  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from app.shipped.rules import load_efficiency  # noqa: E402
from benchmarks.llm_pretrain import (  # noqa: E402
    TIE_TOLERANCE,
    cli,
    decoder,
    heldout_tokens,
    megatron_layout,
    print_split,
    score,
    spearman,
    tie_aware_spearman,
    tokens_per_gpu,
)

FINETUNE_FILE = ROOT / "tests" / "data" / "finetune_throughput.yaml"
SCORED_PEFT = ("lora", "qlora", "none")


def finetune_job(
    gpu: GpuSpec,
    model: ModelSpec,
    row: dict[str, Any],
    data_dir: Path,
    calibration: Calibration | None = None,
) -> tuple[WorkloadSpec, perf.PerfEstimate]:
    """perf.estimate of one fine-tuning row and the job it priced (a row's band is drawn from
    the job): ``micro_batch`` sequences per GPU per micro-step, ``grad_accum`` micro-steps per
    optimizer step, on ``num_gpus`` GPUs (data parallel for LoRA, sharded for full fine-tuning
    on several GPUs)."""
    n = int(row.get("num_gpus") or 1)
    peft = str(row["peft"])
    runtime = str(row.get("runtime") or "pytorch")
    work = WorkloadSpec(
        # the app's task for every method (full fine-tuning included): the engine prices it as
        # training, and the row's band is the fine-tuning kind's (rank.row_band_inputs)
        task="fine-tuning",
        model=model,
        precision=str(row.get("precision") or "bf16"),
        batch_size=int(row["micro_batch"]) * n,
        seq_len=int(row["seq_len"]),
        gradient_checkpointing=row.get("checkpointing") is True,
        optimizer=str(row.get("optimizer") or "adamw"),
        peft=peft,
        lora_rank=int(row.get("lora_rank") or 64),
        # the blocks adapted where the row's trainer adapts the last ones (mlx-lm's
        # --num-layers); 0: the runtime's rule
        lora_layers=int(row.get("lora_layers") or 0),
        quantization=str(row.get("base_quant") or "none"),
        # a QLoRA row under MLX: its own affine 4-bit base (formats.runtime_bits)
        weight_bits=runtime_bits(runtime, "int4") if peft == "qlora" else None,
        efficiency=load_efficiency(data_dir),
        # the runtime the row ran (tuning rows name none: eager PyTorch)
        runtime=runtime,
        # a Megatron row's own layout (NeMo's table states TP and PP); None for the rest
        megatron=megatron_layout(row),
        # how the trainer holds its state where the row says (torchtune's single-device
        # recipes: pure bf16, optimizer in backward, a paged optimizer, a chunked loss); rows
        # that say nothing keep WorkloadSpec's defaults
        fp32_master=row.get("master_weights") != "none",
        optimizer_in_backward=row.get("optimizer_in_backward") is True,
        paged_optimizer=row.get("paged_optimizer") is True,
        loss_chunks=int(row.get("loss_chunks") or 1),
    )
    return work, perf.estimate(
        gpu,
        work,
        num_gpus=n,
        # full fine-tuning shards; a PEFT row shards where it says so (FSDP + QLoRA)
        sharded=n > 1 and (peft == "none" or row.get("sharded") is True),
        accumulation_steps=int(row.get("grad_accum") or 1),
        flash_attention=row.get("attention", "flash2") != "eager",
        # a Mac's row names its backend (mps: Metal); the rest ran CUDA
        backend=str(row.get("backend") or "cuda"),
        calibration=calibration,
    )


@dataclass
class FinetuneRow:
    method: str  # peft: lora | qlora | none (full)
    group: str  # model and method: rows differ only in the sequence length
    slug: str
    label: str
    measured: float  # tokens/s per GPU
    predicted: float


def evaluate_finetune(
    data_dir: Path, path: Path = FINETUNE_FILE, calibration: Calibration | None = None
) -> tuple[list[FinetuneRow], list[str]]:
    """Every scoreable row with its prediction, and the labels of the rows left out;
    ``calibration``: what the engine prices with (None: the priors)."""
    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    defaults = doc.get("defaults") or {}
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    out: list[FinetuneRow] = []
    skipped: list[str] = []
    for raw in doc["rows"]:
        row = {**defaults, **raw}
        label = f"{row['model']} {row['peft']} s{row['seq_len']}"
        gpu = gpus.get(row["gpu_slug"])
        if gpu is None or row["peft"] not in SCORED_PEFT:
            skipped.append(f"{row['gpu_slug']} {label}")
            continue
        tokens_per_step = int(row["micro_batch"]) * int(row["grad_accum"]) * int(row["seq_len"])
        measured = tokens_per_step / float(row["s_per_it"])
        model = decoder(doc["models"][row["model"]])
        out.append(
            FinetuneRow(
                method=str(row["peft"]),
                group=f"{row['model']} {row['peft']}",
                slug=gpu.slug,
                label=label,
                measured=measured,
                predicted=tokens_per_gpu(gpu, model, row, data_dir, calibration, finetune_job),
            )
        )
    return out, skipped


def group_spearmans(rows: list[FinetuneRow], tie: float | None = None) -> list[float]:
    """Spearman per model and method over its sequence lengths; with ``tie``, the tie-aware
    one (llm_pretrain.tie_aware_spearman)."""
    groups: dict[str, list[FinetuneRow]] = {}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    return [
        spearman(pred, meas) if tie is None else tie_aware_spearman(pred, meas, tie)
        for sub in groups.values()
        if len(sub) >= 3
        for pred, meas in [([r.predicted for r in sub], [r.measured for r in sub])]
    ]


def print_finetune(data_dir: Path, verbose: bool, path: Path = FINETUNE_FILE) -> None:
    if not path.exists():
        return
    rows, skipped = evaluate_finetune(data_dir, path)
    print_split(
        f"LLM fine-tuning, tokens/s per GPU ({path.relative_to(ROOT)})",
        rows,
        lambda r: f"peft={r.method}",
        ("per model and method (6 sequence lengths)", group_spearmans(rows)),
        skipped,
        verbose,
        label_width=28,
        tied=group_spearmans(rows, TIE_TOLERANCE),
    )


def heldout_finetune_tokens_per_gpu(
    row: dict[str, Any],
    gpu: GpuSpec,
    data_dir: Path,
    models: dict[str, dict[str, Any]],
    calibration: Calibration | None = None,
) -> tuple[float, perf.PerfEstimate, WorkloadSpec]:
    """A held-out fine-tuning row (regime llm-finetuning) in tokens/s per GPU, its estimate and
    job."""
    model = decoder(models[row["model"]])
    return heldout_tokens(row, gpu, model, data_dir, finetune_job, calibration)


def main(argv: list[str] | None = None) -> int:
    return cli(__doc__, print_finetune, argv)


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["FinetuneRow", "evaluate_finetune", "heldout_finetune_tokens_per_gpu", "score"]
