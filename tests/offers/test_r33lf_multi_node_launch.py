"""A launch-spec for more GPUs than one instance holds rents whole servers side by side: 16
H100s are two 8-GPU nodes (SkyPilot `num_nodes: 2`, each with `accelerators: <name>:8`), whose
`run` SkyPilot executes on every node, each benchmarking its machine and uploading its report.
It had been a 422, "no launchable offer of h100-sxm with 16 GPU(s) or more"."""

from __future__ import annotations

import yaml
from fastapi.testclient import TestClient

from app.domain.cost import CloudOffer
from app.offers.launch import task_yaml

UPLOAD = "https://advisor.example.org/"


def _eight() -> CloudOffer:
    return CloudOffer(
        provider="lambda", instance_type="gpu_8x_h100_sxm5", gpus=8, usd_per_hour=23.92,
        spot_usd_per_hour=None, tier="on-demand", as_of="2026-11-30", source="skypilot catalog",
        accelerator="H100",
    )  # fmt: skip


def test_two_nodes_are_num_nodes_with_each_nodes_accelerators() -> None:
    text = task_yaml(_eight(), "h100-sxm", UPLOAD, nodes=2)
    task = yaml.safe_load(text)
    assert task["num_nodes"] == 2
    assert task["resources"]["accelerators"] == "H100:8"
    assert task["resources"]["instance_type"] == "gpu_8x_h100_sxm5"
    # the run the one-node task has, on every node
    one = yaml.safe_load(task_yaml(_eight(), "h100-sxm", UPLOAD))
    assert "num_nodes" not in one
    assert task["run"] == one["run"] and task["setup"] == one["setup"]
    assert "gpu-advisor bench --profile standard --gpu h100-sxm" in task["run"]
    # the header prices both nodes and says what is (not) measured
    assert "2 nodes × 8 GPU(s), $23.92/h each, $47.84/h in all" in text
    assert "network between the nodes is not measured" in text


def test_the_api_spans_two_nodes_for_sixteen_h100s(read_client: TestClient) -> None:
    r = read_client.get(
        "/api/v1/offers/launch-spec", params={"gpu": "h100-sxm", "gpus": 16, "upload": UPLOAD}
    )
    assert r.status_code == 200, r.text
    task = yaml.safe_load(r.text)
    assert task["num_nodes"] == 2
    name, count = task["resources"]["accelerators"].split(":")
    assert name.startswith("H100") and int(count) == 8
    assert "gpu-advisor bench" in task["run"]
    # eight fit one server: one node, as before
    one = yaml.safe_load(
        read_client.get(
            "/api/v1/offers/launch-spec", params={"gpu": "h100-sxm", "gpus": 8, "upload": UPLOAD}
        ).text
    )
    assert "num_nodes" not in one and one["resources"]["accelerators"].endswith(":8")


def test_one_gpu_instances_are_not_a_sixteen_gpu_cluster(read_client: TestClient) -> None:
    # nodes are whole servers: sixteen 1-GPU instances are not booked as one job's cluster
    params = {"gpu": "h100-sxm", "gpus": 16, "upload": UPLOAD, "provider": "cudo",
              "instance_type": "sapphire-rapids-h100_1x2v4gb"}  # fmt: skip
    r = read_client.get("/api/v1/offers/launch-spec", params=params)
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "gpus"


def test_the_refusal_says_why_in_the_rows_words(read_client: TestClient) -> None:
    # r33fx: it had said "with 16 GPU(s) or more", though 16 can now be two 8-GPU servers
    params = {"gpu": "h100-sxm", "gpus": 16, "upload": UPLOAD, "provider": "cudo",
              "instance_type": "sapphire-rapids-h100_1x2v4gb"}  # fmt: skip
    message = read_client.get("/api/v1/offers/launch-spec", params=params).json()["error"][
        "message"
    ]
    assert "or more" not in message
    assert "one instance has at most 1 of them" in message, message
    assert "spans whole 8-GPU servers side by side" in message, message
