"""An inference job over a large stated dataset with no batch says the assumed batch and that an
offline job runs batched (the batch-inference review: 10 M prompts priced at batch 1 without a
word, 802 days)."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend.workloads import OFFLINE_SAMPLES, resolve_workload


def _warnings(**kw: object) -> tuple[int, list[str]]:
    w = s.WorkloadIn.model_validate({"preset": "llama-3.1-8b", "task": "inference", **kw})
    work, warnings = resolve_workload(w)
    return work.batch_size, [x for x in warnings if x.startswith("batch_size not given")]


def test_large_dataset_without_batch_warns() -> None:
    batch, said = _warnings(dataset_samples=10_000_000, runtime="vllm")
    assert batch == 1
    assert len(said) == 1 and "10,000,000 samples" in said[0] and "max_num_seqs" in said[0]


def test_small_dataset_or_stated_batch_is_quiet() -> None:
    assert _warnings(dataset_samples=OFFLINE_SAMPLES - 1)[1] == []
    assert _warnings(dataset_samples=10_000_000, batch_size=64)[1] == []
    assert _warnings()[1] == []


def test_other_runtimes_name_the_per_process_batch() -> None:
    _, said = _warnings(dataset_samples=10_000_000, runtime="transformers")
    assert len(said) == 1 and "per process" in said[0] and "max_num_seqs" not in said[0]
