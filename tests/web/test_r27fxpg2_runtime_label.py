"""The torch.compile label says what is priced: the default mode (Inductor's kernels launched
from Python, no CUDA graphs) for every job but an LLM's decode, which replays CUDA graphs as
gpt-fast's mode="reduce-overhead" does (data/efficiency.yaml's torch-compile rows). It had
read "torch.compile (CUDA graphs)" for every job."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from app import vocab
from app.web.labels import choice_label


def test_torch_compile_labels_name_the_default_mode() -> None:
    form = choice_label("runtime", "torch-compile")
    assert form == "torch.compile (default mode)"
    full = vocab.RUNTIME_LABELS["torch-compile"]
    assert "default mode" in full and "LLM inference: CUDA graphs" in full
    assert "/ CUDA graphs" not in full


def _runtime_echo(html: str) -> str:
    found = re.search(r"<dt>Runtime</dt><dd>(.*?)</dd>", html)
    assert found, "no runtime in the answer's assumptions"
    return unescape(found.group(1))


def test_the_answer_names_the_mode_it_priced(read_client: TestClient) -> None:
    cnn = read_client.get("/recommendations?preset=resnet-50&task=inference&runtime=torch-compile")
    assert _runtime_echo(cnn.text) == "torch.compile (default mode)"
    llm = read_client.get("/recommendations?preset=llama-3-8b&task=inference&runtime=torch-compile")
    assert _runtime_echo(llm.text) == 'torch.compile (CUDA graphs, mode="reduce-overhead")'
