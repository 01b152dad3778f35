"""The live set at an inference pass's peak (activations.table_transient): an op's input and
output, and inside a resnet or transformer block the residual the block holds for its closing
add. A VAE decoder's last resnet at 1024² (256 → 128 channels) peaks at its SiLU with three
256-channel tensors live: the block's input, the group norm's output and the SiLU's."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.activations import table_transient
from app.domain.operators import ForwardTable

C_IN, C_OUT, HW = 256, 128, 1024
X = C_IN * HW * HW  # the block's input
H = C_OUT * HW * HW  # its 128-channel tensors


def _conv(name: str, c_in: int, c_out: int, r: int = 3) -> dict[str, Any]:
    return {
        "kind": "conv", "name": name, "count": 1, "c_in": c_in, "c_out": c_out,
        "h_in": HW, "w_in": HW, "h_out": HW, "w_out": HW, "r": r, "s": r, "stride": 1,
        "groups": 1,
    }  # fmt: skip


def _ew(name: str, kind: str, elements_in: int, elements_out: int) -> dict[str, Any]:
    return {
        "kind": kind, "name": name, "count": 1, "elements_in": elements_in,
        "elements_out": elements_out,
    }  # fmt: skip


def _resnet(prefix: str) -> list[dict[str, Any]]:
    """diffusers ResnetBlock2D, 256 → 128 channels, as the trace names its ops."""
    return [
        _ew(f"{prefix}.norm1", "norm", X, X),
        _ew(f"{prefix}.nonlinearity:silu", "elementwise", X, X),
        _conv(f"{prefix}.conv1", C_IN, C_OUT),
        _ew(f"{prefix}.norm2", "norm", H, H),
        _ew(f"{prefix}.nonlinearity:silu", "elementwise", H, H),
        _conv(f"{prefix}.conv2", C_OUT, C_OUT),
        _conv(f"{prefix}.conv_shortcut", C_IN, C_OUT, r=1),
        _ew(f"{prefix}:add", "elementwise", 2 * H, H),
    ]


def _table(ops: list[dict[str, Any]]) -> ForwardTable:
    return ForwardTable(model="t", source="test", gflops_forward=None, ops=tuple(ops))


def test_a_resnet_holds_its_input_beside_its_inner_ops() -> None:
    table = _table(_resnet("vae.decoder.up_blocks.3.resnets.0"))
    # the SiLU: its input (the norm's output) and output, and the block's input held for
    # the closing add — three tensors of the input's size (the op alone had two)
    assert table_transient(table, 4.0) == pytest.approx(4.0 * 3 * X)


@pytest.mark.parametrize(
    "reader",
    [
        _conv("vae.decoder.up_blocks.3.resnets.0.conv_shortcut", C_IN, C_OUT, r=1),
        _ew("vae.decoder.up_blocks.3.resnets.0:add", "elementwise", 2 * H, H),
    ],
)
def test_ops_that_read_the_held_input_do_not_count_it_twice(reader: dict[str, Any]) -> None:
    # the shortcut (input 256 channels, 128 out: X + H) and the closing add (two 128-channel
    # operands, one out: 3H = X + H) read what the block holds; counted twice they would
    # read 2X + H, above the first op's X + X
    prefix = "vae.decoder.up_blocks.3.resnets.0"
    table = _table([_ew(f"{prefix}.norm1", "norm", X, X), reader])
    assert table_transient(table, 2.0) == pytest.approx(2.0 * 2 * X)


def test_a_bias_add_inside_a_block_does_not_read_the_held_input() -> None:
    # a linear's bias add (output and a vector in) runs beside the held residual stream
    prefix = "down_blocks.1.attentions.0.transformer_blocks.0"
    table = _table(
        [
            _ew(f"{prefix}.norm1", "norm", H, H),
            _ew(f"{prefix}.attn1.to_q:add", "elementwise", H + C_OUT, H),
        ]
    )
    assert table_transient(table, 2.0) == pytest.approx(2.0 * (H + C_OUT + H + H))


def test_outside_a_block_only_the_op_itself_is_live() -> None:
    # an upsampler's convolution is not in a residual block: its input and output only
    table = _table([_conv("vae.decoder.up_blocks.2.upsamplers.0.conv", C_IN, C_IN)])
    assert table_transient(table, 2.0) == pytest.approx(2.0 * 2 * X)
