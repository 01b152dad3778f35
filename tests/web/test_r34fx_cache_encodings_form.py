"""The question form has the cache_encodings choice beside activation checkpointing, and its
"No" reaches the planner: a FLUX.1 QLoRA answer's headline memory no longer counts the cache."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

HEADLINE = "the latents cached before training"
JOB = "preset=flux-1-dev&task=fine-tuning&peft=qlora&batch_size=1"


def test_the_form_offers_default_yes_and_no(read_client: TestClient) -> None:
    html = read_client.get("/?preset=sdxl&task=fine-tuning").text
    select = html.split('name="cache_encodings"')[1].split("</select>")[0]
    assert 'value="on"' in select and 'value="off"' in select
    assert "network_train_unet_only" in html


def _headline(client: TestClient, choice: str) -> dict[str, Any]:
    r = client.get(f"/recommendations.json?{JOB}&cache_encodings={choice}")
    assert r.status_code == 200, r.text
    memory: dict[str, Any] = r.json()["memory"]
    return memory


def test_no_keeps_the_planner_from_caching(read_client: TestClient) -> None:
    # the headline is the least the job needs with the savers the answer may add
    left, refused = _headline(read_client, ""), _headline(read_client, "off")
    assert any(HEADLINE in n for n in left["notes"])
    assert not any(HEADLINE in n for n in refused["notes"])
    assert refused["required_gb"] > left["required_gb"] + 5  # the T5-XXL, CLIP-L and VAE
