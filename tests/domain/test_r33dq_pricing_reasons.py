"""The three ways a configuration is priced (one model over n GPUs, one-GPU copies, serving
replicas) share why nothing is rented and how the purchase is priced: each says the same
reason for the same offers, and buys the same way."""

from __future__ import annotations

import pytest

from app.domain import cost
from app.domain.operators import transformer_ops
from app.domain.workload import ModelSpec

LAMBDA = cost.CloudOffer("lambda", "gpu_1x", 1, 2.0, None, "on-demand", "2026-11-01", "lambda")
QUOTED = cost.CloudOffer(
    "someone", "n/a", 1, 1.5, None, "on-demand", "2026-10-01", "a blog", quoted=True
)
BUY = cost.PurchaseOffer(1600, "used", "2026-09", "poet")
USAGE = cost.Usage()


def _all_three(offers: cost.GpuOffers, policy: cost.RentalPolicy) -> list[cost.Pricing]:
    return [
        cost.price_configuration(offers, 1, policy, USAGE),
        cost.price_copies(offers, 1, policy, USAGE),
        cost.price_replicas(offers, 1, 1, policy, USAGE)[0],
    ]


@pytest.mark.parametrize(
    ("cloud", "policy", "reason"),
    [
        ((), cost.RentalPolicy(), "no cloud offer known"),
        ((QUOTED,), cost.RentalPolicy(), "no bookable cloud offer, only a price seen at"),
        (
            (LAMBDA, QUOTED),
            cost.RentalPolicy(providers=("aws",)),
            "no cloud offer passes the provider/tier choices",
        ),
    ],
)
def test_every_pricing_says_the_same_reason_for_no_rental(
    cloud: tuple[cost.CloudOffer, ...], policy: cost.RentalPolicy, reason: str
) -> None:
    for pricing in _all_three(cost.GpuOffers(cloud=cloud, purchase=(BUY,)), policy):
        assert pricing.rent is None
        assert pricing.rent_reason is not None and pricing.rent_reason.startswith(reason)
        assert pricing.buy == BUY and pricing.buy_reason is None
        assert pricing.seen == tuple(o for o in cloud if o.quoted)


def test_a_rental_leaves_no_reason_and_the_purchase_is_priced_alike() -> None:
    offers = cost.GpuOffers(cloud=(LAMBDA, QUOTED), purchase=(BUY,))
    for pricing in _all_three(offers, cost.RentalPolicy()):
        assert pricing.rent is not None and pricing.rent.offer == LAMBDA
        assert pricing.rent_reason is None
        assert (pricing.buy, pricing.num_gpus, pricing.bought, pricing.seen) == (
            BUY, 1, 0, (QUOTED,),
        )  # fmt: skip


def test_no_purchase_price_is_said_by_every_pricing() -> None:
    offers = cost.GpuOffers(cloud=(LAMBDA,))
    for pricing in _all_three(offers, cost.RentalPolicy()):
        assert pricing.buy is None and pricing.buy_reason is None
    basis = cost.GpuOffers(cloud=(LAMBDA,), purchase=(BUY,))
    for p in (
        cost.price_configuration(basis, 1, cost.RentalPolicy(), USAGE, "new"),
        cost.price_copies(basis, 1, cost.RentalPolicy(), USAGE, "new"),
        cost.price_replicas(basis, 1, 1, cost.RentalPolicy(), USAGE, "new")[0],
    ):
        assert p.buy is None and p.buy_reason == "no new price known (purchase price basis: new)"


BERT = ModelSpec(
    family="encoder",
    params=335e6,
    layers=24,
    hidden_size=1024,
    num_heads=16,
    intermediate_size=4096,
    vocab_size=30522,
)


def test_encoder_training_drops_out_after_attention_and_mlp_with_a_one_byte_mask() -> None:
    batch, seq = 8.0, 512.0
    ops = {o.name: o for o in transformer_ops(BERT, batch, seq, act_b=2.0)}
    hidden = batch * seq * 1024
    for name in ("attn_out.dropout", "mlp.dropout"):
        op = ops[name]
        assert (op.kind, op.role, op.count) == ("elementwise", "dropout", 24)
        assert op.bytes_read == pytest.approx(2 * hidden)
        assert op.bytes_written == pytest.approx(3 * hidden)  # the output and its bool mask
    # inference keeps no dropout
    names = {o.name for o in transformer_ops(BERT, batch, seq, training=False)}
    assert not names & {"attn_out.dropout", "mlp.dropout"}
