"""The memory changes tried where memory is what keeps a training job off the cards.

A card that misses by a little (QLoRA of Llama 3.1 8B on an 8 GB card: 10.9 GiB needed at
micro-batch 1 with checkpointing and 8-bit AdamW, which the engine already plans) had been
told nothing, since no change the what-if list tried fits it. These are the further changes
people make, each one the engine prices (a request field it sizes), never a saving assumed:
a shorter sequence (activations and logits scale with it), a chunked cross-entropy
(activations.logits_bytes: torchtune's CEWithChunkedOutputLoss), a lower LoRA rank (the
adapters, their gradients and optimizer states), a paged optimizer (its states in CUDA unified
memory), and all of them at once, the sequence halved again up to an eighth of the one asked
where that is what it takes. PEFT's target modules are not a request field, so fewer of them
is not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from app.domain.units import gib
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s

# torchtune's CEWithChunkedOutputLoss splits the logits into 8 chunks by default
# (torchtune/modules/loss/ce_chunked_output_loss.py, num_output_chunks=8)
LOSS_CHUNKS = 8
# the combined change halves the sequence at most this many times: a sample cut below an
# eighth of the length asked is another job's data, not a setting of this one
HALVINGS = 3
ALL_AT_ONCE = "every memory change at once"
# the combined change where even it fits no card within the limits, re-ranked with them
# lifted: what the least tried setting needs, on the cheapest card that holds it
ANYWHERE = "with every limit lifted (the cheapest first)"


def memory_bound(answer: s.RecommendationResponse) -> bool:
    """An answer with no row where some card was left out for memory."""
    return not answer.recommendations and any(x.code == "does_not_fit" for x in answer.excluded)


def levers(work: WorkloadSpec, sequenced: bool, tight: bool) -> list[tuple[str, dict[str, Any]]]:
    """The single memory changes a training job admits, then all of them at once (``sequenced``:
    the job has a sequence length to shorten; ``tight``: memory keeps it off the cards, the
    only time they are tried). The paged optimizer is tried alone, not in the combined
    change: bitsandbytes' paging runs on CUDA only (the engine refuses it elsewhere) and its
    host traffic is not timed (methodology §6.7t "tt2"), so it would close the combined change
    to every other vendor for a saving the engine only half prices."""
    if not tight or not work.training or work.serving is not None:
        return []
    one: list[tuple[str, str, dict[str, Any]]] = []  # label, its words in the combined, change
    n = work.seq_len
    if sequenced and n >= 2:
        one.append((f"sequence {n // 2} instead of {n}{_same_tokens(work, 1)}", "",
                    {"seq_len": n // 2, **_samples(work, 1)}))  # fmt: skip
    if work.model.family == "decoder" and work.model.vocab_size and work.loss_chunks <= 1:
        said = f"cross-entropy in {LOSS_CHUNKS} chunks"
        one.append((said, said, {"loss_chunks": LOSS_CHUNKS}))
    r = work.lora_rank
    if work.peft in ("lora", "qlora") and r >= 2:
        one.append((f"LoRA rank {r // 2} instead of {r}", f"LoRA rank {r // 2}",
                    {"lora_rank": r // 2}))  # fmt: skip
    out = [(label, {"workload": change}) for label, _, change in one]
    if not work.paged_optimizer and work.optimizer != "sgd":
        out.append(("paged optimizer", {"workload": {"paged_optimizer": True}}))
    if len(one) < 2 and not (one and "seq_len" in one[0][2]):
        return out
    every: dict[str, Any] = {}
    words = [w for _, w, _ in one if w]
    for _, _, change in one:
        every.update(change)
    if not work.gradient_checkpointing:
        every["gradient_checkpointing"] = True
        words.append("activation checkpointing on")
    steps = range(1, HALVINGS + 1) if "seq_len" in every else range(1)
    for k in steps:
        shorter = {"seq_len": max(1, n >> k), **_samples(work, k)} if k else {}
        said = ", ".join([*([f"sequence {n >> k}{_same_tokens(work, k)}"] if k else []), *words])
        out.append((f"{ALL_AT_ONCE} ({said})", {"workload": every | shorter}))
    return out


def _samples(work: WorkloadSpec, halvings: int) -> dict[str, Any]:
    """A stated dataset cut into sequences ``2**halvings`` times shorter keeps its tokens:
    ``2**halvings`` times the samples. The sequence is a memory change, not less data: kept
    at the samples asked, a quarter of the sequence had trained a quarter of the tokens, and
    an empty answer held off by its job budget ($2 for a LoRA of Llama 3.1 8B on 50,000 ×
    2,048 tokens, twice) led with "every memory change at once (sequence 512 …)" at $1.46,
    a memory change that fitted no card the job as asked did not. A count of samples (the
    user's, or a preset's dataset) is what is scaled; a dataset the engine assumes in tokens
    (``dataset_basis`` "assumed: 1 M tokens …") is re-sized in tokens by the resolver
    already."""
    basis = work.dataset_basis or ""
    if work.dataset_samples is None or not (basis == "yours" or "preset's dataset" in basis):
        return {}
    return {"dataset_samples": round(work.dataset_samples * 2**halvings)}


def _same_tokens(work: WorkloadSpec, halvings: int) -> str:
    more = _samples(work, halvings)
    return f" (the same tokens: {more['dataset_samples']:,} samples)" if more else ""


def is_combined(label: str) -> bool:
    return label.startswith(ALL_AT_ONCE)


def longer_fits(label: str, fitted: Iterable[str]) -> bool:
    """Whether ``label`` is a combined change tried after one that already let a card hold the
    job (``fitted``: the changes that did): its sequences are tried longest first, so the
    shorter ones have nothing more to say and are not tried (what-if rows and an estimate's
    misfit alike)."""
    return is_combined(label) and any(is_combined(f) for f in fitted)


def kept(rows: list[s.WhatIfOut]) -> list[s.WhatIfOut]:
    """The what-if rows with one combined change: the first (longest sequence) that lets a
    card run the job, else the last, the least memory tried."""
    combined = [v for v in rows if is_combined(v.change) and ANYWHERE not in v.change]
    if len(combined) < 2:
        return rows
    keep = next((v for v in combined if v.can_run), combined[-1])
    return [v for v in rows if v is keep or v not in combined]


def lifted(request: s.RecommendationRequest) -> dict[str, Any]:
    """The request's limits lifted at once (the cheapest first): where even the least memory
    tried fits no card within them, the cheapest card anywhere that holds it."""
    c = request.constraints
    return {
        "constraints": dict.fromkeys(
            (
                "max_purchase_usd",
                "max_hourly_usd",
                "max_job_cost_usd",
                "max_hours",
                "vendors",
                "segments",
                "num_gpus",
                "providers",
                "tiers",
            )
        )
        | {"acquisition": "either", "max_gpus": max(8, c.max_gpus)},
        "objective": "cheapest",
    }


def words(answer: s.RecommendationResponse, said: Callable[[s.WhatIfOut, str], str]) -> str:
    """How far memory keeps the job off the cards, in an empty answer's words (its message and
    the verdict; the memory changes are tried only where memory is what stands in the way):
    what it needs as asked (the savers the engine already plans named), what each memory
    change tried needs, and where none lets a card run it, the least tried and the card that
    holds it (``said``: whatif.best_config, the configuration and its price in words)."""
    tried = [v for v in answer.what_if or [] if _memory_change(v.change)]
    if not tried:
        return ""
    within = [v for v in tried if ANYWHERE not in v.change]
    if not any(v.can_run for v in within) and any(x.code == _SLOW for x in answer.excluded):
        # cards that hold the job as asked miss the deadline (the message says what would
        # meet it) and no memory change brings a card in: memory is not what stands in the
        # way (GPT-2 XL pretraining within 1 h, 108 cards too slow, had closed on "the
        # cheapest that does, every limit lifted: RTX 4090 … 12.8 days", the laptop and Apple
        # parts that do not fit read as the obstacle). A budget is another matter: a cheaper
        # card that a memory change would fit is what the user is after, so it is said.
        return ""
    planned = next(
        (n.removeprefix(_LEAST).removesuffix(_EACH) for n in answer.memory.notes
         if n.startswith(_LEAST)),
        "",
    )  # fmt: skip
    out = f" Memory: as asked it needs {gib(answer.memory.required_gb)} GiB on one GPU"
    out += f", with what the engine already plans: {planned}" if planned else ""
    out += "; tried: " + "; ".join(f"{v.change}, {gib(v.required_gb)} GiB" for v in within)
    out += "."
    if any(v.can_run for v in within):
        return out
    least = min(within, key=lambda v: v.required_gb)
    out += f" Even at {gib(least.required_gb)} GiB no card within these limits runs it"
    anywhere = next((v for v in tried if ANYWHERE in v.change and v.top_name), None)
    if anywhere is not None:
        out += f"; the cheapest that does, every limit lifted: {said(anywhere, 'either')}"
    return out + "."


# a card that holds the job as asked and runs it too slowly for the deadline
_SLOW = "misses_deadline"
_LEAST = "the least the job needs: "
_EACH = " (each row gives its own)"


def _memory_change(label: str) -> bool:
    """A what-if label that is one of ``levers``' changes."""
    return (
        is_combined(label)
        or label.startswith(("cross-entropy in ", "LoRA rank ", "paged optimizer"))
        or (label.startswith("sequence ") and _shorter(label))
    )


def _shorter(label: str) -> bool:
    """'sequence 1024 instead of 2048': a shorter sequence (the what-if list also doubles it)."""
    parts = label.split()
    try:
        return int(parts[1]) < int(parts[4])
    except (IndexError, ValueError):
        return False
