"""benchmarks/gen_operator_tables.py as FLUX.1's tables need it: a bf16 trace records the casts
between widths as ops and counts the fp32 words apart; ``torch.nn.RMSNorm`` is one op (ATen's
fused kernel on CUDA); two traces at two image sizes split each count into the part that grows
with the image and the part that does not (``fixed``)."""

from __future__ import annotations

from fractions import Fraction
from types import ModuleType

import pytest
import torch
from torch import nn

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_benchmark("gen_operator_tables.py", "gen_operator_tables")


class Joint(nn.Module):
    """A text stream and an image stream, a joint op over both, and an fp32 rotary-style
    product: the shape of a FLUX.1 block in miniature."""

    def __init__(self) -> None:
        super().__init__()
        self.img = nn.Linear(8, 8)
        self.txt = nn.Linear(8, 8)
        self.norm_q = nn.RMSNorm(4, eps=1e-6)

    def forward(self, img: torch.Tensor, txt: torch.Tensor) -> torch.Tensor:
        joint = torch.cat([self.txt(txt), self.img(img)], dim=1)  # (1, T + I, 8)
        q = self.norm_q(joint.unflatten(-1, (2, 4)))
        cos = torch.ones(q.shape[1], 1, 4, device=q.device)  # an fp32 table
        return (q.float() * cos).to(q.dtype)


def _inputs(image: int, text: int = 3) -> object:
    def make() -> tuple[tuple[torch.Tensor, ...], dict]:
        bf = torch.bfloat16
        return (
            torch.zeros(1, image, 8, device="meta", dtype=bf),
            torch.zeros(1, text, 8, device="meta", dtype=bf),
        ), {}

    return make


def _trace(gen: ModuleType, image: int) -> list[dict]:
    model = Joint().to(device="meta", dtype=torch.bfloat16).eval()
    return gen.trace(model, _inputs(image), gen.Recorder(wide=True))


def test_a_bf16_trace_prices_casts_and_fp32_words(gen: ModuleType) -> None:
    ops = _trace(gen, 16)
    names = [o["name"] for o in ops]
    # RMSNorm is one op: no pow / mean / rsqrt of its composite decomposition
    assert names.count("norm_q") == 1 and not any("norm_q:" in n for n in names)
    norm = next(o for o in ops if o["name"] == "norm_q")
    e = (16 + 3) * 8
    assert norm["kind"] == "norm" and norm["elements_in"] == e
    assert (norm["elements_out"], norm["f32_out"]) == (e + e // 4, e // 4)  # + fp32 rstd rows
    casts = [o for o in ops if o["name"].endswith(":_to_copy")]
    up, down = casts
    assert (up["elements_in"], up.get("f32_in"), up["f32_out"]) == (e, None, e)
    assert (down["f32_in"], down.get("f32_out")) == (e, None)
    mul = next(o for o in ops if o["name"] == "model:mul")
    assert mul["f32_in"] == mul["elements_in"] == e + 19 * 4 and mul["f32_out"] == e


def test_an_fp32_trace_counts_no_words_apart(gen: ModuleType) -> None:
    model = Joint().to("meta").eval()

    def fp32() -> tuple[tuple[torch.Tensor, ...], dict]:
        return (torch.zeros(1, 16, 8, device="meta"), torch.zeros(1, 3, 8, device="meta")), {}

    ops = gen.trace(model, fp32, gen.Recorder())
    assert not any("f32_in" in o or "f32_out" in o for o in ops)
    assert not any(o["name"].endswith(":_to_copy") for o in ops)  # .float() of fp32: no op


def test_two_sizes_split_what_grows_with_the_image(gen: ModuleType) -> None:
    ops, quarter = _trace(gen, 16), _trace(gen, 4)
    gen.split_fixed(ops, quarter, Fraction(4, 16))
    by = {o["name"]: o for o in ops}
    assert by["txt"].get("fixed") == {"m": 3}  # the text stream does not grow at all
    assert "fixed" not in by["img"]  # the image stream grows whole
    cat = by["model:cat"]
    assert cat["fixed"] == {"elements_in": 3 * 8, "elements_out": 3 * 8}
    norm = by["norm_q"]
    assert norm["fixed"]["elements_in"] == 3 * 8
    # and the folded table keeps ops of different fixed parts apart
    assert len(gen.fold(ops)) == len(ops)


def test_traces_that_do_not_grow_linearly_are_refused(gen: ModuleType) -> None:
    a = [{"name": "x", "kind": "gemm", "m": 10, "n": 4, "k": 4}]
    b = [{"name": "x", "kind": "gemm", "m": 12, "n": 4, "k": 4}]  # grew when the image shrank
    with pytest.raises(SystemExit, match="not a \\+ b x pixels"):
        gen.split_fixed(a, b, Fraction(1, 4))
