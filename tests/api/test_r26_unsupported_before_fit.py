"""A job the card's software cannot run is refused as such before any memory verdict (the
regression hunt: QLoRA on a 16 GB Mac read "does not fit … raise the wired limit", though
bitsandbytes then had no Apple backend and no memory would run it). Since bitsandbytes 0.50
runs its 4-bit ops on Apple silicon (r31: experimental) the feature it still lacks there, its
8-bit optimizers, is what shows the order."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_8bit_adam_on_a_small_mac_is_unsupported_not_too_big(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {
                "preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "qlora",
                "optimizer": "adam8bit", "dataset_samples": 5000,
            },
            "constraints": {"acquisition": "buy", "vendors": ["apple"]},
            "objective": "cheapest",
        },
    )  # fmt: skip
    assert r.status_code == 200, r.text
    codes = {x["slug"]: x["code"] for x in r.json()["excluded"]}
    assert codes["apple-m1"] == "framework_unsupported"
    macs = {code for slug, code in codes.items() if slug.startswith("apple-")}
    assert macs == {"framework_unsupported"}
