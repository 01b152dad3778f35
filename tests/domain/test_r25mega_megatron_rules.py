"""A pretraining expert's review of the Megatron answers (round 25): layouts Megatron-LM refuses
at start-up, counts that are not powers of two, the memory of a layout the engine picks, a
micro-batch that changes the global batch, TP across servers, and the ROOM margin in words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain import megatron
from app.domain.megatron import MegatronLayout
from app.domain.units import gib
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.workloads import resolve_workload
from app.shipped.rules import load_rules
from tests.domain.fixtures import H100, LLAMA3_70B

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
RULES = load_rules(DATA)

PRETRAIN = {
    "preset": "llama-3-70b",
    "task": "training",
    "precision": "bf16",
    "seq_len": 8192,
    "gradient_checkpointing": True,
    "runtime": "megatron",
    "batch_size": 512,
}


def _ctx(workload: dict[str, Any], **constraints: Any) -> ev.Context:
    req = s.RecommendationRequest.model_validate(
        {"workload": workload, "constraints": constraints, "objective": "fastest"}
    )
    work, _ = resolve_workload(req.workload)
    return service._context(work, req, "fastest", RULES, None)


# ---------------------------------------------------------------- 1. Megatron's own rules


@pytest.mark.parametrize(
    ("layout", "dim", "said"),
    [
        # 80 layers over 4 stages are 20 a stage, which 3 virtual stages do not split
        (MegatronLayout(tp=8, pp=4, vp=3), "virtual_stages", "20 layers of each pipeline"),
        (MegatronLayout(tp=8, pp=32), "pipeline_parallel", "number of layers (80)"),
        (MegatronLayout(tp=8, pp=3), "pipeline_parallel", "arguments.py"),
        (MegatronLayout(tp=3), "tensor_parallel", "num_attention_heads (64)"),
        # 64 heads split 16 ways, but the 8 KV groups do not
        (MegatronLayout(tp=16), "tensor_parallel", "num_query_groups (8"),
        (MegatronLayout(tp=8, cp=3), "context_parallel", "2 × context_parallel_size = 6"),
    ],
)
def test_layouts_megatron_refuses_are_named(layout: MegatronLayout, dim: str, said: str) -> None:
    bad = megatron.layout_error(LLAMA3_70B, 8192, layout)
    assert bad is not None and bad.dim == dim
    assert said in bad.reason
    assert "megatron/" in bad.reason  # the rule's source in Megatron-LM


@pytest.mark.parametrize(
    "layout",
    [
        MegatronLayout(tp=8, pp=2),
        MegatronLayout(tp=8, pp=4, vp=5),  # 20 layers a stage, 4 a virtual stage
        MegatronLayout(tp=4, pp=5),  # uneven powers are fine where they divide
        MegatronLayout(tp=8, cp=4),  # 8192 = 8 chunks of 1024
    ],
)
def test_layouts_megatron_runs_pass(layout: MegatronLayout) -> None:
    assert megatron.layout_error(LLAMA3_70B, 8192, layout) is None


@pytest.mark.parametrize(
    ("layout", "field"),
    [
        ({"tensor_parallel": 8, "pipeline_parallel": 4, "virtual_stages": 3}, "virtual_stages"),
        ({"tensor_parallel": 8, "pipeline_parallel": 32}, "pipeline_parallel"),
        ({"tensor_parallel": 3}, "tensor_parallel"),
        ({"tensor_parallel": 16}, "tensor_parallel"),
        ({"tensor_parallel": 8, "context_parallel": 3}, "context_parallel"),
    ],
)
def test_the_request_is_refused_naming_the_field(layout: dict[str, int], field: str) -> None:
    w = s.WorkloadIn.model_validate({**PRETRAIN, "megatron_layout": layout})
    with pytest.raises(InvalidInput) as err:
        resolve_workload(w)
    assert err.value.field == f"workload.megatron_layout.{field}"


# ---------------------------------------------------------------- 2. the count asked


def test_a_stated_layout_is_sized_at_the_count_asked_not_a_power_of_two() -> None:
    """Llama 70B at TP8 on 24 GPUs: the refusal had sized and named 16 GPUs."""
    ctx = _ctx({**PRETRAIN, "megatron_layout": {"tensor_parallel": 8}}, num_gpus=24)
    out = ev.plan(GPUS["a100-pcie-40gb"], ctx)
    assert isinstance(out, ev.Exclusion) and out.code == "does_not_fit"
    assert "on 24 GPUs" in out.reason, out.reason


def test_a_layout_that_divides_the_count_asked_is_planned_there() -> None:
    """TP8 holds the job on 24 B200s (3 replicas): planned at 24, the count asked."""
    ctx = _ctx({**PRETRAIN, "megatron_layout": {"tensor_parallel": 8}}, num_gpus=24)
    out = ev.plan(GPUS["b200"], ctx)
    assert isinstance(out, list) and out
    assert {c.num_gpus for c in out} == {24}


# ---------------------------------------------------------------- 3. the chosen layout's memory


def test_a_layout_the_engine_picks_reports_that_layouts_memory() -> None:
    """No layout stated: the row's memory was the FSDP job's (weights 2.1 GB, logits 58.8 GB
    on 64 GPUs), not its TP × PP layout's."""
    ctx = _ctx(PRETRAIN, num_gpus=64)
    gpu = GPUS["h100-sxm"]
    planned = ev.plan(gpu, ctx)
    assert isinstance(planned, list) and planned
    r = ev.evaluate(planned[0], ctx)
    assert r.ok and r.work is not None and r.memory is not None and r.perf is not None
    lay = r.work.megatron
    assert lay is not None and lay.model_parallel > 1
    assert f"TP{lay.tp} PP{lay.pp}" in r.perf.parallelism
    g = r.config.variant[0] if r.config.variant else None
    assert g is not None and g.backend is not None
    own = memory_breakdown(
        r.work, num_gpus=64, backend=g.backend, flash_attention=g.flash_attention
    )
    assert r.memory.weights == pytest.approx(own.weights)
    assert r.memory.gradients == pytest.approx(own.gradients)
    assert r.memory.logits == pytest.approx(own.logits)
    # Megatron's 16-bit weights split over TP × PP only: 70.6 B × 2 bytes / (tp · pp), the
    # first stage's embedding on top
    assert r.memory.weights >= 70.6e9 * 2 / (lay.tp * lay.pp) / 1024**3 * 0.9
    assert r.memory.total <= r.available_gb


# ---------------------------------------------------------------- 4. the global batch kept


def test_the_largest_micro_batch_that_keeps_the_global_batch() -> None:
    # 480 on 48 GPUs: 60 is 2 a GPU × 8 steps = 768 a step; 48 is 1 a GPU × 10 steps
    assert ev._keeping_micro(480, 48, 60) == 48
    assert ev._keeping_micro(480, 48, 240) == 240
    assert ev._keeping_micro(480, 48, 120) == 96
    assert ev._keeping_micro(512, 64, 256) == 256
    # 480 on 64 GPUs: no micro-batch keeps it, the one asked stays
    assert ev._keeping_micro(480, 64, 240) == 240


def test_the_plan_keeps_the_global_batch_where_a_micro_batch_can() -> None:
    """Llama 3 8B, batch 480 on 48 GPUs: the B200 row ran micro-batch 60, 768 a step."""
    ctx = _ctx({"preset": "llama-3-8b", "task": "training", "batch_size": 480}, num_gpus=48)
    for slug in ("b200", "h100-sxm", "h200-sxm"):
        planned = ev.plan(GPUS[slug], ctx)
        assert isinstance(planned, list) and planned
        for c in planned:
            if c.micro_batch is not None:
                assert c.micro_batch % 48 == 0 and 480 % c.micro_batch == 0, (slug, c)
            r = ev.evaluate(c, ctx)
            assert not any("not 480" in w for w in r.warnings), (slug, r.warnings)


def test_a_megatron_row_says_megatrons_rule_not_hugging_faces() -> None:
    work = WorkloadSpec(
        task="training", model=LLAMA3_70B, batch_size=64, seq_len=8192, runtime="megatron"
    )
    lay = MegatronLayout(tp=4)
    # 512 over DP 12 (48 GPUs at TP4) is no whole number of samples per replica
    said = ev._uneven_split(work, 48, 512, lay)
    assert said is not None and "per_device_train_batch_size" not in said
    assert "num_microbatches_calculator" in said and "504 or 516" in said
    # 480 over DP 12 is 40 a replica: nothing to say
    assert ev._uneven_split(work, 48, 480, lay) is None


# ---------------------------------------------------------------- 5. TP across servers


def test_tensor_parallel_past_a_server_is_said() -> None:
    wide = megatron.tp_across_nodes(H100, MegatronLayout(tp=16))
    assert wide is not None and "spans 2 servers" in wide and "Narayanan" in wide
    assert megatron.tp_across_nodes(H100, MegatronLayout(tp=8, pp=4)) is None


# ---------------------------------------------------------------- 6. the ROOM margin in words


def test_a_refusal_inside_the_usable_memory_names_the_margin() -> None:
    usable = 8.0
    said = ev._room_margin(usable, 7.8)
    assert f"the {gib(usable * (1 - ev.ROOM))} GiB the engine leaves room for" in said
    assert f"{gib(usable)} GiB usable" in said and f"{ev.ROOM:.0%}" in said
    assert ev._room_margin(usable, 7.5) == ""  # within the margin: not the reason
    assert ev._room_margin(usable, 8.2) == ""  # over the usable memory: said as before


def test_the_qlora_refusal_on_an_8_gb_card_says_the_margin() -> None:
    req = s.EstimateRequest.model_validate(
        {
            "workload": {
                "preset": "llama-3.1-8b",
                "task": "fine-tuning",
                "peft": "qlora",
                "seq_len": 512,
                "batch_size": 8,
            },
            "gpu": "rtx-4060",
            "num_gpus": 1,
        }
    )
    out = service.estimate(req, GPUS["rtx-4060"], RULES)
    assert out.excluded is not None
    reason = out.excluded.reason
    assert "leaves room for" in reason and "8 GiB usable" in reason, reason
