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
) -> s.Recommendation:
    """A one-replica serving row on ``gpus`` GPUs with no rented instance: what deploy_for
    reads of a row."""
    sv = SimpleNamespace(
        runtime=runtime, weight_precision=weights, kv_cache_precision=kv,
        weight_format=weight_format or WEIGHT_FORMAT[weights], max_concurrency=64,
        replicas=1, gpus_per_replica=gpus, tensor_parallel=gpus, multi_gpu="tensor",
    )  # fmt: skip
    memory = SimpleNamespace(breakdown={"weights": weights_gb}, available_gb=available_gb)
    return cast(s.Recommendation, SimpleNamespace(serving=sv, offer=None, memory=memory))


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
    # where the publisher has no FP8 checkpoint (Meta, Llama 3.3 70B), the runtime quantises at
    # load and says so where the 16-bit weights outgrow the GPUs
    llama = _row("vllm", "fp8", gpus=1, weights_gb=70.6, available_gb=80.0)
    out = _deploy(llama, "meta-llama/Llama-3.3-70B-Instruct")
    args = _serve_args(out.command)
    assert args[2] == "meta-llama/Llama-3.3-70B-Instruct"
    assert args[args.index("--quantization") + 1] == "fp8"
    assert _quantises_at_load(out.notes)


def test_each_fp8_checkpoint_is_its_publishers_own() -> None:
    """serve_repo_fp8 names the publisher's own FP8 release of the repo a preset serves (the
    same organisation, the same model with -FP8), never a third party's quantisation."""
    named = 0
    for preset in presets.load_presets().values():
        repo = preset.serve_repo or presets.hf_repo(preset)
        fp8 = deploy.published().get(repo or "", deploy.Published()).fp8_repo
        if fp8 is None:
            continue
        named += 1
        assert repo is not None and fp8 == f"{repo}-FP8", (preset.id, fp8)
        assert preset.defaults.get("released_format") is None, preset.id
    assert named >= 5  # Qwen3 8B, 32B, 30B-A3B, 235B-A22B; Llama 3.1 405B


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
        assert spec["run"] == deploy_out["command"] + "\n"


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
