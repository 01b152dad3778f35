"""An encoder row's serve command (app/domain/serving_encoder.serve_args): each embedding
server's flags carry the batch caps its row was priced at, so the server batches as the row's
figures assume; and the hardware rules TEI's image list sets (data/frameworks.yaml
runtime:tei), with infinity where TEI has no build (serving_step.runtime_for)."""

from __future__ import annotations

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat, serving_step
from app.domain import serving_encoder as se
from app.domain.workload import ServingSpec, WorkloadSpec
from app.shipped.rules import DATA_DIR, load_rules
from tests.domain.fixtures import BERT_LARGE

GPUS = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
RULES = load_rules(DATA_DIR)


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def _args(runtime: str, precision: str = "fp16", clients: int | None = 8, **load: int) -> list[str]:
    rt = se.RUNTIMES[runtime]
    out = se.serve_args(rt, "BAAI/bge-large-en-v1.5", precision, se.EncoderLoad(256, **load),
                        clients, "cuda", 8000)  # fmt: skip
    assert out is not None
    return out


def test_tei_flags_are_the_batcher_the_row_was_priced_at() -> None:
    args = _args("tei")
    assert args[:3] == ["text-embeddings-router", "--model-id", "BAAI/bge-large-en-v1.5"]
    tei = se.RUNTIMES["tei"]
    # the token cap the plan divided by the sequence's tokens is the one the server is given
    tokens = int(_flag(args, "--max-batch-tokens"))
    assert tokens == tei.batch_tokens
    assert tokens // 256 == se.batch_cap(tei, se.EncoderLoad(256))
    assert "--max-batch-requests" not in args  # TEI caps no sequences unless told
    assert _flag(args, "--max-client-batch-size") == "32" and _flag(args, "--port") == "8000"
    # TEI's --dtype has no bfloat16: bf16 weights run as float16; fp32 as float32
    assert _flag(_args("tei", "bf16"), "--dtype") == "float16"
    assert _flag(_args("tei", "fp32"), "--dtype") == "float32"


def test_tei_admits_what_the_load_sends() -> None:
    # a request of 64 inputs passes TEI's 32-input default only when the flag is raised
    assert _flag(_args("tei", inputs=64), "--max-client-batch-size") == "64"
    # more clients on a replica than TEI's 512 would be refused: the flag lets them queue
    assert "--max-concurrent-requests" not in _args("tei", clients=512)
    assert _flag(_args("tei", clients=600), "--max-concurrent-requests") == "600"


def test_vllm_pooling_pins_the_batch_it_was_priced_at() -> None:
    args = _args("vllm-pooling", "bf16")
    pooling = se.RUNTIMES["vllm-pooling"]
    assert args[:4] == ["vllm", "serve", "BAAI/bge-large-en-v1.5", "--runner"]
    assert _flag(args, "--runner") == "pooling" and _flag(args, "--dtype") == "bfloat16"
    assert int(_flag(args, "--max-num-batched-tokens")) == pooling.batch_tokens
    # pinned: vLLM would take 1024 on a 70 GiB card, a batch the row was not priced at
    assert int(_flag(args, "--max-num-seqs")) == pooling.batch_requests == 256


def test_infinity_and_sentence_transformers() -> None:
    args = _args("infinity")
    assert args[:2] == ["infinity_emb", "v2"]
    assert int(_flag(args, "--batch-size")) == se.RUNTIMES["infinity"].batch_requests
    assert _flag(args, "--engine") == "torch" and _flag(args, "--device") == "cuda"
    # a library with no server of its own: no command is invented for it
    st = se.RUNTIMES["sentence-transformers"]
    assert se.serve_args(st, "m", "fp16", se.EncoderLoad(256), 8, "cuda", 8000) is None


@pytest.mark.parametrize(
    ("slug", "status", "said"),
    [
        ("v100-sxm2-32gb", "unsupported", "below 7.5"),
        ("t4", "supported", "Turing image"),
        ("a100-sxm4-80gb", "supported", None),
        ("l4", "supported", None),
        ("h100-sxm", "supported", "Hopper image"),
        ("b200", "supported", "no Blackwell image"),
        ("mi300x", "experimental", "Python backend"),
        ("rx-7900-xtx", "unsupported", "MI200 and MI300 only"),
    ],
)
def test_tei_runs_where_its_images_do(slug: str, status: str, said: str | None) -> None:
    gpu = GPUS[slug]
    backend = {"nvidia": "cuda", "amd": "rocm"}[gpu.vendor]
    st = compat.runtime_status(gpu, "tei", RULES, backend)
    assert st is not None and st.status == status
    words = st.caveat if status == "supported" else st.note
    if said is None:
        assert words is None
    else:
        assert words is not None and said in words


def _encoder_job(runtime: str, given: bool) -> WorkloadSpec:
    return WorkloadSpec(
        task="serving",
        model=BERT_LARGE,
        precision="fp16",
        runtime=runtime,
        runtime_given=given,
        serving=ServingSpec(prompt_tokens=256, output_tokens=1, concurrent_requests=8),
    )


def test_a_card_tei_cannot_run_is_served_on_infinity_or_refused_when_tei_is_asked() -> None:
    v100 = GPUS["v100-sxm2-32gb"]
    runtime, why = serving_step.runtime_for(v100, "cuda", _encoder_job("tei", False), RULES)
    assert runtime == "infinity" and why is not None and "served with infinity instead" in why
    runtime, why = serving_step.runtime_for(v100, "cuda", _encoder_job("tei", True), RULES)
    assert runtime is None and why is not None and "below 7.5" in why
    # a card TEI ships an image for keeps it; a supported condition is said, not ranked down
    h100 = GPUS["h100-sxm"]
    runtime, why = serving_step.runtime_for(h100, "cuda", _encoder_job("tei", False), RULES)
    assert runtime == "tei" and why is not None and "experimental" in why
    # vLLM's pooling runner is vLLM: its hardware is vLLM's (compute capability 7.0 and up)
    job = _encoder_job("vllm-pooling", True)
    assert serving_step.runtime_for(v100, "cuda", job, RULES) == ("vllm-pooling", None)
    p100 = next(g for g in GPUS.values() if g.compute_capability == "6.0")
    assert serving_step.runtime_for(p100, "cuda", job, RULES)[0] is None
