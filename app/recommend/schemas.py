"""The recommendation contract: request and response models of /api/v1/recommendations,
/api/v1/estimate and /api/v1/workloads. Field names are public API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.vocab import (
    Acquisition,
    Family,
    Framework,
    Objective,
    Optimizer,
    Peft,
    Precision,
    Task,
)
from app.vocab import Segment as SegmentName
from app.vocab import Vendor as VendorName

__all__ = [
    "Acquisition", "Family", "Framework", "Objective", "Optimizer", "Peft", "Precision",
    "SegmentName", "Task", "VendorName",
]  # fmt: skip

MAX_PARAMS = 1e13  # 10 trillion: beyond any published dense or MoE model by a wide margin
MAX_SEQ = 1 << 21  # 2M tokens


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelIn(_In):
    family: Family | None = None
    params: float | None = Field(default=None, gt=0, le=MAX_PARAMS)
    layers: int | None = Field(default=None, ge=1, le=1000)
    hidden_size: int | None = Field(default=None, ge=1, le=200_000)
    num_heads: int | None = Field(default=None, ge=1, le=1024)
    num_kv_heads: int | None = Field(default=None, ge=1, le=1024)
    intermediate_size: int | None = Field(default=None, ge=1, le=1_000_000)
    vocab_size: int | None = Field(default=None, ge=1, le=10_000_000)
    max_context: int | None = Field(default=None, ge=1, le=MAX_SEQ)
    gflops_per_sample: float | None = Field(default=None, gt=0, le=1e7)
    input_size: float | None = Field(default=None, gt=0, le=16384)
    experts: int | None = Field(default=None, ge=1, le=4096)
    active_experts: int | None = Field(default=None, ge=1, le=4096)
    active_params: float | None = Field(default=None, gt=0, le=MAX_PARAMS)
    activation_mb_per_sample: float | None = Field(default=None, gt=0, le=1e6)
    passes_per_sample: int | None = Field(
        default=None, ge=1, le=10_000, description="network passes per sample (diffusion steps × 2)"
    )


class WorkloadIn(_In):
    preset: str | None = Field(default=None, max_length=100)
    task: Task | None = None
    model: ModelIn | None = None
    precision: Precision | None = None
    batch_size: int | None = Field(default=None, ge=1, le=1 << 20)
    seq_len: int | None = Field(default=None, ge=1, le=MAX_SEQ)
    output_tokens: int | None = Field(default=None, ge=1, le=MAX_SEQ)
    optimizer: Optimizer | None = None
    peft: Peft | None = None
    lora_rank: int | None = Field(default=None, ge=1, le=4096)
    gradient_checkpointing: bool | None = None
    dataset_samples: float | None = Field(default=None, gt=0, le=1e13)
    epochs: float | None = Field(default=None, gt=0, le=1e5)
    latency_target_ms: float | None = Field(default=None, gt=0, le=3.6e6)
    allow_tf32_matmul: bool | None = None


class ConstraintsIn(_In):
    framework: Framework = "pytorch"
    max_purchase_usd: float | None = Field(default=None, ge=0, le=1e9)
    max_hourly_usd: float | None = Field(default=None, ge=0, le=1e6)
    max_job_cost_usd: float | None = Field(default=None, ge=0, le=1e10)
    acquisition: Acquisition = "either"
    vendors: list[VendorName] | None = Field(default=None, max_length=10)
    segments: list[SegmentName] | None = Field(default=None, max_length=10)
    max_gpus: int = Field(default=8, ge=1, le=64)
    electricity_usd_per_kwh: float | None = Field(default=None, ge=0, le=10)


class RecommendationRequest(_In):
    workload: WorkloadIn
    constraints: ConstraintsIn = Field(default_factory=ConstraintsIn)
    objective: Objective = "balanced"
    limit: int = Field(default=10, ge=1, le=500)
    device_report_id: str | int | None = None
    what_if: bool = Field(
        default=False,
        description="Also rank a few variations of the job (batch, precision, PEFT, "
        "checkpointing, objective) and say what each changes.",
    )


class EstimateRequest(_In):
    workload: WorkloadIn
    gpu: str = Field(min_length=1, max_length=100, description="catalog slug")
    num_gpus: int | None = Field(default=None, ge=1, le=64)
    constraints: ConstraintsIn = Field(default_factory=ConstraintsIn)


# ---------------------------------------------------------------- responses


class ModelOut(BaseModel):
    family: str
    params: float
    layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_context: int | None = None
    gflops_per_sample: float | None = None
    input_size: float | None = None
    experts: int | None = None
    active_experts: int | None = None
    active_params: float | None = None
    activation_mb_per_sample: float | None = None
    passes_per_sample: int | None = None


class ResolvedWorkload(BaseModel):
    preset: str | None
    task: Task
    model: ModelOut
    precision: Precision
    batch_size: int
    seq_len: int | None
    output_tokens: int | None
    optimizer: Optimizer | None
    peft: Peft
    lora_rank: int | None
    gradient_checkpointing: bool
    dataset_samples: float | None
    epochs: float | None
    latency_target_ms: float | None
    allow_tf32_matmul: bool


class MemoryOut(BaseModel):
    required_gb: float
    available_gb: float | None = None
    headroom_gb: float | None = None
    num_gpus: int = 1
    breakdown: dict[str, float]
    notes: list[str] = []


class RankedGpu(BaseModel):
    """The GPU of a ranked row: the catalog's GpuOut, shortened to what a row needs."""

    slug: str
    name: str
    vendor: str
    architecture: str
    segment: str
    memory_gb: float
    memory_bandwidth_gbs: float
    tdp_w: float | None = None
    compute_capability: str | None = None
    interconnect: str | None = None
    purchase_usd: float | None = None
    hourly_usd: float | None = None


GpuOut = RankedGpu  # the name this model had before; OpenAPI shows RankedGpu


class ThroughputOut(BaseModel):
    value: float
    unit: str
    per_gpu: float
    compute_precision: str


class CostOut(BaseModel):
    purchase_usd: float | None
    purchase_as_of: str | None = None
    hourly_usd: float | None
    hourly_as_of: str | None = None
    hourly_provider: str | None = None
    power_w: float | None
    energy_usd_per_hour: float | None
    rent_to_finish_usd: float | None
    energy_to_finish_usd: float | None
    buy_to_finish_usd: float | None
    job_cost_usd: float | None
    break_even_hours: float | None
    samples_per_usd_rent: float | None
    samples_per_usd_buy: float | None


class UncertaintyOut(BaseModel):
    low: float
    high: float
    factor_low: float
    factor_high: float
    basis: str


class TimingOut(BaseModel):
    step_time_s: float
    compute_s: float
    memory_s: float
    overhead_s: float
    host_transfer_s: float
    interconnect_s: float
    scaling_efficiency: float


class Recommendation(BaseModel):
    rank: int
    gpu: GpuOut
    num_gpus: int
    fits: bool
    precision: Precision
    framework_status: str
    memory: MemoryOut
    throughput: ThroughputOut
    latency_ms: float | None = None
    time_to_first_token_ms: float | None = None
    ms_per_output_token: float | None = None
    meets_latency_target: bool | None = None
    time_to_finish_h: float | None = None
    bottleneck: Literal["compute", "memory bandwidth", "host transfer", "interconnect"]
    timing: TimingOut
    cost: CostOut
    score: float
    uncertainty: UncertaintyOut
    provenance: dict[str, str]
    explanation: list[str]
    tips: list[str]
    warnings: list[str] = []
    speedup_vs_baseline: float | None = None


ExclusionCode = Literal[
    "does_not_fit",
    "precision_unsupported",
    "framework_unsupported",
    "over_budget",
    "filtered_out",
    "no_price",
    "no_figures",
]


class Excluded(BaseModel):
    slug: str
    name: str
    code: ExclusionCode
    reason: str


class BaselineOut(BaseModel):
    slug: str
    name: str
    throughput: float | None
    unit: str | None
    calibrated: bool
    source: str | None = None
    note: str | None = None
    tips: list[str] = Field(
        default_factory=list, description="What the device report measured, in plain words"
    )


class RecommendationResponse(BaseModel):
    workload: ResolvedWorkload
    memory: MemoryOut
    objective: Objective
    acquisition: Acquisition
    framework: Framework
    count: int
    recommendations: list[Recommendation]
    excluded: list[Excluded]
    baseline: BaselineOut | None = None
    warnings: list[str] = []
    what_if: list[WhatIfOut] | None = None


class WhatIfOut(BaseModel):
    """The same request with one thing changed, and what it does to the answer."""

    change: str
    top_slug: str | None
    top_name: str | None
    num_gpus: int | None
    throughput: float | None
    unit: str | None
    required_gb: float = Field(description="memory needed on one GPU, before sharding")
    can_run: int = Field(description="how many catalog GPUs can run the changed job")
    same_top: bool


class EstimateResponse(BaseModel):
    workload: ResolvedWorkload
    gpu: GpuOut
    result: Recommendation | None
    excluded: Excluded | None = None
    warnings: list[str] = []


class WorkloadPresetOut(BaseModel):
    id: str
    name: str
    description: str
    model: ModelOut
    defaults: dict[str, Any]
    sources: list[str]
    references: dict[str, dict[str, Any]] = {}
    notes: str | None = None


class WorkloadList(BaseModel):
    workloads: list[WorkloadPresetOut]
    count: int
