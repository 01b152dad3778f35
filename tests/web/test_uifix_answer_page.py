"""The answer page's figures say what they are: a serving answer's memory is its load's
(weights and KV cache), not the weights alone under "whole job on one GPU"; a rented-only
row carries no owner's energy bill; a training row's step is named a micro-batch where the
batch runs as accumulation steps."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

SERVING = (
    "/recommendations?preset=llama-3.1-8b&task=serving&concurrent_requests=100"
    "&prompt_tokens=8000&serving.output_tokens=256&ttft_ms_target=2000&itl_ms_target=50"
    "&acquisition=rent&objective=best_value&limit=6"
)


def _get(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.text[:500]
    return r.text


def _gb(text: str) -> float:
    assert text.endswith(" GiB"), text
    return float(text.replace(",", "").removesuffix(" GiB"))


def test_serving_memory_card_counts_the_loads_kv_cache(read_client: TestClient) -> None:
    """100 requests of 8,256 tokens on Llama 3.1 8B: the card read "Memory needed, whole job
    on one GPU: 15 GB" (the weights), which says one 24 GB card would do; their KV cache
    alone is 100 × 8,256 × 128 KiB ≈ 108 GB (10^9 bytes)."""
    html = _get(read_client, SERVING)
    assert (
        "whole job on one GPU"
        not in html.split('class="summary-cards"')[1].split("</div>\n</div>")[0]
    )
    card = html.split("data-load-memory>")[1].split('<div class="card">')[0]
    assert "weights + KV cache" in card
    found = re.search(r'<div class="v">([^<]+)</div>', card)
    assert found is not None
    total = _gb(found.group(1))
    answer = read_client.get(SERVING.replace("/recommendations?", "/recommendations.json?")).json()
    weights = answer["memory"]["required_gb"]
    top = answer["recommendations"][0]
    replicas, gpus = top["serving"]["replicas"], top["serving"]["gpus_per_replica"]
    kv_all = top["memory"]["breakdown"]["kv_cache"] * gpus * replicas
    # the KV cache of 100 requests of 8,256 tokens, each as the row counts it (on demand: what
    # it holds on average, r37kv), over the fleet
    assert abs(kv_all - 100 * top["serving"]["kv_cache_gb_held_per_request"]) < 1.0
    # the headline is one replica's: its weights + its share of the KV cache (one replica's
    # weights beside all replicas' KV cache had been neither)
    gib = 1024**3 / 1e9
    per_replica = weights + kv_all / replicas
    assert abs(total - per_replica / gib) < 1.0, (total, weights, kv_all, replicas)
    assert "per replica" in card
    assert (f"on each of its {gpus} GPUs" if gpus > 1 else "on its GPU") in card
    if replicas > 1:
        fleet = re.search(rf"the top pick's {replicas} replicas: ([\d,.]+ GiB) in all", card)
        assert fleet is not None
        assert abs(_gb(fleet.group(1)) - replicas * per_replica / gib) < 1.0
    else:
        assert total > 100  # vendors' GB: about 116, never the 15 of the weights


def test_serving_what_if_column_names_the_weights(read_client: TestClient) -> None:
    html = _get(read_client, SERVING + "&what_if=1")
    if "data-what-if" in html:  # the what-if table names its serving memory as weights
        table = html.split("data-what-if")[1].split("</thead>")[0]
        assert "Model weights" in table and "whole job on one GPU" not in table


EITHER = (
    "/recommendations?preset=llama-3.1-8b&task=fine-tuning&peft=qlora&batch_size=16"
    "&seq_len=2048&dataset_samples=50000&epochs=3&acquisition=either&max_purchase_usd=5000"
    "&hours_per_week=100&num_gpus=4&vendors=nvidia&objective=fastest&limit=6"
)


def test_rent_only_rows_show_no_owned_energy(read_client: TestClient) -> None:
    """4 × B200 cannot be bought, yet its row said "energy to finish (owned) $0.46" and a power
    cost per hour: a rented hour's price has the power in it."""
    answer = read_client.get(EITHER.replace("/recommendations?", "/recommendations.json?")).json()
    html = _get(read_client, EITHER)
    rows = answer["recommendations"]
    rent_only = [r for r in rows if r["cost"]["purchase_usd"] is None]
    ownable = [r for r in rows if r["cost"]["purchase_usd"] is not None]
    assert rent_only and ownable
    for r in rows:
        cost = html.split(f'id="rec-{r["rank"]}"')[1].split("<h3>Cost</h3>")[1]
        cost = cost.split("</dl>")[0]
        if r["cost"]["purchase_usd"] is None:
            assert "energy to finish" not in cost, r["gpu"]["slug"]
            assert "W ·" not in cost and "/h</dd>" not in cost.split("power")[1]
            assert f"{r['cost']['power_w']:,.0f} W" in cost  # the draw itself stays
        elif r["cost"]["energy_to_finish_usd"] is not None:
            assert "energy to finish (owned)" in cost


TRAINING = (
    "/recommendations?preset=llama-3-8b&task=training&num_gpus=16&max_gpus=16"
    "&acquisition=rent&objective=fastest"
)


def test_training_step_time_is_named_per_micro_batch(read_client: TestClient) -> None:
    """timing.step_time_s is one micro-batch; the page called it "Time per step", which a
    training engineer reads as the optimizer step (accumulation_steps times longer)."""
    answer = read_client.get(TRAINING.replace("/recommendations?", "/recommendations.json?")).json()
    top = answer["recommendations"][0]
    assert top["accumulation_steps"] > 1
    html = _get(read_client, TRAINING)
    part = html.split('id="rec-1"')[1].split("<h3>Uncertainty</h3>")[0]
    assert "Time per micro-batch" in part and "Time per step" not in part
    micro = re.search(r"<dt data-micro-batch-time>([^<]+)</dt><dd>([^<]+)<", part)
    step = re.search(r"<dt data-optimizer-step-time>([^<]+)</dt><dd>([^<]+)<", part)
    assert micro and step
    assert f"{top['accumulation_steps']:,} micro-batches" in step.group(1)
    assert f"micro-batch of {top['micro_batch']:,}" in micro.group(1)


def test_step_time_is_described_in_the_openapi(read_client: TestClient) -> None:
    spec = read_client.get("/openapi.json").json()
    field = spec["components"]["schemas"]["TimingOut"]["properties"]["step_time_s"]
    assert "micro-batch" in field["description"]
    assert "accumulation_steps" in field["description"]


def test_squeeze_collapses_the_spaces_a_block_tag_leaves_beside_a_tag() -> None:
    """Kept under the page budget (test_pages_stay_small): the indentation of a line whose
    newline trim_blocks took stays as one space, which renders the same; <pre> keeps its own."""
    from app.web.templating import squeeze

    assert squeeze("<td>1</td>                    <td>2</td>") == "<td>1</td> <td>2</td>"
    assert squeeze("<p>a  b</p>") == "<p>a  b</p>"  # text between words untouched
    assert squeeze("<td>1</td>\t \t<td>2</td>") == "<td>1</td> <td>2</td>"  # tabs too
    assert squeeze("x   <b>") == "x <b>" and squeeze("<b>   x") == "<b> x"
    assert squeeze("<div>\n  <pre>  x    <b>y</b></pre>   </div>") == (
        "<div>\n<pre>  x    <b>y</b></pre> </div>"
    )
