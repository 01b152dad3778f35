"""r33fx: whether half a replica's GPUs would hold the load (the "not for memory" words) counts
the KV cache as the 8-bit cache tip does, through one helper: split over the half group, or,
under latent attention (every tensor-parallel GPU holds the whole cache, kv_copies), whole on
each. It had split a latent model's cache over the half group, so a group whose halves could
not hold the load's cache was said to be "not for memory"."""

from __future__ import annotations

from app.domain.workload import ServingSpec
from app.recommend.serving import _half_group_holds, kv8_can_matter
from tests.recommend.test_r33ex_kv8_tip import _result

CLIENTS = ServingSpec(prompt_tokens=1000, output_tokens=300, concurrent_requests=8)


def test_a_split_cache_fits_half_the_group() -> None:
    # 4 GPUs, each a 40 GB cache pool beside 10 GB of weights: on 2 GPUs each holds 10 GB more
    # weights, 30 GB of pool left; 8 requests × 4 GB split over 2 GPUs = 16 GB each: it fits
    r = _result(gpus=4, pool_gb=40.0, weights_gb=10.0, kv_gb=4.0, copies=1.0)
    assert _half_group_holds(r, CLIENTS)


def test_a_latent_cache_is_whole_on_each_gpu_of_the_half_group() -> None:
    # the same, but every GPU holds the whole cache (MLA, kv_copies = 4): 32 GB on each of
    # the 2, over the 30 GB left
    r = _result(gpus=4, pool_gb=40.0, weights_gb=10.0, kv_gb=4.0, copies=4.0)
    assert not _half_group_holds(r, CLIENTS)
    # and the 8-bit cache tip reads it the same way: 16 GB at 8 bits would fit the 30 GB
    assert kv8_can_matter(r, CLIENTS)
