"""llama.cpp's layer split puts a whole layer more on its first GPU, and a pipelined prompt moves
at that GPU's pace (llm_step.busiest_stage_share, pipeline_passes' ``share``; data/efficiency.yaml
llamacpp-layer-assignment): load_tensors places the split points over n_layer + 1 units, the
output layer counted as the last, so 32 layers on 8 GPUs run 5, 4, 4, 4, 4, 4, 4, 3."""

from __future__ import annotations

import bisect
import dataclasses
import random

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA3_8B, RTX4090

COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
SPLIT = RuntimeProfile(
    kernel_us=2.0, span="layers", microbatch_tokens=512, handoff_bytes=4.0, microbatch_copies=4
)
LLAMA = dataclasses.replace(SPLIT, split_output_unit=True)


def _llama_cpp_counts(n_layer: int, devices: int) -> list[int]:
    """Repeating layers per device as llama.cpp's load_tensors assigns them on equal cards
    (-ngl 99): float split points from the cumulative free memory, std::upper_bound of
    float(il) / act_gpu_layers with act_gpu_layers = n_layer + 1."""
    free = np.float32(47.5e9)
    cum = np.cumsum(np.full(devices, free, np.float32), dtype=np.float32)
    splits = (cum / cum[-1]).astype(np.float32).tolist()
    counts = [0] * devices
    act = n_layer + 1
    for il in range(n_layer):
        x = float(np.float32(il) / np.float32(act))
        counts[bisect.bisect_right(splits, x)] += 1
    return counts


@pytest.mark.parametrize("layers", [22, 28, 32, 40, 48, 60, 64, 80, 126])
@pytest.mark.parametrize("stages", [2, 3, 4, 5, 6, 7, 8])
def test_the_busiest_gpu_holds_what_load_tensors_gives_it(layers, stages):
    counts = _llama_cpp_counts(layers, stages)
    assert sum(counts) == layers
    share = llm_step.busiest_stage_share(layers, stages, output_unit=True)
    assert share * layers == pytest.approx(max(counts))


def test_thirty_two_layers_run_nine_on_the_first_of_four_and_five_on_the_first_of_eight():
    assert _llama_cpp_counts(32, 4) == [9, 8, 8, 7]
    assert _llama_cpp_counts(32, 8) == [5, 4, 4, 4, 4, 4, 4, 3]
    assert llm_step.busiest_stage_share(32, 4, True) == 9 / 32
    assert llm_step.busiest_stage_share(32, 8, True) == 5 / 32
    assert llm_step.busiest_stage_share(80, 4, True) == 21 / 80
    # split points over the layers alone: an even share where the count divides
    assert llm_step.busiest_stage_share(32, 4, False) == 8 / 32
    assert llm_step.busiest_stage_share(32, 1, True) == 0.0


def _schedule(times: list[float], u: int, copies: int) -> float:
    """Time to the last micro-batch's end, event by event as ggml_backend_sched runs it (the
    host submits micro-batch j to stage s once j − copies has left stage s; a stage runs one
    micro-batch at a time, in order), for stages of any length."""
    done: dict[tuple[int, int], float] = {}
    host = 0.0
    for j in range(u):
        for s, t in enumerate(times):
            if copies and j >= copies:
                host = max(host, done[(j - copies, s)])
            start = max(host, done.get((j, s - 1), 0.0), done.get((j - 1, s), 0.0))
            done[(j, s)] = start + t
    return done[(u - 1, len(times) - 1)]


def test_unequal_stages_follow_the_schedule_the_scheduler_runs():
    rng = random.Random(37)
    for _ in range(400):
        stages = rng.randint(2, 10)
        raw = [rng.uniform(0.05, 1.0) for _ in range(stages)]
        times = [t / sum(raw) for t in raw]
        copies, u = rng.choice([0, 1, 2, 4]), rng.randint(1, 40)
        want = _schedule(times, u, copies)
        got = llm_step.pipeline_passes(u, stages, copies, max(times))
        assert got == pytest.approx(want, rel=1e-12)
        arr = llm_step.pipeline_passes_array(
            np.array([float(u)]),
            np.array([float(stages)]),
            np.array([float(copies)]),
            np.array([max(times)]),
        )
        assert arr[0] == pytest.approx(want, rel=1e-12)


def test_an_even_share_is_the_balanced_pipeline():
    for stages in (2, 4, 8):
        for u in (1, 2, 4, 16):
            for copies in (0, 4):
                even = llm_step.pipeline_passes(u, stages, copies)
                assert llm_step.pipeline_passes(u, stages, copies, 1 / stages) == pytest.approx(
                    even
                )


def test_llama_cpp_counts_the_output_layer_and_accelerate_does_not():
    table = load_efficiency()
    assert table.runtime_value("llama.cpp", "split_output_unit") is True
    assert not table.runtime_value("transformers", "split_output_unit")


def _replica(prof: RuntimeProfile, n: int) -> llm_step.Replica:
    return llm_step.replica(
        RTX4090, LLAMA3_8B, weights="bf16", kv="bf16", n=n, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_pipelined_prompt_waits_on_the_fullest_gpu_and_one_micro_batch_does_not():
    even8, llama8 = _replica(SPLIT, 8), _replica(LLAMA, 8)
    assert even8.stage_share == 4 / 32 and llama8.stage_share == 5 / 32
    assert _replica(LLAMA, 1).stage_share == 0.0
    # 2048 tokens = 4 micro-batches: 1 + 3 × 5/32 passes, not 1 + 3 × 4/32
    prompt = (0.0, 0.0, 2048.0, 2048.0)
    beside = llama8.comm(2048.0) + llama8.sampler_s
    slow = (llama8.parts(*prompt).gpu_s - beside) / (even8.parts(*prompt).gpu_s - beside)
    assert slow == pytest.approx((1 + 3 * 5 / 32) / (1 + 3 * 4 / 32), rel=1e-9)
    # pp512 and a decode token pass every layer once, whatever the split
    for step in ((0.0, 0.0, 512.0, 512.0), (1.0, 512.0, 0.0, 0.0)):
        assert llama8.parts(*step).seconds == pytest.approx(even8.parts(*step).seconds)


def test_the_array_path_prices_the_fullest_gpu_as_the_replica_does():
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    card = llm_step.card_terms(
        RTX4090, weights="bf16", decode=LLAMA, prefill=LLAMA, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    counts = np.array([8.0, 4.0, 1.0])
    cols = llm_step.dense_columns(
        job, llm_step.card_rows([card]), np.zeros(3, np.intp), counts,
        gpus=[RTX4090] * 3,
    )  # fmt: skip
    assert cols.stage_share.tolist() == [5 / 32, 9 / 32, 0.0]
    got = cols.seconds(0.0, 0.0, 4096.0, 4096.0)
    for i, n in enumerate((8, 4, 1)):
        want = _replica(LLAMA, n).parts(0.0, 0.0, 4096.0, 4096.0).seconds
        assert got[i] == pytest.approx(want, rel=1e-9)
