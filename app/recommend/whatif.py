"""What changes the answer: the same request with one thing changed at a time.

Rankings hide how fragile they are; a person choosing a GPU wants to know whether halving
the batch, quantising, or checkpointing activations would open up cheaper cards or change
the pick. Each variation is a full re-rank of the catalog with `limit=1` (a few ms each).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.domain import cost as costs
from app.domain.evaluate import hours_text
from app.domain.perf import runs_nchw
from app.domain.workload import WorkloadSpec
from app.errors import AppError
from app.recommend import misfit
from app.recommend import schemas as s
from app.vocab import BYTES_PER_ELEMENT, CONV_FAMILIES, TRANSFORMER_FAMILIES, TRANSFORMERS_4BIT

if TYPE_CHECKING:
    from app.recommend.serving import ScaleOut

Ranker = Callable[[s.RecommendationRequest], s.RecommendationResponse]


def variations(
    work: WorkloadSpec, request: s.RecommendationRequest, tight: bool = False
) -> list[tuple[str, dict[str, Any]]]:
    """(label, changes) pairs that make sense for this job; changes are request fields.
    ``tight``: memory keeps the job off the cards (an empty answer with misfits, an estimate's
    card that does not hold it): the memory changes people make are tried too (misfit.levers),
    only then, as each is a re-rank the answers that run do without."""
    if work.serving is not None and work.model.family == "encoder":
        return _encoder_serving_variations(work, request)
    if work.serving is not None:
        return _serving_variations(work, request)
    out: list[tuple[str, dict[str, Any]]] = []
    b = work.batch_size
    out.append((f"batch {b * 2} instead of {b}", {"workload": {"batch_size": b * 2}}))
    if b > 1:
        out.append((f"batch {b // 2} instead of {b}", {"workload": {"batch_size": b // 2}}))
    transformer = work.model.is_transformer
    # an encoder-decoder's inference over audio windows runs its encoder over the window's
    # frames, not seq_len (app.domain.seq2seq.encoder_tokens): no sequence to vary
    windowed = (work.task == "inference" and work.model.family == "encoder-decoder") and bool(
        work.model.input_size
    )
    sequenced = transformer and work.seq_len > 1 and not windowed
    if sequenced:
        out.append(
            (f"sequence {work.seq_len * 2} instead of {work.seq_len}",
             {"workload": {"seq_len": work.seq_len * 2}})
        )  # fmt: skip
    p = work.precision
    if work.is_llm_inference and work.runtime == "transformers":
        # eager generate is host-bound at small batches: the CUDA-graph engine people switch to
        # is the change a latency target or a slow answer most often needs
        out.append(("runtime vllm instead of transformers", {"workload": {"runtime": "vllm"}}))
        out.extend(_gguf_lever(request, p))
    if work.task == "inference":
        out.extend(_inference_levers(work))
    else:
        if p in ("fp32", "tf32"):
            out.append(
                (f"bf16 mixed precision instead of {p}", {"workload": {"precision": "bf16"}})
            )
        elif p in ("bf16", "fp16") and not work.model.conv_layers and work.peft == "none":
            # stock PyTorch has no fp8 convolutions (data/frameworks.yaml, fp8_convolution):
            # a CNN or UNet is refused, FLUX.1's all-Linear DiT is not (ModelSpec.conv_layers);
            # PEFT's adapters train beside a frozen base it does not run in fp8 (a QLoRA base is
            # NF4 whatever the precision): the lever changed nothing there
            out.append((f"fp8 instead of {p}", {"workload": {"precision": "fp8"}}))
        if work.runtime == "pytorch":
            # the engine prices a compiled training step for every family (data/efficiency.yaml's
            # torch-compile row has no regime: Inductor's fusions in train and train-llm alike,
            # and an eager NCHW CNN's layout transforms gone: ResNet-50 on an A100 1.7×); the
            # inference list offered it, training never did
            out.append(
                ("runtime torch-compile instead of pytorch",
                 {"workload": {"runtime": "torch-compile"}})
            )  # fmt: skip
        ckpt = work.gradient_checkpointing
        out.append(
            ("activation checkpointing " + ("off" if ckpt else "on"),
             {"workload": {"gradient_checkpointing": not ckpt}})
        )  # fmt: skip
        if work.task == "fine-tuning" and work.peft == "none":
            out.append(("LoRA instead of full fine-tuning", {"workload": {"peft": "lora"}}))
            out.append(("QLoRA instead of full fine-tuning", {"workload": {"peft": "qlora"}}))
        elif work.task == "fine-tuning" and work.peft == "lora":
            # the frozen base in 4-bit NF4 (QLoRA) is how a LoRA too big for a card fits it
            # before a bigger card is bought: FLUX.1-dev's LoRA on one 24 GB card, as
            # https://huggingface.co/blog/flux-qlora trains it (ai-toolkit quantises its base
            # to 8 bits for the same reason, "quantize: true  # run 8bit mixed precision":
            # github.com/ostris/ai-toolkit/blob/main/config/examples/train_lora_flux_24gb.yaml)
            out.append(("QLoRA (4-bit base) instead of LoRA", {"workload": {"peft": "qlora"}}))
    if runs_nchw(work):
        # cuDNN's NCHW<->NHWC transforms around each tensor-core convolution gone
        # (perf._nchw_transforms_run): what the layout tip asks for, priced (ResNet-50 fp16 on
        # an H100 3,469 -> 5,049 images/s; an AMD row is unchanged: ROCm PyTorch hands MIOpen
        # NCHW unless PYTORCH_MIOPEN_SUGGEST_NHWC is set)
        out.append(("channels_last tensors instead of NCHW", {"workload": {"channels_last": True}}))
    out.extend(misfit.levers(work, sequenced, tight))
    for objective in ("fastest", "best_value"):
        if objective != request.objective:
            out.append((f"ranked by {objective.replace('_', ' ')}", {"objective": objective}))
    out.extend(_relaxed(request.constraints, work.training))
    return out


def _gguf_lever(request: s.RecommendationRequest, p: str) -> list[tuple[str, dict[str, Any]]]:
    """A Transformers LLM inference job's GGUF Q4_K_M file under llama.cpp: for 16-bit weights,
    what people run a large model on at home (its own kernels on NVIDIA, AMD, Apple and Intel,
    layers split over mixed cards), which Transformers' int4 row cannot show ("Llama 3 70B at
    home for $3,000" had never named two used 3090s or a 64 GB Mac: issue 23); for a 4-bit
    format Transformers loads (AWQ, GPTQ, NF4), the same 4 bits in the format whose kernels run
    on every vendor, where Transformers' do not (Apple's Metal: an empty answer had named only
    "any vendor"). The file's own precision: a stated bf16 would contradict its int4 weights."""
    q = request.workload.quantization
    if q is None and p in ("bf16", "fp16"):
        was = p
    elif q in TRANSFORMERS_4BIT:
        was = q.upper()
    else:
        return []
    change = {"workload": {"runtime": "llama.cpp", "quantization": "q4_k_m", "precision": None}}
    return [(f"runtime llama.cpp with GGUF Q4_K_M instead of transformers {was}", change)]


def _inference_levers(work: WorkloadSpec) -> list[tuple[str, dict[str, Any]]]:
    """One inference job's runtime and weight-format levers: an eager CNN, diffusion
    pipeline, encoder (BERT) or encoder-decoder (Whisper) is host- and launch-bound at small
    batches, so the compiled engines are what a latency target or a job's cost needs (SDXL's
    3.9 s eager, 0.8 s under TensorRT; BERT-base on an RTX 4090 ~3,000 samples/s under
    TensorRT against ~1,100 eager). Every model but a decoder LLM runs 8-bit only under
    TensorRT and never in 4 bits: elsewhere "int8 weights" only shrink the stored weights
    (perf.dequantised), which changed nothing the answer could show (BERT's int8 and int4 rows
    read the fp16 speed)."""
    out: list[tuple[str, dict[str, Any]]] = []
    p = work.precision
    # a model whose inference is no decoder LLM: no runtime of its own for int8/int4 weights
    plain = not work.is_llm_inference
    # a ViT is a vision model run as a CNN is (torch.compile, TensorRT): the regression hunt
    # found its latency what-ifs naming no fix
    compiled = work.model.family in (*CONV_FAMILIES, "vit") or (
        plain and work.model.family in TRANSFORMER_FAMILIES
    )
    if compiled and work.runtime == "pytorch":
        for rt in ("torch-compile", "tensorrt"):
            out.append((f"runtime {rt} instead of pytorch", {"workload": {"runtime": rt}}))
    if work.model.family == "diffusion" and not work.model.conv_layers and p in ("bf16", "fp16"):
        # a DiT's matmuls run in fp8 (torchao float8, TensorRT's FP8 FLUX.1 engines), which
        # no UNet's convolutions do (ModelSpec.conv_layers)
        out.append((f"fp8 instead of {p}", {"workload": {"precision": "fp8"}}))
    for q in ("int8", "int4"):
        if plain and (q == "int4" or work.runtime != "tensorrt"):
            continue
        if q != p and BYTES_PER_ELEMENT[p] > BYTES_PER_ELEMENT[q]:
            out.append((f"{q} weights instead of {p}", {"workload": {"precision": q}}))
    return out


def _serving_variations(
    work: WorkloadSpec, request: s.RecommendationRequest
) -> list[tuple[str, dict[str, Any]]]:
    """A serving plan's own levers: fp8 weights, an fp8 KV cache, then 4-bit weights where
    the request pins no format, half the load, twice the latency targets, then the request's
    limits lifted one at a time."""
    out: list[tuple[str, dict[str, Any]]] = []
    w, load = request.workload, work.serving
    assert load is not None and w.serving is not None
    if w.precision is None and w.quantization is None and work.precision in ("bf16", "fp16"):
        # the lossless step before the lossy one: 8-bit float weights halve a 16-bit release
        # at no measurable quality cost on the Llama 3.1 family (data/quality.yaml's fp8 row)
        out.append(("fp8 weights", {"workload": {"precision": "fp8"}}))
    asked = w.serving.model_dump()
    if w.serving.kv_cache_precision is None:
        # the cache is kept in the model's dtype unless asked: an 8-bit one holds twice the
        # requests (a quality trade smaller than 4-bit weights')
        out.append(
            ("an fp8 KV cache", {"workload": {"serving": {**asked, "kv_cache_precision": "fp8"}}})
        )
    if w.precision is None and w.quantization is None and not request.constraints.allow_4bit:
        out.append(("4-bit weights allowed", {"constraints": {"allow_4bit": True}}))
    if load.concurrent_requests and load.concurrent_requests > 1:
        n, half = load.concurrent_requests, max(1, int(load.concurrent_requests // 2))
        out.append((f"{half} concurrent requests instead of {n:g}",
                    {"workload": {"serving": {**asked, "concurrent_requests": half}}}))  # fmt: skip
    elif load.requests_per_s:
        rate = load.requests_per_s
        out.append((f"{rate / 2:g} requests/s instead of {rate:g}",
                    {"workload": {"serving": {**asked, "requests_per_s": rate / 2}}}))  # fmt: skip
    if load.ttft_ms_target and load.itl_ms_target:
        ttft, itl = load.ttft_ms_target * 2, load.itl_ms_target * 2
        out.append((f"latency targets twice as loose (TTFT {ttft:,.0f} ms, ITL {itl:,.0f} ms)",
                    {"workload": {"serving": {**asked, "ttft_ms_target": ttft,
                                              "itl_ms_target": itl}}}))  # fmt: skip
    out.extend(_relaxed(request.constraints, True))
    return out


def _encoder_serving_variations(
    work: WorkloadSpec, request: s.RecommendationRequest
) -> list[tuple[str, dict[str, Any]]]:
    """An encoder's serving levers (an embedding model: no weight format the servers run below
    16 bits, no KV cache): half the load, a latency target twice as loose, then the request's
    limits lifted one at a time."""
    out: list[tuple[str, dict[str, Any]]] = []
    w, load = request.workload, work.serving
    assert load is not None and w.serving is not None
    asked = w.serving.model_dump()
    if load.concurrent_requests and load.concurrent_requests > 1:
        n, half = load.concurrent_requests, max(1, int(load.concurrent_requests // 2))
        out.append((f"{half} concurrent requests instead of {n:g}",
                    {"workload": {"serving": {**asked, "concurrent_requests": half}}}))  # fmt: skip
    elif load.requests_per_s:
        rate = load.requests_per_s
        out.append((f"{rate / 2:g} requests/s instead of {rate:g}",
                    {"workload": {"serving": {**asked, "requests_per_s": rate / 2}}}))  # fmt: skip
    if load.ttft_ms_target:
        ms = load.ttft_ms_target * 2
        out.append((f"a latency target twice as loose ({ms:,.0f} ms)",
                    {"workload": {"serving": {**asked, "ttft_ms_target": ms}}}))  # fmt: skip
    out.extend(_relaxed(request.constraints, True))
    return out


# The GPU count the "more GPUs" what-if lifts max_gpus to where a job can span servers (a
# training job past one server rents whole servers side by side: 8 of 8): a step to try, not
# the most a request may ask for (vocab.MOST_GPUS, 512).
ACROSS_SERVERS_GPUS = 64


def _relaxed(c: s.ConstraintsIn, across_servers: bool) -> list[tuple[str, dict[str, Any]]]:
    """The request's own limits, one lifted at a time: when nothing can run the job, these
    are often what stands in the way (one GPU, one vendor, a budget). The default 8 GPUs too,
    where the job can span servers: training (full fine-tuning of a 405B model needs several)
    and serving (a replica spans servers where none holds the model)."""
    out: list[tuple[str, dict[str, Any]]] = []
    if c.num_gpus is not None:
        out.append((f"any GPU count instead of exactly {c.num_gpus}", {"num_gpus": None}))
    elif c.max_gpus < 8:
        out.append((f"up to 8 GPUs instead of {c.max_gpus}", {"max_gpus": 8}))
    elif across_servers and c.max_gpus < ACROSS_SERVERS_GPUS:
        out.append(
            (
                f"up to {ACROSS_SERVERS_GPUS} GPUs instead of {c.max_gpus}",
                {"max_gpus": ACROSS_SERVERS_GPUS},
            )
        )
    if c.vendors:
        out.append((VENDOR_LIFTED, {"vendors": None}))
    if c.segments:
        out.append(("any kind of card", {"segments": None}))
    if c.max_hours is not None:
        out.append((DEADLINE_LIFTED, {"max_hours": None}))
    if c.acquisition != "buy" and not c.allow_spot:
        # a spot (preemptible) instance is often a fraction of the on-demand hour; the row
        # then says what an interruption costs (costs.OfferChoice.spot)
        out.append((SPOT_ALLOWED, {"allow_spot": True}))
    if c.acquisition != "either":
        # asked to rent (or buy), a card had that other way is out of the answer; 'fastest'
        # of a card nobody rents left some answers empty without saying so
        other = "buying" if c.acquisition == "rent" else "renting"
        out.append((f"{other} {ACQUISITION_LIFTED}{c.acquisition}ing", {"acquisition": "either"}))
    relaxed: list[tuple[str, dict[str, Any]]] = [
        (label, {"constraints": change}) for label, change in out
    ]
    budget = ("max_purchase_usd", "max_hourly_usd", "max_job_cost_usd")
    if any(getattr(c, k) is not None for k in budget):
        # whoever set a budget asks what the least money buys, not the best pick without one
        relaxed.append(
            (BUDGET_LIFTED, {"constraints": dict.fromkeys(budget), "objective": "cheapest"})
        )
    return relaxed


BUDGET_LIFTED = "no budget limit (the cheapest first)"
# the vendor the asker named: another vendor's card is another machine and software stack
# (a Mac asked about is not an AMD Instinct server)
VENDOR_LIFTED = "any vendor"
SPOT_ALLOWED = "spot instances allowed (cheaper, may be interrupted)"
ACQUISITION_LIFTED = "as well as "


def changed_request(
    request: s.RecommendationRequest, changes: dict[str, Any]
) -> s.RecommendationRequest:
    data = request.model_dump()
    data.update({k: v for k, v in changes.items() if k not in ("workload", "constraints")})
    data["workload"] = {**data["workload"], **changes.get("workload", {})}
    data["constraints"] = {**data["constraints"], **changes.get("constraints", {})}
    data.update(limit=1, what_if=False)
    return s.RecommendationRequest.model_validate(data)


def what_if(
    request: s.RecommendationRequest,
    answer: s.RecommendationResponse,
    work: WorkloadSpec,
    rank: Ranker,
) -> list[s.WhatIfOut]:
    top = _configuration(answer.recommendations[0] if answer.recommendations else None)
    out: list[s.WhatIfOut] = []
    tight = misfit.memory_bound(answer)
    tried = variations(work, request, tight)
    sized = _sized_lift(request, answer, rank)
    if sized is not None:
        # the count the load needs replaces the fixed step (8, 64): up to 8 GPUs had left a
        # 70B at 20 requests/s with "no single change", up to 64 had picked 24 H100s
        # (added where no step was tried: 64 GPUs or more asked)
        tried = [(label, c) for label, c in tried if not count_lifted(label)] + [sized]
    combined = {label: changes for label, changes in tried if misfit.is_combined(label)}
    for label, changes in tried:
        if misfit.longer_fits(label, (v.change for v in out if v.can_run)):
            continue
        row = _varied(request, answer, label, changes, rank, top)
        if row is not None:
            out.append(row)
    out = misfit.kept(out)
    least = next((v for v in out if v.change in combined), None)
    if least is not None and not least.can_run:
        # not even the least memory tried fits a card within the limits: the cheapest card
        # anywhere that holds it (the job's smallest setting, every limit lifted)
        label = f"{least.change} {misfit.ANYWHERE}"
        anywhere = combined[least.change] | misfit.lifted(request)
        row = _varied(request, answer, label, anywhere, rank, top)
        if row is not None:
            out.append(row)
    return out


# how a sized count lift's label says the replicas (``_nearness`` puts it first)
RATE_NEEDS = "the rate needs"


def _sized_lift(
    request: s.RecommendationRequest, answer: s.RecommendationResponse, rank: Ranker
) -> tuple[str, dict[str, Any]] | None:
    """An empty serving answer's GPU-count lift, sized as an expert sizes it: the fewest GPUs
    per replica that hold the model within the ITL floor, times the replicas the asked rate
    needs (serving.scale_out). Where no shape within the limits gave a replica's capacity, the
    request is re-ranked on the fewest GPUs a replica spans first (again on more, where those
    replicas miss the ITL target too) and its closest shape counted: the same pipeline, no
    capacity assumed. None where the answer has rows or fixes its count."""
    summary = answer.serving
    cons = request.constraints
    if summary is None or summary.met or answer.recommendations or cons.num_gpus is not None:
        return None
    scale: ScaleOut | None = summary._scale
    while scale is not None and scale.replicas is None:
        # each probe spans more GPUs a replica than the last (serving.scale_out), so it ends
        try:
            probe = rank(changed_request(request, {"constraints": {"max_gpus": scale.gpus}}))
        except (AppError, ValueError):
            return None
        if probe.recommendations:
            return (
                f"up to {scale.gpus} GPUs instead of {cons.max_gpus} (a replica of {scale.gpu} "
                f"holds the model on {scale.per_replica} GPUs)",
                {"constraints": {"max_gpus": scale.gpus}},
            )
        wider = probe.serving._scale if probe.serving is not None else None
        scale = wider if wider is None or wider.gpus > scale.gpus else None
    if scale is None or scale.replicas is None:
        return None
    per = f"{scale.per_replica} GPU{'s' if scale.per_replica != 1 else ''}"
    return (
        f"up to {scale.gpus} GPUs instead of {cons.max_gpus} ({RATE_NEEDS} {scale.replicas} "
        f"replica{'s' if scale.replicas != 1 else ''} of {per} on {scale.gpu})",
        {"constraints": {"max_gpus": scale.gpus}},
    )


def _varied(
    request: s.RecommendationRequest,
    answer: s.RecommendationResponse,
    label: str,
    changes: dict[str, Any],
    rank: Ranker,
    top: tuple[str, int] | None,
) -> s.WhatIfOut | None:
    """The request re-ranked with ``changes``, as a what-if row; None where the change is
    invalid for the request's other fields, or a lifted budget changes nothing."""
    try:
        changed = rank(changed_request(request, changes))
    except (AppError, ValueError):
        return None  # a variation the request's other fields make invalid is simply skipped
    first = changed.recommendations[0] if changed.recommendations else None
    if label == BUDGET_LIFTED and answer.recommendations and _within(first, request):
        # the least money already runs the job inside the budget: lifting it changes
        # nothing (a $340 pair of P40s was offered as "no budget limit" under $1,500)
        return None
    return s.WhatIfOut(
        change=label,
        top_slug=first.gpu.slug if first else None,
        top_name=first.gpu.name if first else None,
        num_gpus=first.num_gpus if first else None,
        throughput=first.throughput.value if first else None,
        unit=first.throughput.unit if first else None,
        required_gb=changed.memory.required_gb,
        can_run=changed.count,
        same_top=_configuration(first) == top,
        purchase_usd=first.cost.purchase_usd if first else None,
        hourly_usd=first.cost.hourly_usd if first else None,
        rent_gpus_paid=_gpus_paid(first),
        time_to_finish_h=first.time_to_finish_h if first else None,
        meets_latency_target=first.meets_latency_target if first else None,
        quality=_quality_switched(first, answer),
    )


def _configuration(row: s.Recommendation | None) -> tuple[str, int] | None:
    """A top pick as the what-if compares it: the card and its count, since 4 × B200 where
    the answer picks one B200 is another machine to rent or buy, not "(same)"."""
    return (row.gpu.slug, row.num_gpus) if row else None


def _quality_switched(row: s.Recommendation | None, answer: s.RecommendationResponse) -> str | None:
    """The changed top row's quality note (data/quality.yaml's cost of its format, with the
    source) where the answer's own top row does not carry it: a line switching to int4 or
    GGUF Q4_K_M weights had said nothing of what they cost, though the row it names did."""
    if row is None:
        return None
    own = answer.recommendations[0].warnings if answer.recommendations else []
    said = [w for w in row.warnings if w.startswith("quality: ") and w not in own]
    return said[0] if said else None


def _gpus_paid(row: s.Recommendation | None) -> int | None:
    """The GPUs a row's hourly price pays for (its instances' GPUs), where more than it uses."""
    if row is None or row.offer is None:
        return None
    paid = row.offer.gpus * row.offer.instances
    return paid if paid > row.num_gpus else None


def _within(row: s.Recommendation | None, request: s.RecommendationRequest) -> bool:
    """Whether a row's prices keep every budget the request sets."""
    if row is None:
        return False
    c, cost = request.constraints, row.cost
    purchase_cap, hourly_cap = c.applied_caps()
    pairs = (
        (purchase_cap, cost.purchase_usd),
        (hourly_cap, cost.hourly_usd),
        (c.max_job_cost_usd, cost.job_cost_usd),
    )
    # a price the row does not have (a rental has no purchase) is no budget it breaks
    return all(price is None or price <= cap for cap, price in pairs if cap is not None)


def price_note(v: s.NearestOut | s.WhatIfOut, acquisition: str) -> str:
    """' ($1,600 to buy)': what the configuration costs the way the question acquires it."""
    parts = []
    if acquisition in ("buy", "either") and v.purchase_usd is not None:
        parts.append(f"${v.purchase_usd:,.0f} to buy")
    if acquisition in ("rent", "either") and v.hourly_usd is not None:
        # the price of the whole instance it rents: "3 × MI300X ($9.96/h to rent)" had read as
        # three GPUs' price where the only offer is a 4-GPU instance
        # (set only where it is more than the GPUs used: whatif._gpus_paid)
        paid = v.rent_gpus_paid
        whole = f" a whole {paid}-GPU instance" if paid else ""
        parts.append(f"${v.hourly_usd:,.2f}/h to rent{whole}")
    return f" ({' or '.join(parts)})" if parts else ""


def kinds_of_gpu(n: int) -> str:
    """'1 kind of GPU', '5 kinds of GPU': a variation's can_run counts catalog cards, not GPUs
    (the CLI's "1 GPUs can run it" had meant one kind)."""
    return f"{n} kind{'s' if n != 1 else ''} of GPU"


def config_name(name: str, num_gpus: int) -> str:
    """A configuration as people say it: '2 × H100 SXM'."""
    return f"{num_gpus} × {name}" if num_gpus > 1 else name


DEADLINE_LIFTED = "no deadline"


def best_config(v: s.NearestOut | s.WhatIfOut, acquisition: str) -> str:
    """'8 × AMD Instinct MI100 32GB ($6,000 to buy)': a variation's top pick and its price; with
    the deadline lifted, the time it then takes (32 L40S "without a deadline" had read as an
    answer where they take 2.9 years)."""
    if ACQUISITION_LIFTED in v.change:
        acquisition = "either"  # its top pick may be had the other way: its price says which
    said = config_name(str(v.top_name), v.num_gpus or 1) + price_note(v, acquisition)
    if v.change == DEADLINE_LIFTED and v.time_to_finish_h is not None:
        said += f", finishing in {hours_text(v.time_to_finish_h)}"
    elif acquisition in ("rent", "either") and v.hourly_usd is not None and v.time_to_finish_h:
        # what renting it costs for the job, which a purchase budget compares with: "8 × B200
        # ($36.00/h to rent)" had been named to a $300 budget the 13-minute job keeps within
        job = costs.rent_job_usd(v.hourly_usd, v.time_to_finish_h)
        cost = f"${job:,.2f}" if job < 100 else f"${job:,.0f}"
        said += f", {cost} rented for the whole job ({hours_text(v.time_to_finish_h)})"
    return said


def _nearness(v: s.WhatIfOut) -> tuple[int, int]:
    """How far a variation strays from the question, then the most GPUs it opens first.
    Lifting a budget or the deadline is the change the question says not to make: last (a
    faster runtime that meets the deadline had stood behind "no deadline"). Changing how the
    cards are had (renting as well as buying) or whose cards they are (any vendor) comes after
    every change that keeps the asker's way, vendor and budget: "renting as well as buying,
    best RTX A6000 ($5,173 to buy)" had come before a $340 pair of P40s that buys within
    $1,500, as it opens more cards."""
    if RATE_NEEDS in v.change:
        # the count an empty serving answer's load needs keeps the load, targets and weights
        # asked: halving the rate had led "up to 9 GPUs", which carries the rate asked
        far = -1
    elif misfit.ANYWHERE in v.change:
        # the job changed and every limit lifted at once: last, as methodology §6.7y "adv"
        # says; at the budget's rank it had led an empty answer held off by its $2 job budget
        # (a LoRA rank and sequence cut, every limit lifted) before "no budget limit", which
        # runs the job as asked, since it opens more cards
        far = 3
    elif v.change in (BUDGET_LIFTED, DEADLINE_LIFTED):
        far = 2
    elif ACQUISITION_LIFTED in v.change or v.change == VENDOR_LIFTED:
        # another vendor's card is not the machine asked about: "any vendor, best 2 × MI100"
        # had come before the runtime that runs an AWQ 70B's 4 bits on the Mac asked about
        far = 1
    else:
        far = 0
    return far, -v.can_run


def count_lifted(change: str) -> bool:
    """Whether a what-if label lifts the request's GPU count (``_relaxed``)."""
    return change.startswith(("up to ", "any GPU count"))


def deadline_first(meets_deadline: str | None, first: str | None) -> bool:
    """Whether an empty answer names the change that meets its missed deadline
    (deadline.needs: the fewest GPUs, else a faster card, copies) before its nearest what-if
    (``first``, its label): where that what-if drops the deadline, or lifts the GPU count too,
    the same kind of change ranked by the objective with the cap at its widest (16 × B200
    meeting 2 h had stood beside "up to 64 GPUs, best 64 × B200": both true, read as a
    disagreement). One rule for the message and the verdict (summary.answer_summary)."""
    if not meets_deadline:
        return False
    return first is None or first == DEADLINE_LIFTED or count_lifted(first)


def reason_count(code: str, n: int) -> str:
    """``n`` cards excluded for ``code``, the verb agreeing with the count ("45 do not fit",
    "1 does not fit", "3 miss targets"): the codes are said of one card."""
    words = code.replace("_", " ")
    if n != 1:
        if words.startswith("does not "):
            words = "do not " + words.removeprefix("does not ")
        elif words.startswith("misses "):
            words = "miss " + words.removeprefix("misses ")
    return f"{n} {words}"


def empty_answer(
    answer: s.RecommendationResponse, meets_deadline: str | None = None
) -> s.EmptyAnswerOut:
    """Why an answer has no row, and the nearest configurations that would run: the what-if
    variations that let some GPU run the job, those that keep the asker's budget, deadline
    and way of acquiring first (lifting one opens the most cards, and is the change the
    question says not to make; ``_nearness``), then the most GPUs opened first.
    ``meets_deadline``: what would finish in time (deadline.needs), said first where the
    nearest change would drop the deadline (a 2.4-year run had been offered beside 256 B200s
    that meet 30 days)."""
    reasons: dict[str, int] = {}
    for x in answer.excluded:
        reasons[x.code] = reasons.get(x.code, 0) + 1
    helps = sorted((v for v in answer.what_if or [] if v.can_run), key=_nearness)
    nearest = [
        s.NearestOut(
            change=v.change,
            top_slug=v.top_slug,
            top_name=v.top_name,
            num_gpus=v.num_gpus,
            can_run=v.can_run,
            purchase_usd=v.purchase_usd,
            hourly_usd=v.hourly_usd,
            rent_gpus_paid=v.rent_gpus_paid,
            time_to_finish_h=v.time_to_finish_h,
        )
        for v in helps
    ]
    common = ", ".join(reason_count(code, n) for code, n in sorted(
        reasons.items(), key=lambda kv: -kv[1]
    ))  # fmt: skip
    message = "No GPU in the catalog can run this job within these limits"
    message += f" ({common})." if common else "."
    acquisition = answer.acquisition
    if deadline_first(meets_deadline, nearest[0].change if nearest else None):
        message += f" Nearest: {meets_deadline}"
        if nearest and count_lifted(nearest[0].change) and nearest[0].top_name:
            # the wider cap's own pick says what it optimises: the objective, not the deadline
            first = nearest[0]
            message += (
                f"; {first.change}, the {answer.objective} pick is "
                f"{best_config(first, acquisition)}"
            )
        message += "."
    elif nearest:
        first = nearest[0]
        message += f" Nearest: {first.change} lets {kinds_of_gpu(first.can_run)} run it, best "
        message += f"{best_config(first, acquisition)}."
    else:
        message += (
            " No single change tried lets one run it; the excluded list says why each is out."
        )
    message += misfit.words(answer, best_config)
    message += _unranked_savers(answer.excluded)
    return s.EmptyAnswerOut(
        message=message, reasons=reasons, relax=[n.change for n in nearest], nearest=nearest
    )


# How a misfit's reason names a memory saver that would hold it but that the ranking does not
# price (pipeline_offload's model CPU offload, evaluate's FSDP CPU offload)
UNRANKED_SAVER = "; fits with "


def unranked_savers_advice(excluded: list[s.Excluded], ranked: int) -> list[str]:
    """An answer that left out more cards a memory saver it does not price would hold than it
    ranks configurations says so at the top, as an empty answer's message does
    (``_unranked_savers``): FLUX.1 [dev] bought under $2,000 had picked a used Quadro RTX 8000
    at 33 s an image (3 ranked), 24 cards — every RTX 3090, 4090 and 5090 — left out as too
    small with "fits with model CPU offload", the way people run it at home, only in their
    reasons (an expert audit, forty-first session). Where the ranking holds more, the line
    would be noise beside its rows."""
    held = [x for x in excluded if x.code == "does_not_fit" and UNRANKED_SAVER in x.reason]
    if not held or len(held) <= ranked:
        return []
    savers = dict.fromkeys(x.reason.split(UNRANKED_SAVER, 1)[1].split(" (")[0] for x in held)
    names = ", ".join(x.name for x in held[:3])
    if len(held) > 3:
        names += f" and {len(held) - 3} more"
    one = len(held) == 1
    whose = "its" if one else "each one's"
    return [
        f"{len(held)} GPU{'' if one else 's'} left out as too small ({names}) "
        f"hold{'s' if one else ''} the job with a memory saver the ranking does not price "
        f"({'; '.join(list(savers)[:2])}): {whose} reason under "
        "excluded names the saver, its peak memory and what is not timed."
    ]


def _unranked_savers(excluded: list[s.Excluded]) -> str:
    """The cards a memory saver the ranking does not price holds (a misfit whose reason says
    "fits with": diffusers' model CPU offload, FSDP's CPU offload), counted in an empty
    answer's words: FLUX.1 [dev] under $400 had said no change lets a card run it while the
    RTX 4060 Ti 16GB's reason named fp8 with model CPU offload."""
    k = sum(1 for x in excluded if x.code == "does_not_fit" and UNRANKED_SAVER in x.reason)
    if not k:
        return ""
    if k == 1:
        return (
            " 1 that does not fit holds it with a memory saver the ranking does not price "
            "(its reason names it)."
        )
    return (
        f" {k} that do not fit hold it with memory savers the ranking does not price (their "
        "reasons name them)."
    )
