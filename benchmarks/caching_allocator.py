"""PyTorch's CUDA caching allocator, replayed in Python: what ``nvidia-smi`` shows for a trace.

A model of ``c10/cuda/CUDACachingAllocator.cpp`` at its defaults (PyTorch 1.x through today
without ``expandable_segments`` or ``max_split_size_mb``), one stream:

* every request is rounded up to 512 B (``kMinBlockSize``);
* requests of at most 1 MiB (``kSmallSize``) come from the small pool, whose segments are
  2 MiB (``kSmallBuffer``); larger ones from the large pool, whose new segments are 20 MiB
  (``kLargeBuffer``) below 10 MiB (``kMinLargeAlloc``) and the request rounded up to 2 MiB
  (``kRoundLarge``) from there;
* a request takes the smallest cached free block that holds it (best fit, ties to the lower
  address: ``BlockComparator`` orders by size, then address) and splits it when the rest is
  at least 512 B (small pool) or more than 1 MiB (large pool), keeping the low part;
* a freed block merges with free neighbours of its segment and goes back to its pool; nothing
  is returned to CUDA (``cudaFree``) unless a ``cudaMalloc`` fails, when every cached segment
  that is wholly free is released and the allocation tried again.

``reserved`` is what the allocator holds from CUDA, the part of ``nvidia-smi``'s figure above
the CUDA context; ``allocated`` what ``torch.cuda.memory_allocated`` reports (rounded sizes).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


def round_size(size: int) -> int:
    return MIN_BLOCK * max(1, -(-size // MIN_BLOCK))


def segment_size(size: int) -> int:
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * -(-size // ROUND_LARGE)


@dataclass(eq=False)
class Block:
    ptr: int
    size: int
    small: bool
    segment: int
    allocated: bool = False
    prev: Block | None = None
    next: Block | None = None


@dataclass
class CachingAllocator:
    capacity: int = 1 << 62  # bytes cudaMalloc can hand out before it fails
    reserved: int = 0
    allocated: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0
    _pools: dict[bool, list[tuple[int, int, Block]]] = field(
        default_factory=lambda: {True: [], False: []}
    )
    _next_ptr: int = 0
    _segments: dict[int, int] = field(default_factory=dict)  # segment id -> size

    def _insert(self, b: Block) -> None:
        bisect.insort(self._pools[b.small], (b.size, b.ptr, b))

    def _remove(self, b: Block) -> None:
        pool = self._pools[b.small]
        i = bisect.bisect_left(pool, (b.size, b.ptr))
        while pool[i][2] is not b:
            i += 1
        del pool[i]

    def _cuda_malloc(self, size: int, small: bool) -> Block | None:
        if self.reserved + size > self.capacity:
            return None
        ptr = self._next_ptr
        self._next_ptr += size + (1 << 30)  # segments never touch: no merging across them
        self._segments[ptr] = size
        self.reserved += size
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        return Block(ptr, size, small, ptr)

    def _release_cached(self) -> None:
        for small in (True, False):
            for _, _, b in list(self._pools[small]):
                if b.prev is None and b.next is None:
                    self._remove(b)
                    self.reserved -= self._segments.pop(b.segment)

    def malloc(self, nbytes: int) -> Block:
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        pool = self._pools[small]
        i = bisect.bisect_left(pool, (size, -1))
        if i < len(pool):
            block = pool[i][2]
            del pool[i]
        else:
            want = segment_size(size)
            found = self._cuda_malloc(want, small)
            if found is None:
                self._release_cached()
                found = self._cuda_malloc(want, small)
            if found is None:
                raise MemoryError(f"out of memory: {size} B with {self.reserved} B reserved")
            block = found
        rest = block.size - size
        if (rest >= MIN_BLOCK) if small else (rest > SMALL_SIZE):
            tail = Block(block.ptr + size, rest, small, block.segment, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = tail
            block.next = tail
            block.size = size
            self._insert(tail)
        block.allocated = True
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def free(self, block: Block) -> None:
        block.allocated = False
        self.allocated -= block.size
        for other in (block.prev, block.next):
            if other is None or other.allocated:
                continue
            self._remove(other)
            if other is block.prev:
                block.ptr = other.ptr
                block.prev = other.prev
                if other.prev is not None:
                    other.prev.next = block
            else:
                block.next = other.next
                if other.next is not None:
                    other.next.prev = block
            block.size += other.size
        self._insert(block)

    def reset_peaks(self) -> None:
        self.peak_reserved = self.reserved
        self.peak_allocated = self.allocated
