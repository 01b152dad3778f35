"""Published peak GPU memory of training and fine-tuning runs against the engine.

Reads tests/data/training_peak_memory.yaml (each row's job, its measured peak, the unit and
the counter it was read from) and prints, per row, the engine's total (what the device holds:
tensors, the allocator's slack and the CUDA context — what ``nvidia-smi``/NVML counts) and its
``tensors`` (what ``torch.cuda.max_memory_allocated`` counts) against the measured figure. A row
read from NVML is held to the total; a row whose counter is not recorded is in range when either
reading is within 10 %. Rows the engine cannot express (``modelled: false``) are printed, not
held. No torch needed.

    python benchmarks/peak_memory.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown  # noqa: E402

FILE = ROOT / "tests" / "data" / "training_peak_memory.yaml"
UNIT_BYTES = {"GB": 1e9, "G": 1e9, "GiB": float(1 << 30), "MiB": float(1 << 20)}
TOLERANCE = 0.10


@dataclass(frozen=True)
class Scored:
    label: str
    measured_gb: float  # decimal GB
    total_gb: float
    tensors_gb: float
    counter: str
    modelled: bool

    @property
    def total_error(self) -> float:
        return self.total_gb / self.measured_gb - 1.0

    @property
    def tensors_error(self) -> float:
        return self.tensors_gb / self.measured_gb - 1.0

    @property
    def error(self) -> float:
        """The error the row is held to: the total for NVML; the nearer of the two readings
        where the counter is not recorded."""
        if self.counter == "nvml":
            return self.total_error
        return min(self.total_error, self.tensors_error, key=abs)

    @property
    def within(self) -> bool:
        return abs(self.error) <= TOLERANCE


def load_rows(path: Path = FILE) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text())
    defaults = data.get("defaults", {})
    models = data["models"]
    rows = []
    for raw in data["rows"]:
        row = {**defaults, **raw}
        shape = dict(models[row["model"]])
        shape["params"] = float(shape["params"])  # YAML 1.1 reads 6.74e9 as a string
        row["model_spec"] = ModelSpec(**shape)
        rows.append(row)
    return rows


def workload(row: dict[str, Any]) -> WorkloadSpec:
    return WorkloadSpec(
        task=row["task"],
        model=row["model_spec"],
        precision=row["precision"],
        batch_size=int(row["batch_size"]),
        seq_len=int(row["seq_len"]),
        optimizer=row["optimizer"],
        peft=row["peft"],
        lora_rank=int(row["lora_rank"]),
        gradient_checkpointing=bool(row["checkpointing"]),
        torch_version=str(row.get("torch_version") or ""),
        accumulates=int(row["grad_accum"]) > 1,
    )


def score(row: dict[str, Any]) -> Scored:
    mem = memory_breakdown(workload(row), flash_attention=row["attention"] != "eager")
    measured = float(row["measured_gb"]) * UNIT_BYTES[row["unit"]] / 1e9
    peft = "" if row["peft"] == "none" else f" {row['peft']} r{row['lora_rank']}"
    extra = " ckpt" if row["checkpointing"] else ""
    if int(row["grad_accum"]) > 1:
        extra += f" ga{row['grad_accum']}"
    if row["optimizer"] != "adamw":
        extra += f" {row['optimizer']}"
    label = (
        f"{row['source']}: {row['model']} {row['precision']}{peft}{extra}"
        f" {row['batch_size']}x{row['seq_len']}"
    )
    return Scored(
        label=label,
        measured_gb=measured,
        total_gb=mem.total,
        tensors_gb=mem.tensors,
        counter=str(row["counter"]),
        modelled=bool(row.get("modelled", True)),
    )


def evaluate(path: Path = FILE) -> list[Scored]:
    return [score(row) for row in load_rows(path)]


def report(scored: list[Scored]) -> str:
    lines = [
        f"{'published run':52} {'measured':>8} {'total':>7} {'err':>7} {'tensors':>7} {'err':>7}"
    ]
    for s in scored:
        flag = "" if s.modelled else "  (not modelled)"
        if s.modelled and not s.within:
            flag = "  OUT"
        lines.append(
            f"{s.label:52} {s.measured_gb:7.2f}G {s.total_gb:6.2f}G {s.total_error:+7.1%}"
            f" {s.tensors_gb:6.2f}G {s.tensors_error:+7.1%}  [{s.counter}]{flag}"
        )
    held = [s for s in scored if s.modelled]
    inside = sum(s.within for s in held)
    worst = max((abs(s.error) for s in held), default=0.0)
    lines.append(
        f"modelled rows within {TOLERANCE:.0%}: {inside} of {len(held)};"
        f" largest held error {worst:.1%}"
    )
    return "\n".join(lines)


def main() -> int:
    print(report(evaluate()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
