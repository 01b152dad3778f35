"""Something to deploy: each serving row's command carries the plan's own layout, context,
batch cap and KV dtype, and its SkyPilot file rents the row's instance."""

from __future__ import annotations

import shlex
from typing import Any

import yaml
from fastapi.testclient import TestClient

from app.domain.cost import CloudOffer
from app.offers.launch import task_yaml


def _serving(client: TestClient, **workload: Any) -> dict[str, Any]:
    body = {
        "workload": {"task": "serving", "serving": {"concurrent_requests": 50}, **workload},
        "constraints": {"acquisition": "rent"},
    }
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_vllm_commands_carry_each_plans_layout(read_client: TestClient) -> None:
    answer = _serving(read_client, preset="llama-3.3-70b", runtime="vllm")
    rows = [r for r in answer["recommendations"] if r["serving"]["runtime"] == "vllm"]
    assert rows
    for row in rows:
        sv = row["serving"]
        deploy = sv["deploy"]
        args = shlex.split(deploy["command"])
        assert args[:3] == ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"]
        if sv["multi_gpu"] == "layers":
            assert _flag(args, "--pipeline-parallel-size") == str(sv["gpus_per_replica"])
        else:
            assert _flag(args, "--tensor-parallel-size") == str(sv["tensor_parallel"])
        serving_in = answer["workload"]["serving"]
        # no spread stated: room for twice the mean request (vLLM refuses a longer prompt)
        assert _flag(args, "--max-model-len") == str(
            2 * (serving_in["prompt_tokens"] + serving_in["output_tokens"])
        )
        assert ("--kv-cache-dtype" in args) == (sv["kv_cache_precision"] == "fp8")
        per_replica = max(1, sv["max_concurrency"] // sv["replicas"])
        assert _flag(args, "--max-num-seqs") == str(per_replica)
        offer = row["offer"]
        # replicas packed onto one instance run as vLLM's data-parallel engines behind its one
        # endpoint: the service file asks for one instance per service replica, as priced
        packed = sv["replicas"] // offer["instances"] if offer else 1
        assert _flag(args, "--data-parallel-size") == (str(packed) if packed > 1 else None)
        if offer and offer["launchable"]:
            spec = yaml.safe_load(deploy["skypilot_service"])
            assert spec["service"]["replicas"] == offer["instances"]
            assert spec["resources"]["instance_type"] == offer["instance_type"]
            assert spec["resources"]["accelerators"].endswith(f":{offer['gpus']}")
            assert deploy["command"] in spec["run"]
        else:
            assert deploy["skypilot_service"] is None


def test_a_custom_model_gets_a_placeholder_and_says_so(read_client: TestClient) -> None:
    model = {
        "family": "decoder",
        "params": 7e9,
        "layers": 32,
        "hidden_size": 4096,
        "num_heads": 32,
        "num_kv_heads": 8,
        "vocab_size": 32000,
    }
    answer = _serving(read_client, model=model, runtime="vllm")
    deploy = answer["recommendations"][0]["serving"]["deploy"]
    assert "<your-model>" in deploy["command"]
    assert any("your-model" in n for n in deploy["notes"])


def _offer() -> CloudOffer:
    return CloudOffer(
        provider="aws",
        instance_type="p5.48xlarge",
        gpus=8,
        usd_per_hour=98.32,
        spot_usd_per_hour=None,
        tier="on-demand",
        as_of="2026-11-30",
        source="skypilot catalog",
        accelerator="H100",
    )


def test_a_loopback_upload_url_is_called_out() -> None:
    text = task_yaml(_offer(), "h100-sxm", "http://127.0.0.1:8000/")
    assert "WARNING" in text and "cannot reach" in text
    public = task_yaml(_offer(), "h100-sxm", "https://advisor.example.org/")
    assert "WARNING" not in public


def test_the_launch_commands_claim_the_share_the_plan_assumed() -> None:
    """Issue #21: one reservation datum: the memory share a command passes is the one the
    serving plan and LLM inference sized the job with (data/efficiency.yaml serving_runtimes)."""
    from app.domain import efficiency
    from app.recommend import deploy
    from app.shipped.rules import load_efficiency

    table = load_efficiency()
    for runtime in ("vllm", "sglang", "tensorrt-llm"):
        assert deploy.memory_fraction(runtime) == table.serving[runtime].memory_utilization
        assert deploy.memory_fraction(runtime) == efficiency.runtime_share(table, runtime)[0]
    assert deploy.memory_fraction("sglang") == 0.88


def test_the_sglang_command_leaves_mem_fraction_static_to_sglang() -> None:
    """SGLang 0.5.5.post1 computes mem_fraction_static from the GPU's memory and tp size, the
    share the plan priced (efficiency.ReserveRule): a fixed --mem-fraction-static would
    override it, so the command passes none (vLLM's and TensorRT-LLM's still pass theirs)."""
    from types import SimpleNamespace
    from typing import cast

    from app.recommend import deploy
    from app.recommend import schemas as s

    sv = cast(
        s.ServingOut,
        SimpleNamespace(
            kv_cache_precision="bf16", max_concurrency=64, multi_gpu=None, replicas=1,
            weight_precision="bf16",
        ),
    )  # fmt: skip
    args = deploy.BUILDERS["sglang"]("Qwen/Qwen3-32B", sv, 8192, 1, 1, 1)
    assert "--mem-fraction-static" not in args and "--tp-size" in args
    vllm = deploy.BUILDERS["vllm"]("Qwen/Qwen3-32B", sv, 8192, 1, 1, 1)
    assert "--gpu-memory-utilization" in vllm


def test_a_row_without_a_service_file_does_not_say_the_file_balances_its_copies(
    read_client: TestClient,
) -> None:
    # "run 2 copies behind a load balancer (the service file does)" sat beside "no SkyPilot
    # instance behind this row": only a row with a service file has one to do it
    body = {
        "workload": {
            "preset": "llama-3-8b", "task": "serving",
            "serving": {"requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 300,
                        "ttft_ms_target": 1000, "itl_ms_target": 50},
        },
        "limit": 20,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    copied = [x["serving"] for x in r.json()["recommendations"] if x["serving"]["replicas"] > 1]
    assert any(sv["deploy"]["skypilot_service"] is None for sv in copied)
    for sv in copied:
        notes = " ".join(sv["deploy"]["notes"])
        args = shlex.split(sv["deploy"]["command"])
        # replicas packed onto one instance run as the server's own data-parallel engines
        copies = sv["replicas"] // int(_flag(args, "--data-parallel-size") or 1)
        if copies == 1:
            assert "behind a load balancer" not in notes
            continue
        assert f"run {copies} copies behind a load balancer" in notes
        assert ("the service file does" in notes) == (sv["deploy"]["skypilot_service"] is not None)


def test_replicas_that_share_an_instance_start_on_it_not_on_one_instance_each(
    read_client: TestClient,
) -> None:
    """SkyServe gives each service replica its own cluster: a plan of 4 replicas × 2 H100s on
    one 8-GPU instance wrote `replicas: 4` with the 8-GPU instance (4 instances, $32/h against
    the $8/h priced). Now one service replica per instance, running the replicas as vLLM's
    data-parallel engines (--data-parallel-size) behind its one endpoint."""
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "serving",
                     "serving": {"concurrent_requests": 200, "prompt_tokens": 1000,
                                 "output_tokens": 300, "ttft_ms_target": 1000,
                                 "itl_ms_target": 33}},
        "constraints": {"acquisition": "rent"}, "objective": "best_value", "limit": 30,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    packed = [
        x for x in r.json()["recommendations"]
        if x["offer"] and x["offer"]["launchable"] and x["serving"]["runtime"] == "vllm"
        and x["serving"]["replicas"] > x["offer"]["instances"]
    ]  # fmt: skip
    assert packed
    for x in packed:
        sv, offer = x["serving"], x["offer"]
        each = sv["replicas"] // offer["instances"]
        assert each * sv["gpus_per_replica"] <= offer["gpus"]
        args = shlex.split(sv["deploy"]["command"])
        assert _flag(args, "--data-parallel-size") == str(each)
        spec = yaml.safe_load(sv["deploy"]["skypilot_service"])
        assert spec["service"]["replicas"] == offer["instances"]
        assert spec["resources"]["accelerators"].endswith(f":{offer['gpus']}")


def test_the_context_flag_holds_the_request_lengths_the_plan_sized_the_cache_for(
    read_client: TestClient,
) -> None:
    """--max-model-len was the mean prompt plus the mean answer, so vLLM refused or cut every
    longer request; with spreads it is mean + spread, the length each request's cache holds."""
    load = {"concurrent_requests": 64, "prompt_tokens": 3000, "prompt_tokens_spread": 3000,
            "output_tokens": 800, "output_tokens_spread": 800}  # fmt: skip
    answer = _serving(read_client, preset="qwen3-30b-a3b", runtime="vllm", serving=load)
    rows = [r for r in answer["recommendations"] if r["serving"]["runtime"] == "vllm"]
    assert rows
    for row in rows:
        args = shlex.split(row["serving"]["deploy"]["command"])
        assert _flag(args, "--max-model-len") == str(3000 + 3000 + 800 + 800)


def test_a_chat_service_starts_the_published_instruct_checkpoint(read_client: TestClient) -> None:
    """Commands started base models (meta-llama/Llama-3.1-8B) for chat loads, and 405B in fp8
    as the bf16 base with --quantization fp8, which vLLM loads at 16 bits first: 810 GB on
    640 GB of GPUs. Its fp8 plans start Meta's own FP8 checkpoint, which loads at 8 bits."""
    answer = _serving(read_client, preset="llama-3.1-8b", runtime="vllm")
    cmd = answer["recommendations"][0]["serving"]["deploy"]["command"]
    assert shlex.split(cmd)[2] == "meta-llama/Llama-3.1-8B-Instruct"
    big = _serving(read_client, preset="llama-3.1-405b", runtime="vllm",
                   serving={"concurrent_requests": 16})  # fmt: skip
    fp8 = [r for r in big["recommendations"] if r["serving"]["weight_precision"] == "fp8"]
    assert fp8
    for r in fp8:
        d = r["serving"]["deploy"]
        args = shlex.split(d["command"])
        assert args[2] == "meta-llama/Llama-3.1-405B-Instruct-FP8"
        assert "--quantization" not in args
        assert not any("published FP8 checkpoint" in n for n in d["notes"])
    assert any(2 * r["memory"]["breakdown"]["weights"] > r["memory"]["available_gb"] for r in fp8)


def test_a_replica_across_servers_starts_as_each_runtime_documents(
    read_client: TestClient,
) -> None:
    # DeepSeek-V3 in FP8 (~700 GB) on H100s: tensor parallel 8 per server × 2 pipeline stages
    for runtime, pp_flag in (("vllm", "--pipeline-parallel-size"), ("sglang", "--pp-size")):
        body = {
            "workload": {
                "preset": "deepseek-v3", "task": "serving", "runtime": runtime,
                "serving": {"concurrent_requests": 16},
            },
            "constraints": {"num_gpus": 16, "acquisition": "rent", "vendors": ["nvidia"]},
            "limit": 50,
        }  # fmt: skip
        r = read_client.post("/api/v1/recommendations", json=body)
        assert r.status_code == 200, r.text
        rows = r.json()["recommendations"]
        (row,) = [x for x in rows if x["gpu"]["slug"] == "h100-sxm"]
        sv = row["serving"]
        assert (sv["gpus_per_replica"], sv["tensor_parallel"]) == (16, 8)
        args = shlex.split(sv["deploy"]["command"])
        assert _flag(args, pp_flag) == "2"
        notes = " ".join(sv["deploy"]["notes"])
        assert "2 servers" in notes and sv["deploy"]["skypilot_service"] is None
        if runtime == "sglang":
            assert _flag(args, "--nnodes") == "2" and _flag(args, "--node-rank") == "0"
            assert _flag(args, "--tp-size") == "8"
        else:
            assert "ray start --head" in notes
        if row["offer"] is not None:
            assert row["offer"]["instances"] * row["offer"]["gpus"] >= 16
