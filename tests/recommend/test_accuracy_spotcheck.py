"""The 2026-12 spot-check set (tests/data/heldout_spotcheck_2026_12.yaml): timm's published
benchmark CSVs, kept out of all tuning and reported on their own (issue 21).

42 rows read from huggingface/pytorch-image-models results/ at pinned commits: eager inference
(AMP, NCHW, batch 1024) on the RTX 5090 and 4090 (PyTorch 2.9.1) and 3090 (PyTorch 2.4.0),
torch.compile inference on the 5090 and 4090, and training (AMP, SGD) on the 3090 (PyTorch
1.12), for every model of those CSVs a preset is.

The thresholds below hold the engine to what it scored when the set was added (2026-12), not to
the goal: the goal is a median ratio error of at most 1.25 per regime
(accuracy.SPOTCHECK_GOAL), which training meets (1.09) and inference misses — eager 1.29
(bias 1.15: the engine too slow on ResNet-50, EfficientNet-B0 and the ResNeXts by ×1.3-1.5,
too fast on ConvNeXt-T and VGG16 by ×1.1-1.3), torch.compile 1.40 (bias 1.40: every CNN ×1.2-1.5
too slow, ViT-B/16 right). The misses are reported (docs/methodology.md, README), not tuned away:
a constant moved to fit these rows would make the set a tuning set.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "heldout_spotcheck_2026_12.yaml"
TIMM_PRESET = {
    "resnet50": "resnet-50",
    "efficientnet_b0": "efficientnet-b0",
    "convnext_tiny": "convnext-tiny",
    "vgg16": "vgg16",
    "resnext101_32x4d": "resnext101-32x4d",
    "seresnext101_32x4d": "se-resnext101-32x4d",
    "vit_base_patch16_224": "vit-b-16",
}
# regime -> what its CSV's name says: mode, and whether it is a torch.compile ("dynamo") run
CSV_MODE = {
    "timm-infer-eager": ("benchmark-infer-amp-nchw-", False),
    "timm-infer-compile": ("benchmark-infer-amp-nchw-", True),
    "timm-train": ("benchmark-train-amp-nchw-", False),
}


def _doc() -> dict[str, Any]:
    return yamlio.safe_load(DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scored(accuracy: ModuleType) -> tuple[list[Any], dict[str, Any]]:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [DATA])
    return rows, skipped


def test_every_row_names_its_csv_commit_and_the_presets_own_shape() -> None:
    """Each row is traceable to one CSV at one commit, is the preset's model at the preset's
    input size (the engine prices a preset at its own size), and states what the CSV states."""
    from app.recommend.presets import load_presets

    presets = load_presets(ROOT / "data")
    doc = _doc()
    rows = doc["measurements"]
    assert len(rows) == 42
    for row in rows:
        prefix, dynamo = CSV_MODE[row["regime"]]
        name = Path(row["csv"]).name
        assert row["csv"].startswith("results/" + prefix) and name.endswith(".csv"), row
        assert name.endswith("-dynamo.csv") == dynamo, row
        assert (row["runtime"] == "torch-compile") == dynamo, row
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
        assert row["commit"] in yaml.safe_dump(doc["sources"][row["source"]]), row
        assert TIMM_PRESET[row["timm_model"]] == row["preset"], row
        assert row["img_size"] == presets[row["preset"]].model.input_size, row
        assert row["precision"] == "fp16" and row["metric"] == "samples_per_s", row
        # the file's PyTorch release (pt291, pt240, pt112) is the row's
        release = re.search(r"-pt(\d)(\d+)-", name)
        assert release and row["torch_version"].replace(".", "").startswith(
            release.group(1) + release.group(2)
        ), row
    assert {r["gpu_slug"] for r in rows} == {"rtx-3090", "rtx-4090", "rtx-5090"}
    train = [r for r in rows if r["regime"] == "timm-train"]
    assert train and all(r["optimizer"] == "sgd" for r in train)


def test_every_row_is_priced_and_each_regime_scored(
    accuracy: ModuleType, scored: tuple[list[Any], dict[str, Any]]
) -> None:
    rows, skipped = scored
    assert not skipped
    n = {s.regime: s.n for s in accuracy.heldout_scores(rows)}
    assert n == {"timm-infer-eager": 21, "timm-infer-compile": 14, "timm-train": 7}
    # an eager group is one model on the three GPUs
    eager = [r for r in rows if r.regime == "timm-infer-eager"]
    groups = {r.group for r in eager}
    assert len(groups) == 7
    for g in groups:
        assert {r.slug for r in eager if r.group == g} == {"rtx-3090", "rtx-4090", "rtx-5090"}


def test_scores_as_measured_when_the_set_was_added(
    accuracy: ModuleType, scored: tuple[list[Any], dict[str, Any]]
) -> None:
    """Regression guards at the 2026-12 figures (a little slack), not the goal: see the module
    docstring for what misses the 1.25 goal and why it stays missed."""
    rows, _ = scored
    s = {x.regime: x for x in accuracy.heldout_scores(rows)}
    # eager inference: 1.29, bias 1.15 (goal missed); every model's three GPUs rank as measured
    assert s["timm-infer-eager"].median_ratio <= 1.31, s["timm-infer-eager"].median_ratio
    assert s["timm-infer-eager"].spearman >= 0.92
    assert len(s["timm-infer-eager"].group_spearman) == 7
    assert min(s["timm-infer-eager"].group_spearman) >= 0.99
    # torch.compile inference: 1.40, bias 1.40 (goal missed; the engine too slow on CNNs)
    assert s["timm-infer-compile"].median_ratio <= 1.42, s["timm-infer-compile"].median_ratio
    assert s["timm-infer-compile"].spearman >= 0.92
    # training on the RTX 3090: 1.09 (goal met)
    assert s["timm-train"].median_ratio <= accuracy.SPOTCHECK_GOAL
    assert s["timm-train"].median_ratio <= 1.12, s["timm-train"].median_ratio
    # 0.929 until session 42's sdc held a GeForce board's half-rate 16-bit figure whole: one
    # pair of the seven models (ConvNeXt-T, ViT-B/16 read faster) swaps, 0.857; reported in
    # docs/methodology.md §6.7x "sdc", not tuned on
    assert s["timm-train"].spearman >= 0.85
    # the bands the engine draws hold every measurement (80 % is the bands' goal)
    for b in accuracy.heldout_band_scores(rows):
        assert b.coverage >= 0.8, (b.regime, b.coverage)


def test_spotcheck_lines_break_each_regime_down_by_gpu_and_preset(
    accuracy: ModuleType, scored: tuple[list[Any], dict[str, Any]]
) -> None:
    rows, _ = scored
    labels = [line.label for line in accuracy.spotcheck_lines(rows)]
    assert [x for x in labels if not x.startswith(" ")] == [
        "timm-infer-eager",
        "timm-infer-compile",
        "timm-train",
    ]
    eager = {
        line.label: line
        for line in accuracy.spotcheck_lines([r for r in rows if r.regime == "timm-infer-eager"])
    }
    # a GPU's line ranks the seven models on that card; a preset's line its three GPUs
    assert eager["  rtx-3090"].score.n == 7
    assert eager["  resnet-50"].score.n == 3 and len(eager["  resnet-50"].score.group_spearman) == 1
    assert eager["timm-infer-eager"].band.n == 21
    assert len(labels) == (1 + 3 + 7) + (1 + 2 + 7) + (1 + 1 + 7)


def test_vit_rows_take_the_transformer_band_and_cnn_rows_the_cnn_band(
    accuracy: ModuleType,
) -> None:
    """A spot-check regime mixes families: each row's band is its family's (perf.family_regime),
    as the app's row is, not one regime's for all."""
    from app.catalog.loader import read_gpu_specs

    gpu = next(g for g in read_gpu_specs(ROOT / "data") if g.slug == "rtx-4090")
    rows = {
        (r["regime"], r["preset"]): r for r in _doc()["measurements"] if r["gpu_slug"] == gpu.slug
    }
    for regime, preset, want in (
        ("timm-infer-eager", "vit-b-16", "infer"),
        ("timm-infer-eager", "resnet-50", "infer-cnn"),
        ("timm-infer-compile", "vgg16", "infer-cnn"),
    ):
        _, inputs, _ = accuracy.heldout_estimate(rows[(regime, preset)], gpu, ROOT / "data")
        assert inputs.regime == want, (regime, preset)


def test_a_row_states_the_optimizer_its_harness_ran(accuracy: ModuleType) -> None:
    """timm's benchmark trains every model with SGD; ConvNeXt-T's preset defaults to AdamW,
    whose two state buffers make the step slower: the row's optimizer is the one priced."""
    from app.catalog.loader import read_gpu_specs

    gpu = next(g for g in read_gpu_specs(ROOT / "data") if g.slug == "rtx-3090")
    row = next(
        r
        for r in _doc()["measurements"]
        if r["regime"] == "timm-train" and r["preset"] == "convnext-tiny"
    )
    sgd = accuracy.predict_heldout(row, gpu, ROOT / "data")
    adamw = accuracy.predict_heldout({**row, "optimizer": "adamw"}, gpu, ROOT / "data")
    preset_default = accuracy.predict_heldout(
        {k: v for k, v in row.items() if k != "optimizer"}, gpu, ROOT / "data"
    )
    assert sgd > adamw
    assert preset_default == pytest.approx(adamw)
