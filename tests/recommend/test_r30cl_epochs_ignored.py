"""r30 review (a researcher asking ResNet-50 inference with "epochs": 90): epochs without a
dataset to pass over changes nothing, and is now said to be ignored rather than dropped
without a word."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

IGNORED = "epochs counts passes over dataset_samples"


def _warnings(**workload: object) -> list[str]:
    return resolve_workload(s.WorkloadIn(**workload))[1]


def test_epochs_without_a_dataset_is_said_to_be_ignored() -> None:
    assert any(IGNORED in w for w in _warnings(preset="resnet-50", task="inference", epochs=90))


def test_epochs_with_a_dataset_is_used_not_warned() -> None:
    work, warnings = resolve_workload(
        s.WorkloadIn(preset="resnet-50", task="inference", epochs=3, dataset_samples=1000)
    )
    assert work.epochs == 3 and not any(IGNORED in w for w in warnings)
    # training takes the preset's dataset (ImageNet), so its epochs count
    assert not any(IGNORED in w for w in _warnings(preset="resnet-50", epochs=90))
