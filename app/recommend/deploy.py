"""Something to deploy: a serving row as the runtime's serve command (tensor/pipeline
parallel size, KV-cache dtype, context length, batch cap) and, where the row rents a SkyPilot
instance, a SkyPilot service file that starts it. Only flags each runtime documents:

* vLLM ``vllm serve`` (docs.vllm.ai, "Engine arguments"): --tensor-parallel-size,
  --pipeline-parallel-size, --max-model-len, --kv-cache-dtype, --max-num-seqs,
  --gpu-memory-utilization, --quantization, and --data-parallel-size ("Data Parallel
  Deployment": DP=4 × TP=2 runs 4 replicas of 2 GPUs on one 8-GPU node behind one endpoint).
* SGLang ``python -m sglang.launch_server`` (docs.sglang.ai, "Server arguments"): --model-path,
  --tp-size, --dp-size, --context-length, --kv-cache-dtype, --max-running-requests,
  --mem-fraction-static, --quantization.
* TensorRT-LLM ``trtllm-serve`` (nvidia.github.io/TensorRT-LLM, "trtllm-serve"): --tp_size,
  --pp_size, --max_batch_size, --max_seq_len, --kv_cache_free_gpu_memory_fraction, and
  --extra_llm_api_options (a YAML file of LLM API arguments: ``kv_cache_config`` is its
  KvCacheConfig, whose ``dtype`` sets the KV cache's on the PyTorch backend).
* llama.cpp ``llama-server`` (its tools/server README): -m, -c, -ngl, -np, --split-mode, and
  -ctk / -ctv (--cache-type-k/-v: f16, q8_0, ...; a quantised V cache needs flash attention,
  ``-fa, --flash-attn [on|off|auto]`` in current builds, a bare -fa in older ones).
* SkyPilot service YAML (docs.skypilot.co, "Service YAML spec"): service.readiness_probe,
  service.replicas, resources.accelerators / cloud / instance_type / ports.

* mlx-lm ``mlx_lm.server`` (ml-explore/mlx-lm README and mlx_lm/server.py): --model, --host,
  --port, --decode-concurrency (requests decoded together), --prefill-step-size.

PyPI's vllm, sglang and torch wheels are CUDA builds: on an AMD GPU the service runs the
runtime's ROCm container instead (``rocm_image``), and TensorRT-LLM, NVIDIA's alone, has none;
on Intel Gaudi vLLM is the vllm-gaudi plugin over a device-less vLLM build, on Intel's Arc and
Data Center GPUs vLLM's XPU build (``setup_for``).
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from app.domain import efficiency
from app.domain import serving_encoder as se
from app.domain.serving import deploy_context, weights_name
from app.offers.launch import TaskDumper
from app.recommend import presets
from app.recommend import schemas as s
from app.recommend.presets import LongContext
from app.shipped.rules import DATA_DIR, load_efficiency
from app.vocab import DATA_PARALLEL_SERVERS, HALF_PRECISIONS, runtime_name

PORT = 8000


def memory_fraction(runtime: str, tp: int = 1) -> float:
    """The share of memory the runtime is told it may take at ``tp`` tensor-parallel GPUs: the
    one the serving plan and LLM inference assume (data/efficiency.yaml ``serving_runtimes``,
    efficiency.runtime_share): vLLM's gpu_memory_utilization 0.9, TensorRT-LLM's
    free_gpu_memory_fraction 0.9; SGLang's 0.88 is its fallback where it cannot read the GPU's
    memory (0.5 computes its own from it, which the SGLang command leaves to it)."""
    return efficiency.runtime_share(load_efficiency(), runtime, tp)[0]


class _Dumper(yaml.SafeDumper):
    """Multi-line commands as literal blocks, the way SkyPilot files are written."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None
    )


_Dumper.add_representer(str, _str)


def _fp8_kv(sv: s.ServingOut) -> bool:
    return sv.kv_cache_precision == "fp8"


@dataclass(frozen=True, slots=True)
class Published:
    """What is published of a serve repo: the format its weights are released in (a preset's
    ``released_format``: DeepSeek-V3's fp8, gpt-oss's mxfp4; None for 16-bit) and its FP8, int4
    AWQ and NVFP4 checkpoints (``serve_repo_fp8`` / ``_awq`` / ``_fp4``)."""

    released: str | None = None
    fp8_repo: str | None = None
    awq_repo: str | None = None
    fp4_repo: str | None = None


@lru_cache(maxsize=8)
def published(data_dir: Path = DATA_DIR) -> dict[str, Published]:
    """Each preset's serve repo (the ``model`` a serving answer starts) → what it publishes."""
    out: dict[str, Published] = {}
    for preset in presets.load_presets(data_dir).values():
        repo = preset.serve_repo or presets.hf_repo(preset)
        found = Published(
            preset.defaults.get("released_format"),
            preset.serve_repo_fp8,
            preset.serve_repo_awq,
            preset.serve_repo_fp4,
        )
        if repo is not None and found != Published():
            out[repo] = found
    return out


def publisher_fp8(preset_id: str | None, data_dir: Path = DATA_DIR) -> str | None:
    """The FP8 checkpoint an fp8 serving plan of the preset starts (``_published_repo``) where
    the model's own publisher ships it (Qwen/Qwen3-32B-FP8 beside Qwen/Qwen3-32B; Meta's
    Llama-3.1-405B-Instruct-FP8): the publisher's own FP8 checkpoint, published beside the
    16-bit weights the model was released in, whose quality is the publisher's to state, not a
    third party's quantisation measured on another model; None where the FP8 checkpoint is
    another's (NVIDIA's Model Optimizer exports of Llama 3.1 8B and 70B) or none is named.
    The publisher is the repo's owner on the Hub."""
    preset = presets.load_presets(data_dir).get(preset_id or "")
    if preset is None or preset.serve_repo_fp8 is None:
        return None
    repo = preset.serve_repo or presets.hf_repo(preset)
    if repo is None or _owner(repo) != _owner(preset.serve_repo_fp8):
        return None
    return preset.serve_repo_fp8


def _owner(repo: str) -> str:
    return repo.split("/", 1)[0].lower()


def long_contexts(data_dir: Path = DATA_DIR) -> dict[str, LongContext]:
    """Each preset's ``long_context`` (presets.Preset.long_context), by preset id."""
    return {
        pid: p.long_context
        for pid, p in presets.load_presets(data_dir).items()
        if p.long_context is not None
    }


def _rope_args(runtime: str, long: LongContext, context: int) -> list[str] | None:
    """The flags that turn the preset's RoPE scaling on for ``context`` tokens; None where
    the runtime takes it only from the checkpoint's config.json.

    * vLLM 0.10 (the line the plan prices): ``--hf-overrides`` with ``rope_scaling`` (its
      context-extension example, docs.vllm.ai/en/v0.10.2/examples/offline_inference/
      context_extension.html); it then derives original × factor as the longest
      --max-model-len (above the config's 40,960 it refuses one without it).
    * SGLang: ``--json-model-override-args`` (the Qwen3 README's SGLang line). SGLang derives
      the context from max_position_embeddings alone when rope_scaling names
      original_max_position_embeddings (sglang hf_transformers_utils.get_context_length), so
      --context-length beyond 40,960 is refused unless the override raises that too.
    * llama.cpp: ``--rope-scaling yarn --rope-scale F --yarn-orig-ctx N`` (llama.cpp
      tools/server README; the Qwen3 README's llama.cpp line)."""
    rope = long.rope_scaling(context)
    if runtime == "vllm":
        return ["--hf-overrides", json.dumps({"rope_scaling": rope})]
    if runtime == "sglang":
        derived = int(long.original * long.factor_for(context))
        over = {"rope_scaling": rope, "max_position_embeddings": derived}
        return ["--json-model-override-args", json.dumps(over)]
    if runtime == "llama.cpp":
        return [
            "--rope-scaling",
            long.rope_type,
            "--rope-scale",
            f"{long.factor_for(context):g}",
            "--yarn-orig-ctx",
            str(long.original),
        ]
    return None


def _with_rope(
    runtime: str, args: list[str], long: LongContext | None, context: int, notes: list[str]
) -> list[str]:
    """The command with the preset's RoPE scaling where ``context`` is beyond its native one
    (else as it is), and in ``notes`` what to say of it: where the flag came from, and the
    publisher's caveat that static YaRN rescales every request (Qwen: "potentially impacting
    performance on shorter texts")."""
    if long is None or context <= long.native:
        return args
    rope = long.rope_scaling(context)
    factor = long.factor_for(context)
    flags = _rope_args(runtime, long, context)
    said = (
        f"a {context:,}-token context is beyond the model's native {long.native:,}: "
        f"{long.rope_type} RoPE scaling, factor {factor:g} over its "
        f"{long.original:,} trained positions"
    )
    if flags is None:
        said += (
            f' — add "rope_scaling": {json.dumps(rope)} to the checkpoint\'s config.json '
            f"before starting {runtime_name(runtime)} (the publisher's route for other "
            "frameworks)"
        )
    else:
        at = next((i for i, a in enumerate(args) if a in ("--host", "--port")), len(args))
        args = [*args[:at], *flags, *args[at:]]
    if runtime == "vllm":
        said += (
            " (vLLM built on Transformers 5 reads rope_parameters, with rope_theta, instead: "
            "docs.vllm.ai, Context Extension)"
        )
    if factor > long.factor:
        said += f"; beyond the {long.original * long.factor:,.0f} tokens the publisher validated"
    said += (
        "; static scaling applies to every request and, the publisher warns, may lower "
        "quality on short prompts: where most requests are short, serve the long ones on "
        "replicas of their own"
    )
    notes.append(said)
    return args


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The repo a serve command starts, the --quantization it passes, and what it needs said."""

    repo: str
    quantization: str | None = None
    notes: tuple[str, ...] = ()


def _as_released(sv: s.ServingOut, released: str) -> bool:
    """Whether the row runs the weights in the format its repo publishes them in: by the
    format's own name where the row names one (gpt-oss's MXFP4), else by its precision."""
    return weights_name(sv.weight_precision, sv.weight_format).lower() == released


def checkpoint(row: s.Recommendation, model: str) -> Checkpoint:
    """The checkpoint that starts the row's weights: the repo as published where the row runs
    its weights as released, a published checkpoint in the row's weight format where one is
    named (FP8, int4 AWQ, NVFP4), vLLM's and SGLang's load-time FP8 quantisation of the repo,
    else a placeholder for the checkpoint the plan needs: never the 16-bit repo under a
    quantised plan's name. llama.cpp reads a GGUF file (``_llamacpp``), not the repo."""
    sv = row.serving
    assert sv is not None
    pub = published().get(model, Published())
    if sv.runtime == "llama.cpp":
        return Checkpoint(model, None, (_gguf_note(sv, model),))
    if sv.runtime == "mlx":
        return _mlx_checkpoint(sv, model)
    if pub.released is not None and _as_released(sv, pub.released):
        return Checkpoint(model)
    repo = _published_repo(row, pub)
    if repo is not None:
        # a checkpoint stored in the plan's format loads at its bits, its quantisation read off
        # its config (vLLM's and SGLang's AWQ and ModelOpt detection): no flag, no 16-bit copy
        return Checkpoint(repo)
    if sv.weight_precision == "fp8" and sv.runtime != "tensorrt-llm":
        notes: tuple[str, ...] = ()
        if _sixteen_bit_overflows(row):
            # vLLM's FP8 docs: online quantisation loads the model at its original precision
            notes = (
                "--quantization fp8 quantises at load, after the 16-bit weights are loaded, "
                "which do not fit these GPUs: serve a published FP8 checkpoint of the model "
                "instead",
            )
        return Checkpoint(model, "fp8", notes)
    need = _needs(sv, rocm(row))
    if need is None:
        return Checkpoint(model)
    kind, note = need
    if model.startswith("<"):
        return Checkpoint(model, None, (note,))
    placeholder = f"<{kind}-checkpoint-of-{model.rsplit('/', 1)[-1]}>"
    return Checkpoint(placeholder, None, (f"{note}: replace {placeholder} with it",))


# mlx-lm quantises with mlx_lm.convert -q (--q-bits 4 by default, 8 for 8 bits): its own
# format, not AWQ or GPTQ (mlx-lm README, "Quantize")
MLX_BITS = {"int4": 4, "fp4": 4, "int8": 8}


def _mlx_checkpoint(sv: s.ServingOut, model: str) -> Checkpoint:
    """The repo mlx_lm.server loads: the 16-bit one as published, else an MLX-quantised copy
    of it at the plan's bits (a placeholder, with the command that makes it)."""
    bits = MLX_BITS.get(sv.weight_precision)
    if bits is None:
        return Checkpoint(model)
    note = (
        f"{bits}-bit weights under MLX are its own quantised format: make them with "
        f"`mlx_lm.convert --hf-path {model} -q --q-bits {bits}` (or take an mlx-community one)"
    )
    if model.startswith("<"):
        return Checkpoint(model, None, (note,))
    placeholder = f"<mlx-{bits}bit-of-{model.rsplit('/', 1)[-1]}>"
    return Checkpoint(placeholder, None, (f"{note}: replace {placeholder} with it",))


def _published_repo(row: s.Recommendation, pub: Published) -> str | None:
    """The named checkpoint in the row's weight format that its runtime loads, if any."""
    sv = row.serving
    assert sv is not None
    w = sv.weight_precision
    if w == "fp8":
        return pub.fp8_repo
    if w == "int4" and sv.runtime != "tensorrt-llm":
        # AutoAWQ checkpoints; TensorRT-LLM runs Model Optimizer's INT4-AWQ exports instead
        return pub.awq_repo
    if w == "fp4" and not rocm(row):
        # NVIDIA's NVFP4 exports name Blackwell as their hardware, not AMD's MXFP4 GPUs
        return pub.fp4_repo
    return None


def _needs(sv: s.ServingOut, on_rocm: bool) -> tuple[str, str] | None:
    """(the placeholder's kind, a note on the checkpoint the plan needs) where the repo cannot
    be loaded as the plan's weights; None for 16-bit weights."""
    w = sv.weight_precision
    trtllm = sv.runtime == "tensorrt-llm"
    if w == "fp8" and trtllm:
        # trtllm-serve takes no --quantization: TensorRT-LLM runs pre-quantised checkpoints and
        # quantises offline with Model Optimizer (its docs, "Quantization")
        return "fp8", (
            "trtllm-serve runs the checkpoint's own precision: fp8 weights need an FP8 "
            "checkpoint of the model (e.g. one exported with NVIDIA's Model Optimizer)"
        )
    if w == "int4" and trtllm:
        return "int4-awq", (
            "trtllm-serve runs the checkpoint's own precision: int4 weights need an INT4-AWQ "
            "checkpoint of the model exported with NVIDIA's Model Optimizer"
        )
    if w == "int4":
        return "awq-int4", "int4 weights need an AWQ (or GPTQ) int4 checkpoint of the model"
    if w == "fp4" and on_rocm:
        return "mxfp4", "fp4 weights need an MXFP4 checkpoint of the model (e.g. AMD's Quark ones)"
    if w == "fp4":
        return (
            "nvfp4",
            "fp4 weights need an NVFP4 checkpoint of the model (e.g. NVIDIA's -FP4 ones)",
        )
    if w == "int8":
        return "w8a8", "int8 weights need a W8A8 checkpoint of the model"
    return None


def rocm(row: s.Recommendation) -> bool:
    """Whether the row's GPU runs ROCm (an AMD GPU): PyPI's CUDA wheels do not run there."""
    return row.gpu.vendor == "amd"


def visible_devices(row: s.Recommendation) -> str:
    """The variable that gives each copy of a server its own GPUs on the row's platform."""
    return "HIP_VISIBLE_DEVICES" if rocm(row) else "CUDA_VISIBLE_DEVICES"


def model_named(model: str | None, notes: list[str]) -> str:
    """The model a serve command names: the answer's id, else a placeholder ``notes`` says to
    replace (a custom model has no Hugging Face id the answer knows)."""
    if model is not None:
        return model
    notes.append("replace <your-model> with the model's Hugging Face id or path")
    return "<your-model>"


# GGUF's names for the weights a llama.cpp plan runs, where its format is not a GGUF one already
# (llama.cpp's tools/quantize: F16, BF16, Q8_0, MXFP4)
GGUF_TYPES = {"bf16": "BF16", "fp16": "F16", "int8": "Q8_0", "mxfp4": "MXFP4"}


def gguf_type(sv: s.ServingOut) -> str | None:
    """The GGUF type of the row's weights (the plan's Q4_K_M, Q8_0 for int8); None where GGUF
    has none (fp8, NVFP4)."""
    name = weights_name(sv.weight_precision, sv.weight_format)
    if name.startswith("GGUF "):
        return name.split()[1]
    return GGUF_TYPES.get(name.lower())


def _gguf_note(sv: s.ServingOut, model: str) -> str:
    kind = gguf_type(sv)
    if kind is not None:
        return (
            "llama.cpp reads a GGUF file, not the Hugging Face repo: point -m at a "
            f"{kind} GGUF of {model}"
        )
    return (
        f"llama.cpp reads GGUF files, which have no {sv.weight_precision} weight type: point -m "
        f"at a GGUF of {model} near the plan's size (Q8_0 for 8 bits, Q4_K_M for 4)"
    )


def _vllm(
    model: str,
    sv: s.ServingOut,
    context: int,
    tp: int,
    pp: int,
    dp: int,
    quant: str | None = None,
) -> list[str]:
    args = ["vllm", "serve", model, "--tensor-parallel-size", str(tp)]
    if pp > 1:
        args += ["--pipeline-parallel-size", str(pp)]
    if dp > 1:
        args += ["--data-parallel-size", str(dp)]
    args += ["--max-model-len", str(context), "--max-num-seqs", str(_per_replica(sv))]
    args += ["--gpu-memory-utilization", str(memory_fraction("vllm"))]
    if _fp8_kv(sv):
        args += ["--kv-cache-dtype", "fp8"]
    if quant:
        args += ["--quantization", quant]
    return [*args, "--port", str(PORT)]


def _sglang(
    model: str,
    sv: s.ServingOut,
    context: int,
    tp: int,
    pp: int,
    dp: int,
    quant: str | None = None,
) -> list[str]:
    args = ["python", "-m", "sglang.launch_server", "--model-path", model, "--tp-size", str(tp)]
    if pp > 1:
        args += ["--pp-size", str(pp)]
    nodes = _nodes(sv)
    if nodes > 1:
        # every server runs this command with its own --node-rank (deploy_for's note)
        args += ["--nnodes", str(nodes), "--node-rank", "0"]
        args += ["--dist-init-addr", "<first-server-ip>:20000"]
    if dp > 1:
        args += ["--dp-size", str(dp)]
    args += ["--context-length", str(context)]
    args += ["--max-running-requests", str(_per_replica(sv))]
    # SGLang 0.5 computes mem_fraction_static from the GPU's memory and tp size, the share
    # the plan prices (efficiency.ReserveRule): a fixed flag would override it
    spec = efficiency.serving_spec(load_efficiency(), "sglang")
    if spec is None or spec.reserve_rule is None:
        args += ["--mem-fraction-static", str(memory_fraction("sglang", tp))]
    if _fp8_kv(sv):
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    if quant:
        args += ["--quantization", quant]
    return [*args, "--host", "0.0.0.0", "--port", str(PORT)]


def _trtllm(
    model: str,
    sv: s.ServingOut,
    context: int,
    tp: int,
    pp: int,
    dp: int,
    quant: str | None = None,
) -> list[str]:
    args = ["trtllm-serve", model, "--tp_size", str(tp), "--pp_size", str(pp)]
    args += ["--max_batch_size", str(_per_replica(sv)), "--max_seq_len", str(context)]
    if _trtllm_options(sv):
        # trtllm-serve 1.0 has no KV dtype flag: the file's kv_cache_config carries it, and
        # replaces the KvCacheConfig the flags build (update_llm_args_with_extra_dict), memory
        # share too
        args += ["--extra_llm_api_options", TRTLLM_OPTIONS]
    else:
        args += ["--kv_cache_free_gpu_memory_fraction", str(memory_fraction("tensorrt-llm"))]
    return [*args, "--host", "0.0.0.0", "--port", str(PORT)]


# the LLM API options file the trtllm-serve command writes beside itself
TRTLLM_OPTIONS = "extra_llm_api_options.yaml"


def _trtllm_options(sv: s.ServingOut) -> dict[str, object]:
    """trtllm-serve's --extra_llm_api_options for the plan: an fp8 KV cache (KvCacheConfig
    dtype, the PyTorch backend's; its default "auto" follows the checkpoint, a 16-bit cache
    for a 16-bit one), empty where the flags say it all."""
    if not _fp8_kv(sv):
        return {}
    share = memory_fraction("tensorrt-llm")
    return {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": share}}


def _files(sv: s.ServingOut) -> str:
    """The shell lines that write the files the command reads, before it (a heredoc each)."""
    options = _trtllm_options(sv) if sv.runtime == "tensorrt-llm" else {}
    if not options:
        return ""
    text = yaml.safe_dump(options, sort_keys=False, default_flow_style=False)
    return f"cat > {TRTLLM_OPTIONS} <<'EOF'\n{text}EOF\n"


def _llamacpp(
    model: str,
    sv: s.ServingOut,
    context: int,
    tp: int,
    pp: int,
    dp: int,
    quant: str | None = None,
) -> list[str]:
    slots = _per_replica(sv)
    kind = gguf_type(sv)
    gguf = model.rsplit("/", 1)[-1] + (f"-{kind}" if kind else "") + ".gguf"
    # -c is the KV cache for all slots together: each of -np slots gets c ÷ np
    args = ["llama-server", "-m", gguf, "-c", str(context * slots), "-np", str(slots)]
    args += ["-ngl", "999"]
    if sv.gpus_per_replica > 1:
        args += ["--split-mode", "row" if sv.multi_gpu == "tensor" else "layer"]
    if sv.kv_cache_precision not in HALF_PRECISIONS:
        # an 8-bit cache is q8_0, llama.cpp's only 8-bit cache type (it has no fp8 one), and a
        # quantised V cache needs flash attention on (llama-context: "V cache quantization
        # requires flash_attn"); the tools/server README's current spelling, value required
        args += ["--flash-attn", "on", "-ctk", "q8_0", "-ctv", "q8_0"]
    return [*args, "--host", "0.0.0.0", "--port", str(PORT)]


def _mlx(
    model: str,
    sv: s.ServingOut,
    context: int,
    tp: int,
    pp: int,
    dp: int,
    quant: str | None = None,
) -> list[str]:
    """mlx-lm's OpenAI-compatible server (its README: ``mlx_lm.server --model <repo>``): one
    device, requests decoded together up to --decode-concurrency (BatchGenerator; default 32,
    the plan's cap per replica), prompts chunked at --prefill-step-size. The context is each
    request's own (MLX grows its KV cache as it goes): no flag sizes it."""
    args = ["mlx_lm.server", "--model", model]
    args += ["--decode-concurrency", str(_per_replica(sv))]
    spec = efficiency.serving_spec(load_efficiency(), "mlx")
    if spec is not None:
        args += ["--prefill-step-size", str(spec.chunk_tokens)]
    return [*args, "--host", "0.0.0.0", "--port", str(PORT)]


BUILDERS = {
    "vllm": _vllm,
    "sglang": _sglang,
    "tensorrt-llm": _trtllm,
    "llama.cpp": _llamacpp,
    "mlx": _mlx,
}
# the runtimes that run several replicas of one server on one node themselves (``dp``)
DATA_PARALLEL = frozenset(DATA_PARALLEL_SERVERS)
# The CUDA setup: PyPI's wheels are CUDA builds. TensorRT-LLM's pip install needs MPI's
# development files first (its docs, "Installing on Linux via pip": apt-get install
# libopenmpi-dev).
INSTALL = {
    "vllm": "pip install vllm",
    "sglang": 'pip install "sglang[all]"',
    "tensorrt-llm": "sudo apt-get update && sudo apt-get -y install libopenmpi-dev\n"
    "pip install tensorrt-llm",
    "llama.cpp": "# build llama.cpp with CUDA (cmake -B build -DGGML_CUDA=ON) or take a release",
    # mlx-lm's README: pip install mlx-lm (Apple silicon, macOS)
    "mlx": "pip install mlx-lm",
}
# Intel Gaudi: vLLM is the vllm-gaudi plugin on a vLLM built for no device, at the vLLM commit
# the plugin validated, inside Intel Gaudi's PyTorch (vllm-project/vllm-gaudi README, commit
# 0aeebefb: "Build vLLM from source for empty platform, reusing existing torch installation";
# docs.vllm.ai/projects/gaudi, Installation). PyPI's vllm is a CUDA build and does not run there.
VLLM_GAUDI_SETUP = (
    "# on Intel Gaudi software's PyTorch (its Docker image or host install): vLLM for no device "
    "plus the vllm-gaudi plugin (vllm-project/vllm-gaudi README)\n"
    "git clone https://github.com/vllm-project/vllm-gaudi\n"
    "export VLLM_COMMIT_HASH=$(git -C vllm-gaudi show "
    '"origin/vllm/last-good-commit-for-vllm-gaudi:VLLM_STABLE_COMMIT")\n'
    "git clone https://github.com/vllm-project/vllm && git -C vllm checkout $VLLM_COMMIT_HASH\n"
    "pip install -r <(sed '/^torch/d' vllm/requirements/build/cuda.txt)\n"
    "VLLM_TARGET_DEVICE=empty pip install --no-build-isolation -e vllm\n"
    "pip install -e vllm-gaudi"
)
# Intel Arc / Data Center GPU Max (XPU): vLLM's XPU build from source (docs.vllm.ai, GPU
# installation, Intel XPU tab; vllm-project/vllm docs/getting_started/installation/
# gpu.xpu.inc.md at 0d07d26c: "Currently, there are no pre-built XPU wheels";
# pip install -v -r requirements/xpu.txt, then VLLM_TARGET_DEVICE=xpu pip install
# --no-build-isolation -e .), after Intel's GPU driver
VLLM_XPU_SETUP = (
    "# vLLM's Intel XPU build (docs.vllm.ai GPU installation, Intel XPU), after Intel's GPU "
    "driver\n"
    "git clone https://github.com/vllm-project/vllm.git && cd vllm\n"
    "pip install -v -r requirements/xpu.txt\n"
    "VLLM_TARGET_DEVICE=xpu pip install --no-build-isolation -e . -v\n"
    "cd .."
)
# llama.cpp's other GPU builds (docs/build.md): Metal is on by default on macOS; SYCL for Intel
LLAMACPP_BUILDS = {
    "mps": "# build llama.cpp on macOS (cmake -B build; Metal is on by default) or take a release",
    "xpu": "# build llama.cpp with SYCL (source /opt/intel/oneapi/setvars.sh; cmake -B build "
    "-DGGML_SYCL=ON -DCMAKE_C_COMPILER=icx -DCMAKE_CXX_COMPILER=icpx)",
}
# AITER, the kernels AMD's vLLM turns on with VLLM_ROCM_USE_AITER=1, is built for Instinct
# MI300/MI350 (gfx942, gfx950) alone: vLLM's ROCm platform gates its AITER paths on them
# (vllm/platforms/rocm.py on_mi3xx), and vLLM fails to start with it on other AMD GPUs (ROCm/aiter
# issue 3294, a Radeon AI PRO R9700). The command turns it off elsewhere (MI250, W7900,
# RX 7900 XTX), where an image or a shell that set it would stop the server.
AITER_TARGETS = frozenset({"gfx942", "gfx950"})
# The ROCm route each runtime documents for AMD GPUs: its prebuilt ROCm container.
# * vLLM: AMD's rocm/vllm image (docs.vllm.ai "GPU installation", AMD ROCm tab, and
#   rocm.docs.amd.com "vLLM inference and serving on ROCm", which recommend it over building);
#   this tag is vLLM 0.10.2 on ROCm 7.0.0, the 0.10 line the plan prices
#   (serving_runtimes.vllm.version) and the image AMD's MI300X results ran
#   (tests/data/heldout_rocm_vllm.yaml).
# * SGLang: lmsysorg/sglang's ROCm images (docs.sglang.ai "AMD GPUs", Install Using Docker),
#   one per Instinct generation: -mi30x for MI300X/MI325X (gfx942), -mi35x for MI350X/MI355X
#   (gfx950); v0.5.5.post3 the 0.5.5 release nearest the priced 0.5.5.post1 with a -mi30x tag
#   in use, v0.5.6.post1 the nearest -mi35x one found. Other AMD GPUs have none.
VLLM_ROCM_IMAGE = "rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006"
SGLANG_ROCM_IMAGES = {
    "gfx942": "lmsysorg/sglang:v0.5.5.post3-rocm700-mi30x",
    "gfx950": "lmsysorg/sglang:v0.5.6.post1-rocm700-mi35x",
}
# How a ROCm container reaches the GPUs: the device nodes and video group AMD's guides pass
# (rocm.docs.amd.com, "Run ROCm Docker containers"), host networking for the port, the host's
# Hugging Face cache and token for the weights
DOCKER_RUN = (
    "docker run --rm --network=host --ipc=host --group-add=video --device=/dev/kfd "
    '--device=/dev/dri -v "$HOME/.cache/huggingface:/root/.cache/huggingface" -e HF_TOKEN'
)


def rocm_image(runtime: str, gpu: s.RankedGpu) -> str | None:
    """The ROCm container the runtime publishes for ``gpu``; None where it has none."""
    if runtime == "vllm":
        return VLLM_ROCM_IMAGE
    if runtime == "sglang":
        return SGLANG_ROCM_IMAGES.get(gpu.compute_capability or "")
    return None


@dataclass(frozen=True, slots=True)
class Setup:
    """How a rented machine gets the runtime: its setup lines and the run line around the
    command; None where no documented route runs it on this GPU (``why`` says so)."""

    setup: str | None
    run: str
    why: str | None = None


def setup_for(row: s.Recommendation, command: str) -> Setup:
    """The runtime's install for the row's GPU: PyPI's CUDA wheels on NVIDIA, the runtime's ROCm
    container on AMD (``rocm_image``), llama.cpp's HIP build; none for TensorRT-LLM on AMD."""
    sv = row.serving
    assert sv is not None
    runtime = sv.runtime
    platform = _platform(row)
    if platform == "hpu" and runtime == "vllm":
        return Setup(VLLM_GAUDI_SETUP, command)
    if platform == "xpu" and runtime == "vllm":
        return Setup(VLLM_XPU_SETUP, command)
    if runtime == "llama.cpp" and platform in LLAMACPP_BUILDS:
        return Setup(LLAMACPP_BUILDS[platform], command)
    if not rocm(row):
        return Setup(INSTALL[runtime], command)
    if runtime == "llama.cpp":
        # llama.cpp's docs/build.md, HIP: cmake -DGGML_HIP=ON with the GPU's gfx target
        target = row.gpu.compute_capability or "<gfx-target>"
        build = (
            f"# build llama.cpp with HIP (cmake -B build -DGGML_HIP=ON -DAMDGPU_TARGETS={target})"
        )
        return Setup(build, command)
    image = rocm_image(runtime, row.gpu)
    if image is None:
        why = (
            "TensorRT-LLM runs on NVIDIA GPUs only: it has no ROCm build for this AMD GPU"
            if runtime == "tensorrt-llm"
            else f"{runtime_name(runtime)} publishes no ROCm container for {row.gpu.name} "
            f"({row.gpu.compute_capability}): build it for ROCm from its source"
        )
        return Setup(None, command, why)
    docker = DOCKER_RUN
    if runtime == "vllm" and not aiter_runs(row):
        docker += " -e VLLM_ROCM_USE_AITER=0"
    return Setup(f"docker pull {image}", f"{docker} {image} {command}")


def aiter_runs(row: s.Recommendation) -> bool:
    """Whether AMD's AITER kernels run on the row's GPU (``AITER_TARGETS``)."""
    return (row.gpu.compute_capability or "") in AITER_TARGETS


def _platform(row: s.Recommendation) -> str:
    """The row's software platform: its backend where it names one (hpu for Gaudi, xpu for
    Intel's GPUs, mps for Apple), else the vendor's usual one, a Gaudi by its architecture
    (serving rows name no backend)."""
    backend = getattr(row, "backend", None)
    if backend:
        return str(backend)
    gpu = row.gpu
    if gpu.vendor == "intel":
        return "hpu" if "gaudi" in (getattr(gpu, "architecture", "") or "").lower() else "xpu"
    return {"amd": "rocm", "apple": "mps"}.get(gpu.vendor, "cuda")


def _nodes(sv: s.ServingOut) -> int:
    """Servers one replica spans: a tensor-parallel group per server, the servers pipeline
    stages (serving_step.NODE_SPANS); 1 inside one server."""
    if sv.multi_gpu != "tensor" or sv.tensor_parallel >= sv.gpus_per_replica:
        return 1
    return sv.gpus_per_replica // max(1, sv.tensor_parallel)


# How each runtime starts one replica across servers (its multi-node guide)
ACROSS_SERVERS = {
    "vllm": "start a Ray cluster over the {n} servers first (`ray start --head` on the first, "
    "`ray start --address=<first-server-ip>:6379` on the others), then run the command on the "
    "first (vLLM's multi-node serving: tensor parallel per server, pipeline across them)",
    "sglang": "run the command on each of the {n} servers, --node-rank 0 to {last}, with "
    "<first-server-ip> the first's address (SGLang's multi-node deployment)",
    "tensorrt-llm": "start the command on all {n} servers as one MPI job (Slurm `srun` or "
    "`mpirun` with TensorRT-LLM's `trtllm-llmapi-launch` before it; its multi-node guide)",
}


def _per_replica(sv: s.ServingOut) -> int:
    return max(1, sv.max_concurrency // max(1, sv.replicas))


def _layout(sv: s.ServingOut) -> tuple[int, int]:
    """(tensor parallel, pipeline parallel) for one replica."""
    if sv.multi_gpu == "layers":
        return 1, sv.gpus_per_replica
    tp = max(1, sv.tensor_parallel)
    return tp, max(1, sv.gpus_per_replica // tp)


def per_instance(row: s.Recommendation, sv: s.ServingOut) -> int:
    """Replicas the row's plan packs onto each rented instance (4 of 2 GPUs on one 8-GPU
    instance: 4); 1 where each replica has instances of its own or nothing is rented."""
    offer = row.offer
    instances = max(1, offer.instances) if offer is not None else sv.replicas
    return sv.replicas // instances if sv.replicas % instances == 0 else 1


def _service_yaml(
    row: s.Recommendation,
    sv: s.ServingOut,
    install: Setup,
    packed: int,
    accelerator: str | None,
) -> str | None:
    """The SkyPilot service file of the row's rented instance; ``packed``: its replicas on
    each instance (``per_instance``); none where no documented route installs the runtime."""
    offer = row.offer
    runtime = sv.runtime
    if offer is None or not offer.launchable or not accelerator or install.setup is None:
        return None
    # SkyServe gives every service replica a cluster of its own: replicas that share an
    # instance are one service replica running them all (the command's data parallelism)
    if packed > 1 and runtime not in DATA_PARALLEL:
        return None
    spot = offer.tier == "spot" or (
        row.cost is not None and row.cost.rent is not None and row.cost.rent.spot
    )
    resources = {
        "cloud": offer.provider,
        "instance_type": offer.instance_type,
        "accelerators": f"{accelerator}:{offer.gpus}",
        "ports": PORT,
        # the price the row was ranked at: an on-demand offer's spot price is a spot rental
        "use_spot": spot,
    }
    service: dict[str, object] = {
        "readiness_probe": "/health" if runtime in ("vllm", "sglang", "tensorrt-llm") else "/",
    }
    if spot:
        # SkyServe replaces a preempted spot replica with an on-demand one while spot capacity
        # is gone (docs.skypilot.co, serving/spot-policy: dynamic_ondemand_fallback)
        service["replica_policy"] = {
            "min_replicas": sv.replicas // packed,
            "dynamic_ondemand_fallback": True,
        }
    else:
        service["replicas"] = sv.replicas // packed
    task = {
        "name": f"serve-{row.gpu.slug}",
        "service": service,
        "resources": resources,
        "setup": install.setup + "\n",
        "run": install.run + "\n",
    }
    header = (
        f"# GPU Advisor: serve on {offer.provider} {offer.instance_type} "
        f"({sv.replicas} replica(s) × {sv.gpus_per_replica} GPU(s)"
        f"{f', {packed} on each instance' if packed > 1 else ''}); start with: "
        "sky serve up service.yaml\n"
    )
    return header + yaml.dump(task, Dumper=TaskDumper, sort_keys=False, default_flow_style=False)


def _sixteen_bit_overflows(row: s.Recommendation) -> bool:
    """Whether the row's 8-bit weights, at 16 bits, would outgrow its GPUs' memory."""
    weights = row.memory.breakdown.get("weights")
    have = row.memory.available_gb
    return weights is not None and have is not None and 2.0 * weights > have


def deploy_for(
    row: s.Recommendation,
    model: str | None,
    context: int,
    accelerator: str | None = None,
    long: LongContext | None = None,
) -> s.DeployOut | None:
    """The commands that start ``row``'s serving plan; None for runtimes with no server.
    ``long``: the preset's context extension, turned on where ``context`` exceeds its native
    context (``_with_rope``)."""
    sv = row.serving
    if sv is None or sv.runtime not in BUILDERS:
        return None
    notes: list[str] = []
    model = model_named(model, notes)
    tp, pp = _layout(sv)
    packed = per_instance(row, sv)
    dp = packed if sv.runtime in DATA_PARALLEL else 1
    ckpt = checkpoint(row, model)
    args = BUILDERS[sv.runtime](ckpt.repo, sv, context, tp, pp, dp, ckpt.quantization)
    args = _with_rope(sv.runtime, args, long, context, notes)
    command = _files(sv) + shlex.join(args)
    notes += ckpt.notes
    if sv.runtime == "llama.cpp" and sv.kv_cache_precision not in HALF_PRECISIONS:
        notes.append(
            f"llama.cpp has no {sv.kv_cache_precision} KV cache type: q8_0 (8.5 bits a value "
            "with its block scales) is its 8-bit one, and a quantised V cache needs --flash-attn "
            "on (builds before its on|off|auto form take a bare -fa)"
        )
    nodes = _nodes(sv)
    install = setup_for(row, command)
    if install.why is not None:
        notes.append(install.why)
    elif install.run != command:
        notes.append(
            f"PyPI's {runtime_name(sv.runtime)} wheels are CUDA builds: on this AMD GPU run the "
            "command "
            f"in the ROCm container, `{install.run.removesuffix(command)}<command>`"
        )
    platform = _platform(row)
    if sv.runtime == "vllm" and rocm(row) and not aiter_runs(row):
        notes.append(
            "VLLM_ROCM_USE_AITER=0: AMD's AITER kernels are built for MI300/MI350 "
            f"(gfx942, gfx950) only, and vLLM fails to start with them on {row.gpu.name} "
            f"({row.gpu.compute_capability or 'another gfx target'})"
        )
    if sv.runtime == "vllm" and platform == "hpu":
        notes.append(
            "PyPI's vllm is a CUDA build: on Intel Gaudi, vllm serve runs from vLLM built for "
            "no device plus the vllm-gaudi plugin, inside Intel Gaudi software's PyTorch "
            "(vllm-project/vllm-gaudi README: VLLM_TARGET_DEVICE=empty at its validated vLLM "
            "commit, then pip install the plugin)"
        )
    if sv.runtime == "vllm" and platform == "xpu":
        notes.append(
            "PyPI's vllm is a CUDA build: on Intel GPUs vLLM is built from source for XPU "
            "(VLLM_TARGET_DEVICE=xpu; docs.vllm.ai, GPU installation, Intel XPU)"
        )
    if sv.runtime == "mlx":
        notes.append("mlx_lm.server runs on Apple silicon (macOS): one server per Mac")
    yaml_text = _service_yaml(row, sv, install, packed, accelerator) if nodes == 1 else None
    if nodes > 1:
        how = ACROSS_SERVERS.get(sv.runtime)
        if how is not None:
            notes.append(how.format(n=nodes, last=nodes - 1))
        notes.append(
            f"one replica spans {nodes} servers on the provider's cluster network: a SkyPilot "
            "service runs each replica on one server, so none is written"
        )
    if packed > 1 and dp == 1:
        notes.append(
            f"{packed} replicas share each instance: start {packed} copies of the command on "
            f"it, each on its own {sv.gpus_per_replica} GPU(s) ({visible_devices(row)}) and "
            "port"
        )
    copies = sv.replicas // dp
    if copies > 1:
        # only a service file balances the copies itself; without one the reader does
        does = " (the service file does)" if yaml_text is not None else ""
        notes.append(f"run {copies} copies behind a load balancer{does}")
    if yaml_text is None and nodes == 1:
        notes.append(
            "no SkyPilot instance behind this row: run the command on any machine with these GPUs"
        )
    return s.DeployOut(command=command, skypilot_service=yaml_text, notes=notes)


# TEI's CUDA image for each compute capability it ships one for (its README's Docker Images
# table, 1.8), and the ROCm one of its Python backend (docs/source/en/amd_gpu.md); any other
# card builds Dockerfile-cuda for its compute capability (its custom-container docs)
TEI_VERSION = "1.8"
TEI_IMAGES = {"7.5": "turing-", "8.0": "", "8.6": "86-", "8.9": "89-", "9.0": "hopper-"}
TEI_ROCM_IMAGE = "rocm-latest"
TEI_REGISTRY = "ghcr.io/huggingface/text-embeddings-inference"
# infinity_emb's --device for each platform PyTorch runs it on (ROCm's PyTorch is "cuda")
INFINITY_DEVICES = {"cuda": "cuda", "rocm": "cuda", "mps": "mps"}
ENCODER_INSTALL = {
    "infinity": 'pip install "infinity-emb[all]"',
    "vllm-pooling": "pip install vllm",
}


def tei_image(row: s.Recommendation) -> str | None:
    """TEI's published image for the row's GPU; None where it publishes none."""
    cc = row.gpu.compute_capability or ""
    if row.gpu.vendor == "nvidia" and cc in TEI_IMAGES:
        return f"{TEI_REGISTRY}:{TEI_IMAGES[cc]}{TEI_VERSION}"
    if row.gpu.vendor == "amd":
        return f"{TEI_REGISTRY}:{TEI_ROCM_IMAGE}"
    return None


def _tei_notes(row: s.Recommendation, command: list[str], platform: str) -> list[str]:
    """Where TEI comes from on the row's GPU (``platform``, its ``_platform``): its image (the
    command's flags after it), else the build its docs give for the platform."""
    image = tei_image(row)
    if image is not None:
        # the port and the model cache, then the image with the command's flags after it
        served = f'-p {PORT}:{PORT} -v "$HOME/.cache/huggingface:/data" {image} ' + shlex.join(
            command[1:]
        )
        if platform == "rocm":
            return [
                "TEI's ROCm image runs its Python backend (its AMD GPU docs): docker run "
                f"--device=/dev/kfd --device=/dev/dri --group-add video --ipc=host {served}"
            ]
        return [
            f"in TEI's image for compute capability {row.gpu.compute_capability}: docker run "
            f"--gpus all {served}"
        ]
    if platform in ("hpu", "xpu"):
        return [
            "TEI's Intel image is built from its Dockerfile-intel: docker build . -f "
            f"Dockerfile-intel --build-arg PLATFORM={platform} (its Intel container docs)"
        ]
    if platform == "mps":
        return ["build TEI with Metal: cargo install --path router -F metal (its README)"]
    cc = (row.gpu.compute_capability or "").replace(".", "")
    return [
        "TEI publishes no image for this GPU: build one with docker build . -f Dockerfile-cuda "
        f"--build-arg CUDA_COMPUTE_CAP={cc or '<compute-capability>'} (its custom-container docs)"
    ]


def encoder_deploy(
    row: s.Recommendation, model: str | None, load: s.ServingResolvedOut | None
) -> s.DeployOut | None:
    """An encoder row's serve command: one replica's server with the batch caps the plan
    priced (serving_encoder.serve_args), where it comes from on the row's GPU, and how the
    replicas are run; None for sentence-transformers, which has no server of its own."""
    sv = row.serving
    assert sv is not None
    notes: list[str] = []
    model = model_named(model, notes)
    rt = se.RUNTIMES[sv.runtime]
    clients = load.concurrent_requests if load is not None else None
    per_replica = math.ceil(clients / max(1, sv.replicas)) if clients else None
    platform = _platform(row)
    args = se.serve_args(
        rt,
        model,
        sv.weight_precision,
        # one sequence a request, as the plan's load reads it (encoder_step._load)
        se.EncoderLoad(tokens=1),
        per_replica,
        INFINITY_DEVICES.get(platform),
        PORT,
    )
    if args is None:
        return None
    if rt.name == "tei":
        notes += _tei_notes(row, args, platform)
        if sv.weight_precision == "bf16":
            notes.append(
                "TEI's --dtype takes float16 or float32: bf16 weights run as float16, at the "
                "same tensor-core rate"
            )
    else:
        notes.append(f"install: {ENCODER_INSTALL[rt.name]}")
    if sv.replicas > 1:
        notes.append(
            f"run {sv.replicas} copies, one a GPU ({visible_devices(row)}) on its own port, "
            "behind a load balancer: the plan's replicas share nothing"
        )
    return s.DeployOut(command=shlex.join(args), notes=notes)


def context_for(w: s.ResolvedWorkload, native: int | None = None) -> int:
    """The --max-model-len a workload's serve command asks: a serving load's is
    serving.deploy_context, the rule the plan sizes a llama-server slot's KV cache by too (the
    domain's ServingSpec.context_tokens), so the -c it deploys is the memory the row counts;
    an inference job's, its prompt + output within the model's limit. ``native``: the
    preset's native context (``long_context``)."""
    if w.serving is not None:
        sv = w.serving
        spread = (sv.prompt_tokens_spread or 0) + (sv.output_tokens_spread or 0)
        return deploy_context(
            sv.prompt_tokens, sv.output_tokens, spread, w.model.max_context, native
        )
    context = need = (w.seq_len or 0) + (w.output_tokens or 0)
    if w.model.max_context:
        context = min(context, w.model.max_context) if context else w.model.max_context
    if native and context > native and need <= native:
        context = native
    return context or 4096


def attach(rows: list[s.Recommendation], w: s.ResolvedWorkload, data_dir: Path = DATA_DIR) -> None:
    """Each serving row's serve command and service file (``serving.deploy``), the one rule
    /recommendations and /estimate share: the preset's serve repo (else its Hugging Face id),
    the workload's context, and the preset's context extension where that context needs it."""
    preset = presets.load_presets(data_dir).get(w.preset or "")
    model = (preset.serve_repo or presets.hf_repo(preset)) if preset is not None else None
    long = long_contexts(data_dir).get(w.preset or "")
    context = context_for(w, long.native if long is not None else None)
    for row in rows:
        if row.serving is not None and row.serving.kind == "encoder":
            row.serving.deploy = encoder_deploy(row, model, w.serving)
            continue
        if row.serving is not None:
            acc = row.offer.accelerator if row.offer is not None else None
            row.serving.deploy = deploy_for(row, model, context, acc, long)
