"""How well the serving model predicts published LLM serving throughput at saturation.

For each row of a validation file (tests/data/serving_*.yaml: model preset, GPU, tensor-parallel
size, weight precision, prompt/output lengths, published output tokens/s under maximum load) it
evaluates the same configuration with app/domain/serving.py — the runtime's defaults, the
engine's efficiency priors, nothing fitted to these rows — and prints the Spearman rank
correlation and the median ratio error max(p/m, m/p), over all rows and per group (dense
Hopper fp8, Blackwell fp4, mixture-of-experts).

    python benchmarks/serving_accuracy.py [-v] [--data DIR] [FILE ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import burst, efficiency, formats  # noqa: E402
from app.domain import serving as sv  # noqa: E402
from app.domain.calibration import Calibration  # noqa: E402
from app.domain.efficiency import EfficiencyTable, usable_gb  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from app.domain.serving_step import efficiencies_for  # noqa: E402
from app.domain.workload import ModelSpec  # noqa: E402
from app.recommend.presets import load_presets  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from app.shipped.rules import load_efficiency, load_length_models  # noqa: E402
from benchmarks.accuracy import median_ratio, spearman  # noqa: E402  (one scoring for every set)

DEFAULT_FILES = sorted((ROOT / "tests" / "data").glob("serving_*.yaml"))


@dataclass(frozen=True)
class Row:
    source: str
    model: str
    gpu: str
    tp: int
    precision: str
    isl: int
    osl: int
    measured: float
    predicted: float
    group: str
    concurrency: int | None = None  # a load point; None = saturation
    ttft_measured: float | None = None
    ttft_predicted: float | None = None
    arrival: str | None = None  # "burst": every request sent at once, priced by its drain

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured


@dataclass(frozen=True)
class Score:
    group: str
    n: int
    spearman: float
    median_ratio: float
    median_signed: float  # median of predicted ÷ measured (above 1 = over-predicts)


def _group(model: Any, precision: str) -> str:
    if model.experts and model.active_experts:
        return "moe"
    return "dense fp4 (Blackwell)" if precision == "fp4" else "dense fp8 (Hopper)"


# trtllm-bench's bytes per stored weight by quantisation (tensorrt_llm/bench/build/tuning.py
# BYTES_PER_ELEM: no quantisation 2, FP8 1, NVFP4 0.5)
_BENCH_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}
GIB = 1024.0**3


def trtllm_bench_settings(
    gpu: Any, model: Any, tp: int, precision: str, kv_precision: str, isl: int, osl: int
) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) ``trtllm-bench throughput`` runs a dataset with when
    neither is given, as for NVIDIA's performance overview (its commands pass neither):
    tensorrt_llm/bench/build/tuning.py calc_engine_setting/finetune_setting — the requests
    whose K/V of isl + osl tokens fit in kv_cache_free_gpu_mem_fraction (0.90, the CLI
    default) of total memory less the weights, at most 4096, rounded up; tokens per step
    that batch × (1 + isl ÷ osl) (its decodes plus the prompts that replace them), at most
    32768, rounded up; without chunked prefill (the overview enables none) at least the
    longest prompt plus the batch (tensorrt_llm/bench/benchmark/utils/general.py)."""
    per_token = (model.kv_values(1.0) or 0.0) * formats.kv_bytes(kv_precision)
    kv_heads = model.kv_heads or 1
    per_token *= max(tp, kv_heads) / kv_heads  # each GPU holds at least one KV head
    weights = model.params * _BENCH_BYTES.get(precision, 2.0) / GIB
    cache = (gpu.memory_gb * tp - weights) * 0.90
    raw_bs = min(cache / (per_token / GIB * (isl + osl)), 4096.0)
    raw_token = min(raw_bs * (1.0 + isl / osl), 32768.0)
    max_bs = _round_up(raw_bs, floor=64, steps=((256, 32), (1024, 128)), last=256)
    max_token = _round_up(raw_token, floor=2048, steps=((4096, 256), (8192, 512)), last=1024)
    return max_bs, max(max_token, isl + max_bs)


def _round_up(x: float, floor: int, steps: tuple[tuple[int, int], ...], last: int) -> int:
    """trtllm-bench's rounding: up to the step of the first range ``x`` falls below (the
    last step beyond them), never under ``floor``."""
    step = next((s for bound, s in steps if x < bound), last)
    return max(floor, step * math.ceil(x / step))


def _load_group(runtime: str, backend: str) -> str:
    """A load point's group: one per runtime and stack (vLLM's CUDA sweep and its ROCm static
    batches are different measurements of different software)."""
    stack = runtime if backend == "cuda" else f"{runtime}, {backend}"
    return f"load points ({stack})"


def _backend(gpu: GpuSpec) -> str:
    """The stack a published table ran on: CUDA on NVIDIA GPUs, else the GPU's own first
    backend (ROCm on an Instinct part), as the app's serving path takes the job's backend."""
    return "cuda" if "cuda" in gpu.backends else (gpu.backends[0] if gpu.backends else "cuda")


def runtime_of(gpu: GpuSpec, name: str, table: EfficiencyTable) -> sv.RuntimeProfile:
    """The serving runtime's defaults on ``gpu``'s stack (its decode row's span among them)."""
    backend = _backend(gpu)
    decode = table.profile(gpu, backend, name, "bf16", "decode")
    prefill = table.profile(gpu, backend, name, "bf16", "prefill")
    return sv.runtime_profile(table, name, decode, prefill)


def bench_runtime(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: sv.ServingConfig,
    table: EfficiencyTable,
    settings: str | None,
    isl: int,
    osl: int,
) -> sv.RuntimeProfile:
    """The runtime a run was measured on: its defaults on ``gpu``'s stack (``runtime_of``),
    and under ``settings: trtllm-bench`` the benchmark's own scheduler limits
    (``trtllm_bench_settings``) in place of the runtime's."""
    runtime = runtime_of(gpu, cfg.runtime, table)
    if settings != "trtllm-bench":
        return runtime
    bs, tokens = trtllm_bench_settings(
        gpu, model, cfg.gpus_per_replica, cfg.weight_precision, cfg.kv_precision, isl, osl
    )
    return dataclasses.replace(runtime, max_batch=bs, chunk_tokens=tokens)


def evaluate_one(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: sv.ServingConfig,
    isl: int,
    osl: int,
    concurrency: int | None,
    table: EfficiencyTable,
    settings: str | None = None,
    calibration: Calibration | None = None,
    cached_prompt_tokens: int = 0,
    capacity_policy: str | None = None,
) -> sv.ServingResult:
    """One published serving configuration through app/domain/serving.py, the runtime's
    defaults and the engine's priors (the held-out serving rows of benchmarks/accuracy.py are
    priced here too). ``settings: trtllm-bench``: the run's scheduler limits are the
    benchmark's own (``trtllm_bench_settings``), not the runtime's defaults.
    ``cached_prompt_tokens``: each prompt's tokens the benchmark's protocol left in the
    server's prefix cache (``cached_prompt_tokens``), held and read but not computed.
    ``capacity_policy``: the TensorRT-LLM capacity scheduler policy the run states
    (efficiency.TRTLLM_CAPACITY_POLICIES), its admission rule in place of the runtime's default."""
    mem_eff, comp = efficiencies_for(gpu, calibration)  # None: the priors
    runtime = bench_runtime(gpu, model, cfg, table, settings, isl, osl)
    if capacity_policy is not None:
        runtime = dataclasses.replace(
            runtime, kv_admission=efficiency.TRTLLM_CAPACITY_POLICIES[capacity_policy]
        )
    load = sv.ServingLoad(
        isl, osl, concurrent_requests=concurrency or 1, cached_prompt_tokens=cached_prompt_tokens
    )
    return sv.evaluate(
        gpu,
        model,
        cfg,
        load,
        runtime=runtime,
        usable_gb=usable_gb(gpu),  # the one GiB rule every task uses
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
    )


def cached_prompt_tokens(isl: int, block_tokens: int) -> int:
    """The tokens of an ``isl``-token prompt that a block-based prefix cache already holds
    when the same prompt is sent again: its whole blocks before the last token. vLLM V1
    caps a hit at the prompt less one token, "to obtain logits", and counts whole blocks
    only, so the last block is recomputed (vllm/v1/core/kv_cache_manager.py
    ``get_computed_blocks``; methodology §6.6, "A replayed prompt")."""
    if isl <= 1 or block_tokens <= 0:
        return 0
    return block_tokens * ((isl - 1) // block_tokens)


def _cached(raw: dict[str, Any], meta: dict[str, Any], isl: int) -> int:
    """A row's cached prompt tokens: its own ``cached_prompt_tokens``, else the source's
    ``cached_prompt`` protocol (``{block_tokens: B}``: every timed prompt is a replay of one
    already in the prefix cache), else none."""
    if "cached_prompt_tokens" in raw:
        return int(raw["cached_prompt_tokens"])
    replay = meta.get("cached_prompt")
    return cached_prompt_tokens(isl, int(replay["block_tokens"])) if replay else 0


BURST_DATASETS = ("sharegpt", "random", "fixed")


def evaluate_burst(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: sv.ServingConfig,
    isl: int,
    osl: int,
    num_prompts: int,
    dataset: str,
    table: EfficiencyTable,
    calibration: Calibration | None = None,
    data_dir: Path = ROOT / "data",
    settings: str | None = None,
) -> burst.Drain:
    """A run that sends its ``num_prompts`` requests at once and reports total output over the
    makespan (``vllm bench serve`` with no request rate, an offline benchmark): the burst
    drained by the runtime's scheduler (app/domain/burst.py), each step the serving model's.
    ``dataset``: "sharegpt" — lengths as vLLM's sampler draws them (data/request_lengths.yaml)
    at the run's own means ``isl``/``osl``; "random" (vLLM's random set at range ratio 0) or
    "fixed" — every request ``isl``/``osl``. ``settings: trtllm-bench``: the scheduler limits
    are the benchmark's own (``trtllm_bench_settings``)."""
    if dataset == "sharegpt":
        reqs = burst.sample(load_length_models(data_dir)["sharegpt"], num_prompts, isl, osl)
    elif dataset in ("random", "fixed"):
        reqs = burst.fixed(num_prompts, isl, osl)
    else:
        raise ValueError(f"burst dataset {dataset!r} is not one of {BURST_DATASETS}")
    mem_eff, comp = efficiencies_for(gpu, calibration)
    runtime = bench_runtime(gpu, model, cfg, table, settings, isl, osl)
    return burst.evaluate(
        gpu,
        model,
        cfg,
        reqs,
        runtime=runtime,
        usable_gb=usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
    )


def _num_prompts(raw: dict[str, Any], meta: dict[str, Any]) -> int:
    """A burst row's request count: its own ``num_prompts``, else the source's count for its
    ISL/OSL (``num_requests``: "isl/osl" → requests, as a document's table gives them)."""
    if "num_prompts" in raw:
        return int(raw["num_prompts"])
    return int(meta["num_requests"][f"{raw['isl']}/{raw['osl']}"])


def _heldout_rows(doc: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A held-out serving file (tests/data/heldout_serving_*.yaml: ``measurements``) read as
    a validation file's source and rows, so that this script scores it too."""
    rows = []
    for m in doc["measurements"]:
        if m.get("metric") != "output_tokens_per_s" or not m.get("load"):
            continue
        rows.append(
            {
                "model": m["preset"],
                "gpu": m["gpu_slug"],
                "tp": m.get("num_gpus") or 1,
                "precision": m["precision"],
                "kv_cache_precision": m["kv_cache_precision"],
                "runtime": m["runtime"],
                "isl": m["prompt_tokens"],
                "osl": m["output_tokens"],
                "output_tokens_per_s": m["value"],
                "concurrency": m.get("concurrency"),
                "arrival": m.get("arrival"),
                "dataset": m.get("dataset"),
                "num_prompts": m.get("num_prompts"),
            }
        )
    return {"runtime": None, "kv_cache_precision": None}, rows


def row_config(raw: dict[str, Any], meta: dict[str, Any]) -> sv.ServingConfig:
    """One replica of a measured row's tensor-parallel size, formats and runtime (the file's
    ``source`` block gives what a row leaves out)."""
    return sv.ServingConfig(
        gpus_per_replica=int(raw["tp"]),
        replicas=1,
        weight_precision=raw["precision"],
        kv_precision=raw.get("kv_cache_precision", meta["kv_cache_precision"]),
        runtime=raw.get("runtime", meta["runtime"]),
    )


def predict(data_dir: Path, files: list[Path]) -> list[Row]:
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    presets = load_presets(data_dir)
    table = load_efficiency(data_dir)
    rows: list[Row] = []
    for path in files:
        doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
        meta, raws = _heldout_rows(doc) if "measurements" in doc else (doc["source"], doc["rows"])
        for raw in raws:
            gpu = gpus[raw["gpu"]]
            model = presets[raw["model"]].model
            cfg = row_config(raw, meta)
            conc = raw.get("concurrency")
            isl = int(raw["isl"])
            res = evaluate_one(
                gpu, model, cfg, isl, int(raw["osl"]), conc, table, meta.get("settings"),
                cached_prompt_tokens=_cached(raw, meta, isl),
                capacity_policy=raw.get("capacity_policy", meta.get("capacity_policy")),
            )  # fmt: skip
            arrival = raw.get("arrival", meta.get("arrival"))
            predicted = (res.output_tokens_per_s or 0.0) if conc else res.max_output_tokens_per_s
            if arrival == "burst" and res.fits and not conc:
                predicted = evaluate_burst(
                    gpu, model, cfg, int(raw["isl"]), int(raw["osl"]), _num_prompts(raw, meta),
                    str(raw.get("dataset") or meta.get("dataset")), table, data_dir=data_dir,
                    settings=meta.get("settings"),
                ).mean_output_tokens_per_s  # fmt: skip
            rows.append(
                Row(
                    source=path.name,
                    model=raw["model"],
                    gpu=raw["gpu"],
                    tp=cfg.gpus_per_replica,
                    precision=cfg.weight_precision,
                    isl=int(raw["isl"]),
                    osl=int(raw["osl"]),
                    measured=float(raw["output_tokens_per_s"]),
                    predicted=predicted,
                    group=_load_group(cfg.runtime, _backend(gpu))
                    if conc
                    else _group(model, cfg.weight_precision),
                    concurrency=int(conc) if conc else None,
                    ttft_measured=raw.get("ttft_ms"),
                    ttft_predicted=res.ttft_ms if conc else None,
                    arrival=arrival,
                )
            )
    return rows


def score(rows: list[Row]) -> list[Score]:
    rows = [r for r in rows if r.predicted > 0]  # a configuration the engine rejects: listed
    groups: dict[str, list[Row]] = {"all saturation": [r for r in rows if r.concurrency is None]}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    out = []
    for name, rs in groups.items():
        if not rs:  # a file of load points alone has no saturation row
            continue
        pred = [r.predicted / r.tp for r in rs]  # per GPU, so TP sizes compare
        meas = [r.measured / r.tp for r in rs]
        out.append(
            Score(
                group=name,
                n=len(rs),
                spearman=spearman(pred, meas),
                median_ratio=median_ratio(pred, meas),
                median_signed=statistics.median(r.ratio for r in rs),
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    rows = predict(args.data, args.files)
    if args.verbose:
        for r in rows:
            at = f" C={r.concurrency}" if r.concurrency else " burst" if r.arrival else " sat"
            ttft = (
                f"  TTFT {r.ttft_predicted:,.0f} vs {r.ttft_measured:,.0f} ms"
                if r.ttft_predicted is not None and r.ttft_measured is not None
                else ""
            )
            print(
                f"{r.model:16s} {r.gpu:9s} TP{r.tp} {r.precision:4s} {r.isl:>6}/{r.osl:<5}{at:6s} "
                f"measured {r.measured:>9,.0f} predicted {r.predicted:>9,.0f} ×{r.ratio:4.2f}{ttft}"
            )
    print("output tokens/s per GPU (at saturation, or at a load point), predicted vs published")
    for s in score(rows):
        print(
            f"  {s.group:24s} n={s.n:3d}  Spearman {s.spearman:5.2f}  median ratio error "
            f"{s.median_ratio:4.2f}×  median predicted/measured {s.median_signed:4.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
