"""The backward traffic of ops whose autograd formula reads the output gradient alone
(PyTorch tools/autograd/derivatives.yaml): dropout reads the gradient and its saved bool mask,
the math attention path's division by √d and added mask read the gradient only. The default
rule (gradient plus saved input) stays for the ops that need their input (softmax, GELU)."""

from __future__ import annotations

import pytest

from app.domain.operators import DROPOUT_MASK_BYTES, attention, backward_ops, memory_op

SEQ, HEADS, HEAD_DIM, BATCH = 384.0, 12.0, 64.0, 32.0
SCORES = BATCH * HEADS * SEQ * SEQ


def _math_attention_backward(softmax_b: float) -> dict[str, tuple[float, float]]:
    """(bytes read, bytes written) per score of each backward op of one layer's math
    attention under autocast (16-bit activations, the softmax in ``softmax_b`` bytes)."""
    fwd = attention(
        "attention",
        tokens_q=BATCH * SEQ,
        q_len=SEQ,
        kv_len=SEQ,
        heads=HEADS,
        head_dim=HEAD_DIM,
        kv_heads=HEADS,
        count=1.0,
        act_b=2.0,
        causal=False,
        flash=False,
        dtype="fp16",
        dropout=True,
        softmax_b=softmax_b,
    )
    return {
        op.name: (op.bytes_read / SCORES, op.bytes_written / SCORES)
        for op in backward_ops(fwd)
        if op.name.endswith(".bwd")
    }


def test_dropout_backward_reads_the_gradient_and_its_mask_not_the_input() -> None:
    bwd = _math_attention_backward(softmax_b=4.0)
    # native_dropout_backward(grad, mask): the fp32 gradient and the 1-byte mask in, fp32 out
    assert bwd["attention.dropout.bwd"] == pytest.approx((4.0 + DROPOUT_MASK_BYTES, 4.0))


def test_scale_and_mask_backward_read_the_gradient_alone() -> None:
    bwd = _math_attention_backward(softmax_b=4.0)
    # grad / √d: 16-bit in and out
    assert bwd["attention.scale.bwd"] == pytest.approx((2.0, 2.0))
    # the fp32 mask promoted the scores: the gradient cast back to 16 bits, nothing saved read
    assert bwd["attention.mask.bwd"] == pytest.approx((4.0, 2.0))


def test_softmax_backward_still_reads_its_saved_output() -> None:
    bwd = _math_attention_backward(softmax_b=4.0)
    # _softmax_backward_data(grad, output): both fp32, the input gradient fp32
    assert bwd["attention.softmax.bwd"] == pytest.approx((8.0, 4.0))


def test_hidden_dropout_backward_reads_gradient_and_mask() -> None:
    elements = 1000.0
    fwd = [
        memory_op(
            "elementwise",
            "mlp.dropout",
            "dropout",
            elements,
            elements,
            extra_write=elements * DROPOUT_MASK_BYTES,
        )
    ]
    (bwd,) = backward_ops(fwd, input_grad=True)
    assert bwd.bytes_read == pytest.approx(elements * (2.0 + DROPOUT_MASK_BYTES))
    assert bwd.bytes_written == pytest.approx(elements * 2.0)


def test_an_op_that_needs_its_input_keeps_the_default_rule() -> None:
    elements = 1000.0
    fwd = [memory_op("elementwise", "gelu", "act", elements, elements)]
    (bwd,) = backward_ops(fwd, input_grad=True)
    # GELU's backward reads the gradient and its saved input
    assert bwd.bytes_read == pytest.approx(elements * 4.0)
    assert bwd.bytes_written == pytest.approx(elements * 2.0)
