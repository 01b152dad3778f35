"""A compiled runtime's band cell in batch inference (issue 23): default-mode torch.compile runs
eager PyTorch's operator table under fewer, fused kernels, launched from Python alike, so its
band is fitted on its own rows and eager's (bands.RUNTIME_BAND_FAMILY, accuracy.runtime_band_rows);
where torch.compile replays CUDA graphs (decode) it keeps a cell of its own rows, and eager's
band is never fitted on compiled rows."""

from __future__ import annotations

from app.domain import bands
from app.shipped.rules import load_efficiency
from tests.support import ROOT


def _rows(accuracy, regime: str, runtime: str, gpus: list[str], ratios: list[float]) -> list:
    return [
        accuracy.CalRow(regime, runtime, f"w{i} {runtime}", slug, "nvidia", "Ampere", r)
        for i, r in enumerate(ratios)
        for slug in gpus
    ]


def _band(scores: list, key: str) -> tuple[float, float]:
    (b,) = [s for s in scores if s.regime == key and s.vendor == "all"]
    return b.low, b.high


def test_compiled_batch_inference_is_banded_with_eager(accuracy) -> None:
    eager = _rows(accuracy, "infer-cnn", "pytorch", ["a", "b", "c", "d"], [0.9, 1.0, 1.1, 1.05])
    # three GPUs of one source, one far off: alone they would step their band outward
    compiled = _rows(accuracy, "infer-cnn", "torch-compile", ["a", "b", "c"], [1.0, 1.5, 0.95])
    scores = accuracy.bands_of(eager + compiled)
    pooled = accuracy._band_score("x", "all", eager + compiled)
    assert _band(scores, "infer-cnn/torch-compile") == (pooled.low, pooled.high)
    alone = accuracy._band_score("x", "all", compiled)
    assert (pooled.low, pooled.high) != (alone.low, alone.high)
    # eager's own band takes no compiled row
    own = accuracy._band_score("x", "all", eager)
    assert _band(scores, "infer-cnn/pytorch") == (own.low, own.high)


def test_cuda_graph_regimes_keep_the_compiled_runtime_apart(accuracy) -> None:
    eager = _rows(accuracy, "decode", "pytorch", ["a", "b", "c", "d"], [0.9, 1.0, 1.1, 1.05])
    compiled = _rows(accuracy, "decode", "torch-compile", ["a", "b", "c"], [1.0, 1.5, 0.95])
    assert ("decode", "torch-compile") not in bands.RUNTIME_BAND_FAMILY
    got = accuracy.runtime_band_rows(eager + compiled, "decode", "torch-compile")
    assert got == compiled
    alone = accuracy._band_score("x", "all", compiled)
    assert _band(accuracy.bands_of(eager + compiled), "decode/torch-compile") == (
        alone.low,
        alone.high,
    )


def test_shipped_compiled_cnn_band_rests_on_eager_rows_too() -> None:
    """The shipped cell holds more GPUs than the compiled rows' three (hf-torch-compile-guide),
    and no wider than eager's own band by more than the compiled rows add."""
    table = load_efficiency(ROOT / "data")
    lo, hi = table.bands[("infer-cnn/torch-compile", "all")]
    e_lo, e_hi = table.bands[("infer-cnn/pytorch", "all")]
    assert lo <= e_lo + 0.02 and hi >= e_hi - 0.02
    assert hi / lo < 2.0  # the nine compiled rows alone gave ×2.97
