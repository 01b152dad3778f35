"""The checkpoint a serve command starts is the one its plan's weights and KV cache are in: a
model released in fp8 (DeepSeek-V3/R1) or MXFP4 (gpt-oss) starts as published, an fp8 plan
starts the publisher's own FP8 checkpoint where there is one (Qwen3, Llama 3.1 405B), and
trtllm-serve is told an fp8 KV cache through its LLM API options file."""

from __future__ import annotations

import shlex
from types import SimpleNamespace
from typing import Any, cast

import yaml
from fastapi.testclient import TestClient

from app.domain.serving import WEIGHT_FORMAT
from app.recommend import deploy, presets
from app.recommend import schemas as s
from app.recommend.quality import AS_RELEASED


def _row(
    runtime: str,
    weights: str,
    kv: str = "bf16",
    gpus: int = 8,
    weights_gb: float = 671.0,
    available_gb: float = 8 * 80.0,
    weight_format: str | None = None,
    vendor: str = "nvidia",
) -> s.Recommendation:
    """A one-replica serving row on ``gpus`` GPUs with no rented instance: what deploy_for
    reads of a row."""
    sv = SimpleNamespace(
        runtime=runtime, weight_precision=weights, kv_cache_precision=kv,
        weight_format=weight_format or WEIGHT_FORMAT[weights], max_concurrency=64,
        replicas=1, gpus_per_replica=gpus, tensor_parallel=gpus, multi_gpu="tensor",
    )  # fmt: skip
    memory = SimpleNamespace(breakdown={"weights": weights_gb}, available_gb=available_gb)
    gpu = SimpleNamespace(vendor=vendor, slug="gpu", name="GPU", compute_capability=None)
    return cast(
        s.Recommendation,
        SimpleNamespace(
            serving=sv, offer=None, memory=memory, gpu=gpu, cost=SimpleNamespace(rent=None)
        ),
    )


def _deploy(row: s.Recommendation, model: str) -> s.DeployOut:
    out = deploy.deploy_for(row, model, 4096)
    assert out is not None
    return out


def _serve_args(command: str) -> list[str]:
    """The server's own command line: the last line, after any file the command writes."""
    return shlex.split(command.splitlines()[-1])


def _quantises_at_load(notes: list[str]) -> bool:
    return any("quantises at load" in n or "published FP8 checkpoint" in n for n in notes)


def test_a_model_released_in_fp8_starts_its_own_checkpoint_unquantised() -> None:
    """DeepSeek-V3/R1 publish FP8 weights only (config.json quantization_config fp8): the
    repo the command starts is the FP8 checkpoint, so --quantization fp8 and its note that the
    16-bit weights do not fit (and a published FP8 checkpoint should be served instead) were
    wrong beside the row's own "fp8 weights as the model was released"."""
    for model in ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"):
        for runtime in ("vllm", "sglang"):
            # 671 GB of fp8 weights on 8 × 80 GB: their 16-bit size would not fit
            out = _deploy(_row(runtime, "fp8"), model)
            args = _serve_args(out.command)
            assert model in args and "--quantization" not in args, out.command
            assert not _quantises_at_load(out.notes), out.notes


def test_a_model_released_in_mxfp4_needs_no_other_fp4_checkpoint() -> None:
    """gpt-oss is published in MXFP4: its fp4 rows run that release, not an NVFP4 one."""
    mxfp4 = "MXFP4 (4.25 bits per quantised weight)"
    row = _row("vllm", "fp4", gpus=1, weights_gb=63.0, available_gb=80.0, weight_format=mxfp4)
    out = _deploy(row, "openai/gpt-oss-120b")
    assert _serve_args(out.command)[2] == "openai/gpt-oss-120b"
    assert not any("NVFP4" in n for n in out.notes), out.notes
    # an fp4 plan in another format than the release still needs its checkpoint
    nvfp4 = _deploy(_row("vllm", "fp4", gpus=1, weights_gb=66.0), "openai/gpt-oss-120b")
    assert any("NVFP4" in n for n in nvfp4.notes)


def test_an_fp8_plan_starts_the_publishers_fp8_checkpoint() -> None:
    """Qwen3-235B-A22B at fp8 on 4 × H100 started the 470 GB BF16 repo with --quantization
    fp8, which loads the 16-bit weights first and runs out of memory on 320 GB; Qwen publishes
    Qwen/Qwen3-235B-A22B-FP8, which loads at 8 bits."""
    row = _row("vllm", "fp8", gpus=4, weights_gb=235.0, available_gb=4 * 80.0)
    out = _deploy(row, "Qwen/Qwen3-235B-A22B")
    args = _serve_args(out.command)
    assert args[2] == "Qwen/Qwen3-235B-A22B-FP8" and "--quantization" not in args
    assert not _quantises_at_load(out.notes), out.notes
    sglang = _serve_args(_deploy(_row("sglang", "fp8", gpus=4), "Qwen/Qwen3-235B-A22B").command)
    assert sglang[sglang.index("--model-path") + 1] == "Qwen/Qwen3-235B-A22B-FP8"
    # 16-bit plans keep the repo they are published in
    bf16 = _serve_args(_deploy(_row("vllm", "bf16", gpus=8), "Qwen/Qwen3-235B-A22B").command)
    assert bf16[2] == "Qwen/Qwen3-235B-A22B"
    # where no FP8 checkpoint is named, the runtime quantises at load and says so where the
    # 16-bit weights outgrow the GPUs
    llama = _row("vllm", "fp8", gpus=1, weights_gb=70.6, available_gb=80.0)
    out = _deploy(llama, "example-org/Model-70B-Instruct")
    args = _serve_args(out.command)
    assert args[2] == "example-org/Model-70B-Instruct"
    assert args[args.index("--quantization") + 1] == "fp8"
    assert _quantises_at_load(out.notes)


def test_each_fp8_checkpoint_is_its_publishers_own_or_nvidias() -> None:
    """serve_repo_fp8 names the publisher's own FP8 release of the repo a preset serves (the
    same organisation, the same model with -FP8), else NVIDIA's Model Optimizer export of that
    same model (nvidia/<model>-FP8, where Meta ships none for Llama 3.x 8B/70B)."""
    named = 0
    for preset in presets.load_presets().values():
        repo = preset.serve_repo or presets.hf_repo(preset)
        fp8 = deploy.published().get(repo or "", deploy.Published()).fp8_repo
        if fp8 is None:
            continue
        named += 1
        assert repo is not None, preset.id
        assert fp8 in (f"{repo}-FP8", f"nvidia/{repo.split('/')[1]}-FP8"), (preset.id, fp8)
        assert preset.defaults.get("released_format") is None, preset.id
    assert named >= 8  # Qwen3 8B, 32B, 30B-A3B, 235B-A22B; Llama 3.1 8B, 70B, 405B, 3.3 70B


def _options_file(command: str) -> tuple[str, dict[str, Any]]:
    """(the file name, its YAML) of the heredoc that writes trtllm-serve's options file."""
    lines = command.splitlines()
    first = lines[0].split()
    assert first[:2] == ["cat", ">"] and first[3] == "<<'EOF'", lines[0]
    end = lines.index("EOF")
    return first[2], yaml.safe_load("\n".join(lines[1:end]))


def test_trtllm_serve_is_told_an_fp8_kv_cache() -> None:
    """trtllm-serve has no KV dtype flag: a plan with an fp8 KV cache ran a BF16 one with half
    the planned capacity. Its --extra_llm_api_options file carries KvCacheConfig dtype fp8, and
    the memory share, since the file's kv_cache_config replaces the one the flags build."""
    out = _deploy(_row("tensorrt-llm", "bf16", kv="fp8", gpus=2), "meta-llama/Llama-3.3-70B")
    name, options = _options_file(out.command)
    share = deploy.memory_fraction("tensorrt-llm")
    assert options == {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": share}}
    args = _serve_args(out.command)
    assert args[0] == "trtllm-serve" and args[args.index("--extra_llm_api_options") + 1] == name
    bf16 = _deploy(_row("tensorrt-llm", "bf16", kv="bf16", gpus=2), "meta-llama/Llama-3.3-70B")
    assert "\n" not in bf16.command and "--extra_llm_api_options" not in bf16.command
    plain = shlex.split(bf16.command)
    assert plain[plain.index("--kv_cache_free_gpu_memory_fraction") + 1] == str(share)


def _serving(client: TestClient, preset: str, runtime: str, **load: Any) -> list[dict[str, Any]]:
    body = {
        "workload": {"preset": preset, "task": "serving", "runtime": runtime,
                     "serving": {"concurrent_requests": 50, **load}},
        "constraints": {"acquisition": "rent"}, "limit": 30,
    }  # fmt: skip
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return [x for x in r.json()["recommendations"] if x["serving"]["runtime"] == runtime]


def _same_in_service_file(deploy_out: dict[str, Any]) -> None:
    if deploy_out["skypilot_service"] is not None:
        spec = yaml.safe_load(deploy_out["skypilot_service"])
        # as written, or inside the runtime's ROCm container on an AMD GPU
        assert spec["run"].endswith(deploy_out["command"] + "\n")
        assert spec["run"] == deploy_out["command"] + "\n" or spec["run"].startswith("docker ")


def test_deepseek_rows_say_and_start_the_same_release(read_client: TestClient) -> None:
    for preset, repo in (("deepseek-v3", "DeepSeek-V3"), ("deepseek-r1", "DeepSeek-R1")):
        rows = [r for r in _serving(read_client, preset, "vllm")
                if r["serving"]["weight_precision"] == "fp8"]  # fmt: skip
        assert rows
        for r in rows:
            d = r["serving"]["deploy"]
            assert any(AS_RELEASED in w for w in r["warnings"])
            args = _serve_args(d["command"])
            assert args[2] == f"deepseek-ai/{repo}" and "--quantization" not in args
            assert not _quantises_at_load(d["notes"]), d["notes"]
            _same_in_service_file(d)


def test_qwen3_235b_at_fp8_starts_qwens_fp8_checkpoint(read_client: TestClient) -> None:
    rows = _serving(read_client, "qwen3-235b-a22b", "vllm")
    fp8 = [r for r in rows if r["serving"]["weight_precision"] == "fp8"]
    assert any(r["gpu"]["slug"] == "h100-sxm" and r["serving"]["gpus_per_replica"] == 4
               for r in fp8)  # fmt: skip
    for r in fp8:
        d = r["serving"]["deploy"]
        args = _serve_args(d["command"])
        assert args[2] == "Qwen/Qwen3-235B-A22B-FP8" and "--quantization" not in args
        assert not _quantises_at_load(d["notes"]), d["notes"]
        _same_in_service_file(d)


def test_trtllm_rows_with_an_fp8_kv_cache_carry_it(read_client: TestClient) -> None:
    rows = _serving(
        read_client, "llama-3.3-70b", "tensorrt-llm", concurrent_requests=200,
        prompt_tokens=1000, output_tokens=300, ttft_ms_target=1500, itl_ms_target=40,
        kv_cache_precision="fp8",
    )  # fmt: skip
    assert any(r["serving"]["kv_cache_precision"] == "fp8" for r in rows)
    for r in rows:
        d = r["serving"]["deploy"]
        if r["serving"]["kv_cache_precision"] == "fp8":
            _, options = _options_file(d["command"])
            assert options["kv_cache_config"]["dtype"] == "fp8"
        else:
            assert "--extra_llm_api_options" not in d["command"]
        _same_in_service_file(d)


def test_an_int4_plan_starts_an_awq_checkpoint_never_the_16_bit_repo() -> None:
    """`vllm serve meta-llama/Llama-3.1-70B-Instruct --quantization awq` fails: that repo holds
    bf16 weights and no AWQ config. An int4 plan starts a published AWQ checkpoint, whose config
    the runtime reads (no flag, which would force the slower awq kernel over awq_marlin); with
    none named the command names a placeholder, not the 16-bit repo."""
    row = _row("vllm", "int4", gpus=1, weights_gb=37.0, available_gb=80.0)
    out = _deploy(row, "meta-llama/Llama-3.1-70B-Instruct")
    args = _serve_args(out.command)
    assert args[2] == "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"
    assert "--quantization" not in args
    assert not any("checkpoint" in n for n in out.notes), out.notes
    sglang = _serve_args(
        _deploy(_row("sglang", "int4", gpus=1), "Qwen/Qwen2.5-72B-Instruct").command
    )
    assert sglang[sglang.index("--model-path") + 1] == "Qwen/Qwen2.5-72B-Instruct-AWQ"
    # Llama 3.3 70B has no AWQ checkpoint named: a placeholder, said so, no --quantization
    none = _deploy(row, "meta-llama/Llama-3.3-70B-Instruct")
    args = _serve_args(none.command)
    assert args[2] == "<awq-int4-checkpoint-of-Llama-3.3-70B-Instruct>"
    assert "--quantization" not in args
    assert any("AWQ" in n and args[2] in n for n in none.notes), none.notes
    # int8 and fp4 without a named checkpoint: the same, never the 16-bit repo
    for weights in ("int8", "fp4"):
        other = _serve_args(_deploy(_row("vllm", weights, gpus=1), "example-org/Model-8B").command)
        assert other[2].startswith("<") and other[2].endswith("-checkpoint-of-Model-8B>")


def test_trtllm_quantised_plans_start_a_checkpoint_in_their_precision() -> None:
    """`trtllm-serve meta-llama/Llama-3.3-70B-Instruct --tp_size 1` for an fp8 plan ran the bf16
    weights (141 GB: not on one H200). It starts NVIDIA's FP8 export; fp4 NVIDIA's NVFP4 one;
    int4 (no Model Optimizer INT4-AWQ export named) a placeholder."""
    fp8 = _row("tensorrt-llm", "fp8", gpus=1, weights_gb=70.6, available_gb=141.0)
    out = _deploy(fp8, "meta-llama/Llama-3.3-70B-Instruct")
    assert _serve_args(out.command)[1] == "nvidia/Llama-3.3-70B-Instruct-FP8"
    assert not any("checkpoint" in n for n in out.notes), out.notes
    fp4 = _deploy(_row("tensorrt-llm", "fp4", gpus=1), "meta-llama/Llama-3.3-70B-Instruct")
    assert _serve_args(fp4.command)[1] == "nvidia/Llama-3.3-70B-Instruct-FP4"
    r1 = _deploy(_row("tensorrt-llm", "fp4", gpus=8), "deepseek-ai/DeepSeek-R1")
    assert _serve_args(r1.command)[1] == "nvidia/DeepSeek-R1-FP4"
    # the AutoAWQ checkpoint vLLM runs is not a Model Optimizer export: a placeholder instead
    int4 = _deploy(_row("tensorrt-llm", "int4", gpus=1), "meta-llama/Llama-3.1-70B-Instruct")
    assert _serve_args(int4.command)[1] == "<int4-awq-checkpoint-of-Llama-3.1-70B-Instruct>"
    assert any("Model Optimizer" in n for n in int4.notes)


def test_the_trtllm_setup_installs_mpi_before_the_wheel() -> None:
    """TensorRT-LLM's pip install needs libopenmpi-dev (its Linux install docs)."""
    setup = deploy.INSTALL["tensorrt-llm"].splitlines()
    assert "libopenmpi-dev" in setup[0] and "apt-get" in setup[0]
    assert setup[-1] == "pip install tensorrt-llm"


def test_llamacpp_rows_point_at_a_gguf_and_carry_their_kv_cache_type() -> None:
    """A GGUF Q4_K_M plan said "int4 weights need an AWQ (or GPTQ) checkpoint": llama.cpp reads
    GGUF. And an 8-bit KV plan ran llama.cpp's default f16 cache, twice the memory planned."""
    q4 = "GGUF Q4_K_M (4.84 bits per weight)"
    row = _row("llama.cpp", "int4", kv="bf16", gpus=1, weight_format=q4)
    out = _deploy(row, "meta-llama/Llama-3.3-70B-Instruct")
    args = _serve_args(out.command)
    assert args[args.index("-m") + 1] == "Llama-3.3-70B-Instruct-Q4_K_M.gguf"
    assert not any("AWQ" in n for n in out.notes), out.notes
    assert any("GGUF" in n and "Q4_K_M" in n for n in out.notes), out.notes
    assert "-ctk" not in args and "--flash-attn" not in args
    # an 8-bit cache: q8_0 for K and V, with flash attention on (a quantised V cache needs it);
    # llama.cpp has no fp8 type, and the note says so
    kv8 = _deploy(_row("llama.cpp", "int4", kv="fp8", gpus=1, weight_format=q4), "org/M-8B")
    args = _serve_args(kv8.command)
    assert args[args.index("-ctk") + 1] == args[args.index("-ctv") + 1] == "q8_0"
    assert args[args.index("--flash-attn") + 1] == "on"
    assert any("no fp8 KV cache type" in n for n in kv8.notes), kv8.notes


def _rented(row: s.Recommendation, slug: str, cc: str) -> s.Recommendation:
    """``row`` on a launchable one-instance AMD offer."""
    row_ns = cast(Any, row)
    row_ns.gpu = SimpleNamespace(vendor="amd", slug=slug, name=slug, compute_capability=cc)
    row_ns.offer = SimpleNamespace(
        provider="runpod", instance_type="8x_MI300X", gpus=8, tier="on-demand", instances=1,
        launchable=True,
    )  # fmt: skip
    return row


def test_amd_rows_start_the_runtimes_rocm_container_not_pypis_cuda_wheels() -> None:
    """The MI300X service file ran `pip install vllm` (a CUDA build); it now pulls AMD's ROCm
    vLLM image and runs the command in it with the GPU's device nodes. SGLang takes its
    -mi30x ROCm image; TensorRT-LLM (NVIDIA only) writes no service file and says why."""
    for runtime, image in (
        ("vllm", deploy.VLLM_ROCM_IMAGE),
        ("sglang", "lmsysorg/sglang:v0.5.5.post3-rocm700-mi30x"),
    ):
        row = _rented(_row(runtime, "bf16", gpus=8), "mi300x", "gfx942")
        out = deploy.deploy_for(row, "meta-llama/Llama-3.1-70B-Instruct", 4096, "MI300X")
        assert out is not None and out.skypilot_service is not None
        spec = yaml.safe_load(out.skypilot_service)
        assert "pip install" not in spec["setup"] and image in spec["setup"]
        run = shlex.split(spec["run"])
        assert run[:2] == ["docker", "run"] and "--device=/dev/kfd" in run
        assert run[run.index(image) + 1 :] == shlex.split(out.command)
        assert any("ROCm container" in n for n in out.notes)
    trt = _rented(_row("tensorrt-llm", "bf16", gpus=8), "mi300x", "gfx942")
    out = deploy.deploy_for(trt, "meta-llama/Llama-3.1-70B-Instruct", 4096, "MI300X")
    assert out is not None and out.skypilot_service is None
    assert any("NVIDIA GPUs only" in n for n in out.notes)
    # an AMD GPU SGLang publishes no image for: no service file, said so
    mi250 = _rented(_row("sglang", "bf16", gpus=8), "mi250", "gfx90a")
    out = deploy.deploy_for(mi250, "meta-llama/Llama-3.1-70B-Instruct", 4096, "MI250")
    assert out is not None and out.skypilot_service is None
    assert any("no ROCm container" in n for n in out.notes)
    # an NVIDIA row keeps PyPI's wheels
    nv = _row("vllm", "bf16", gpus=8)
    cast(Any, nv).offer = cast(Any, _rented(_row("vllm", "bf16"), "x", "x")).offer
    out = deploy.deploy_for(nv, "meta-llama/Llama-3.1-70B-Instruct", 4096, "H100")
    assert out is not None and out.skypilot_service is not None
    assert yaml.safe_load(out.skypilot_service)["setup"] == "pip install vllm\n"
