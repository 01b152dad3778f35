"""The caching-allocator model behind benchmarks/hf_trainer_memory.py: PyTorch's rounding,
segment sizes, best fit, splitting and merging (c10/cuda/CUDACachingAllocator.cpp)."""

from __future__ import annotations

import pytest

from benchmarks.caching_allocator import CachingAllocator, round_size, segment_size

MIB = 1 << 20


def test_rounding_and_segment_sizes() -> None:
    assert round_size(1) == 512 and round_size(513) == 1024
    assert segment_size(4096) == 2 * MIB  # small pool: 2 MiB segments
    assert segment_size(4 * MIB) == 20 * MIB  # 1-10 MiB share a 20 MiB segment
    assert segment_size(67 * MIB + 1) == 68 * MIB  # larger: rounded up to 2 MiB


def test_blocks_split_share_a_segment_and_merge_back() -> None:
    a = CachingAllocator()
    blocks = [a.malloc(4 * MIB) for _ in range(5)]
    assert a.reserved == 20 * MIB and a.allocated == 20 * MIB
    for b in blocks:
        a.free(b)
    big = a.malloc(20 * MIB)  # the five merged back into one free block
    assert a.reserved == 20 * MIB and big.size == 20 * MIB


def test_a_hole_too_small_is_not_reused_and_memory_is_kept() -> None:
    a = CachingAllocator()
    first = a.malloc(64 * MIB)
    a.free(first)
    state = a.malloc(4 * MIB)  # best fit splits the cached 64 MiB block
    a.malloc(64 * MIB)  # the 60 MiB remainder cannot hold it: a new segment
    assert a.reserved == 128 * MIB and a.allocated == 68 * MIB
    a.free(state)
    assert a.reserved == 128 * MIB  # nothing goes back to CUDA


def test_a_failed_cuda_malloc_releases_whole_free_segments() -> None:
    a = CachingAllocator(capacity=100 * MIB)
    a.free(a.malloc(60 * MIB))
    b = a.malloc(80 * MIB)  # 60 + 80 > 100: the free 60 MiB segment is released first
    assert b.size == 80 * MIB and a.reserved == 80 * MIB
    with pytest.raises(MemoryError):
        a.malloc(30 * MIB)
