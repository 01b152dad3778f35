"""The ranking table on the answer page: the asked acquisition's columns only, the score it
is ranked by, memory headroom, instance ids inside "Why", and two answers compared."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import quote, urlencode

import pytest
from fastapi.testclient import TestClient

from app.web.forms import question_fields
from app.web.labels import CHOICES
from app.web.question_pages import SCORE_HEADS

TRAINING = "preset=resnet-50&task=training&dataset_samples=1281167&epochs=90"


def answer(client: TestClient, query: str) -> str:
    r = client.get("/recommendations?" + query)
    assert r.status_code == 200, r.text[:500]
    return r.text


def ranking(html: str) -> str:
    """The ranking table without the rows' "Why" (what the eye scans)."""
    table = re.search(r"<table class=\"ranking\" data-ranking.*?</table>\s*</div>", html, re.S)
    assert table, "no ranking table"
    return re.sub(r"<details data-explain>.*?</details>", "", table.group(0), flags=re.S)


def head(html: str) -> str:
    m = re.search(r"<thead>.*?</thead>", ranking(html), re.S)
    assert m
    return m.group(0)


def api(client: TestClient, acquisition: str, objective: str = "balanced") -> dict:
    r = client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "resnet-50", "task": "training",
                         "dataset_samples": 1281167, "epochs": 90},
            "constraints": {"framework": "pytorch", "acquisition": acquisition},
            "objective": objective,
        },
    )  # fmt: skip
    assert r.status_code == 200, r.text[:500]
    return r.json()


@pytest.mark.parametrize(
    ("acquisition", "rent", "buy"),
    [("buy", False, True), ("rent", True, False), ("either", True, True)],
)
def test_columns_for_the_asked_acquisition_only(
    read_client: TestClient, acquisition: str, rent: bool, buy: bool
) -> None:
    html = answer(read_client, f"{TRAINING}&acquisition={acquisition}")
    thead, table = head(html), ranking(html)
    assert ("data-rent-head" in thead) is rent
    assert ("data-buy-head" in thead) is buy
    assert ("data-offer " in table or "data-offer>" in table) is rent
    assert ("data-buy " in table) is buy
    # no buy-versus-rent line in the table; under 'either' it is in the rows' "Why"
    assert "Renting is cheaper" not in table and "Buying is cheaper" not in table
    assert "data-verdict" not in table
    rows = api(read_client, acquisition)["recommendations"]
    if acquisition != "either":
        assert "data-verdict" not in html and "data-top-verdict" not in html
    elif any(r["verdict"] for r in rows):
        assert re.search(r"<details data-explain>(?:(?!</details>).)*data-verdict", html, re.S)
    # every row's cells: one per header, the explain row spanning them all
    n_head = thead.count("<th ")
    first = re.search(r'<tr id="rec-1".*?</tr>', table, re.S)
    assert first and first.group(0).count("<td") == n_head
    assert f'<td colspan="{n_head}">' in table


def test_instance_ids_only_inside_why(read_client: TestClient) -> None:
    html = answer(read_client, f"{TRAINING}&acquisition=rent")
    rows = api(read_client, "rent")["recommendations"]
    offers = [r["offer"] for r in rows if r["offer"]]
    assert offers, "the shipped offers price some rows"
    table = ranking(html)
    whys = "".join(re.findall(r"<details data-explain>.*?</details>", html, re.S))
    for o in offers:
        # the breakable filter may insert <wbr>: compare the text
        assert o["instance_type"] not in unescape(re.sub(r"<wbr>", "", table))
        assert o["instance_type"] in unescape(re.sub(r"<wbr>", "", whys))
        assert o["provider"] in table  # the provider stays beside the price
    assert "data-launch-spec" not in table and "data-offer-name" not in table


@pytest.mark.parametrize("objective", ["balanced", "fastest", "best_value", "cheapest"])
def test_the_score_column_is_named_for_the_objective(
    read_client: TestClient, objective: str
) -> None:
    html = answer(read_client, f"{TRAINING}&acquisition=either&objective={objective}")
    label, _ = SCORE_HEADS[objective]
    m = re.search(r"<th [^>]*data-score-head[^>]*><abbr [^>]*>([^<]+)</abbr>", head(html))
    assert m and m.group(1) == label
    rows = api(read_client, "either", objective)["recommendations"]
    shown = [float(s) for s in re.findall(r'data-score data-value="([^"]+)"', html)]
    assert shown == [r["score"] for r in rows]
    # the order follows the score, after the rows the engine lists last
    lead = [
        r["score"] for r in rows
        if r["price_known"] and r["meets_latency_target"] is not False
    ]  # fmt: skip
    assert lead and lead == sorted(lead, reverse=True)
    assert 0 < max(shown) <= 1


def test_memory_per_gpu_shows_the_spare(read_client: TestClient) -> None:
    html = answer(read_client, f"{TRAINING}&acquisition=buy")
    rows = api(read_client, "buy")["recommendations"]
    cells = re.findall(r'data-label="Memory per GPU"[^>]*>(.*?)</td>', ranking(html), re.S)
    spare = [re.search(r' GiB\s*<.*data-headroom="([^"]+)">([^<]+)</span>', c, re.S) for c in cells]
    assert len(spare) == len(rows)
    for found, r in zip(spare, rows, strict=True):
        assert found is not None  # after the capacity in GiB, in its unit
        value, text = found.groups()
        assert float(value) == pytest.approx(r["memory"]["headroom_gb"])
        gb = r["memory"]["headroom_gb"] / 1.073741824
        assert text.endswith(" spare") and "GB" not in text
        assert float(text.split()[0].replace(",", "")) == pytest.approx(gb, rel=0.01)


def test_compare_with_the_previous_question(read_client: TestClient) -> None:
    before = f"{TRAINING}&acquisition=buy&objective=balanced"
    html = answer(read_client, before)
    # "Change the question" carries this question along
    change = re.search(r'href="([^"]+)" data-change-question', html)
    assert change and "prev=" in unescape(change.group(1))
    form = read_client.get(unescape(change.group(1))).text
    prev = re.search(r'name="prev" value="([^"]+)" data-prev-question', form)
    assert prev
    prev_query = unescape(prev.group(1))
    # the same question again: nothing to compare
    same = answer(read_client, before + "&prev=" + quote(prev_query))
    assert "data-compare-link" not in same
    # a changed question offers the comparison, computed when asked
    after = f"{TRAINING}&acquisition=buy&objective=fastest"
    changed = answer(read_client, after + "&" + urlencode({"prev": prev_query}))
    link = re.search(r'href="([^"]+)" data-compare-link', changed)
    assert link and "data-compare-diff" not in changed
    diff = read_client.get("/recommendations" + unescape(link.group(1))).text
    table = re.search(r"<table data-compare-diff>.*?</table>", diff, re.S)
    assert table
    text = unescape(re.sub(r"<[^>]+>", " ", table.group(0)))
    # what changed, in the form's words: the field and both values
    label = next(f.label for f in question_fields() if f.name == "objective")
    was, now = CHOICES["objective"]["balanced"], CHOICES["objective"]["fastest"]
    assert re.search(rf"{label}\s+{was}\s+{now}", text), text
    assert text.count(label) == 1  # only what changed
    b, a = (
        api(read_client, "buy")["recommendations"][0],
        api(read_client, "buy", "fastest")["recommendations"][0],
    )
    for top in (a, b):
        assert top["gpu"]["name"] in text
    assert "Price" in text and "Throughput" in text
    # the share link and exports stay the question alone
    share = re.search(r"data-share-url[^>]*|value=\"([^\"]+)\" data-share-url", diff)
    assert share and "prev=" not in (share.group(1) or "")


def test_a_previous_question_that_no_longer_reads_is_said_so(read_client: TestClient) -> None:
    query = f"{TRAINING}&acquisition=buy&" + urlencode({"prev": "preset=no-such-preset"})
    html = answer(read_client, query + "&compare=1")
    m = re.search(r"data-compare-error>([^<]+)<", html)
    assert m and m.group(1).startswith("Cannot compare: the previous question no longer reads")
    assert "data-compare-diff" not in html
    assert "data-ranking" in html  # the answer itself stands


@pytest.mark.parametrize(
    "query",
    [TRAINING, "preset=llama-3.3-70b&task=serving&concurrent_requests=50"],
    ids=["training", "serving"],
)
@pytest.mark.parametrize(
    ("acquisition", "rent", "buy"),
    [("buy", False, True), ("rent", True, False), ("either", True, True)],
)
def test_other_configurations_price_on_the_asked_basis(
    read_client: TestClient, query: str, acquisition: str, rent: bool, buy: bool
) -> None:
    html = answer(read_client, f"{query}&acquisition={acquisition}")
    tables = re.findall(r"<table data-alternatives>.*?</table>", html, re.S)
    assert tables, "no row lists other configurations"
    for t in tables:
        assert ("Rent (offer)" in t) is rent and ("data-alt-offer" in t) is rent
        assert (">Buy</th>" in t) is buy and ("data-alt-buy" in t) is buy


def test_a_band_basis_is_written_out_once_and_later_rows_point_back(
    read_client: TestClient,
) -> None:
    """Each row's band basis is the API's; a row whose basis an earlier row already spelt out
    says which row, so ten rows do not repeat the same paragraph."""
    html = answer(read_client, f"{TRAINING}&acquisition=either")
    rows = api(read_client, "either")["recommendations"]
    said = [unescape(b) for b in re.findall(r"<span data-band-basis>(.*?)</span>", html, re.S)]
    pointers = [int(k) for k in re.findall(r'data-band-basis-as="(\d+)"', html)]
    assert len(said) + len(pointers) == len(rows) and pointers
    first: dict[str, int] = {}
    for r in rows:
        first.setdefault(r["uncertainty"]["basis"], r["rank"])
    assert said == list(first)  # every distinct basis once, in rank order
    assert set(pointers) <= set(first.values())


def test_a_spot_training_row_shows_its_checkpoint_and_break_even(read_client: TestClient) -> None:
    """The figures the API gives a spot training row (cost.rent.interruption) read in its
    "Why", and an on-demand row has none."""
    query = f"{TRAINING}&acquisition=rent&allow_spot=true&objective=cheapest"
    rows = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "resnet-50", "task": "training",
                         "dataset_samples": 1281167, "epochs": 90},
            "constraints": {"acquisition": "rent", "allow_spot": True},
            "objective": "cheapest",
        },
    ).json()["recommendations"]  # fmt: skip
    spot = [r for r in rows if r["cost"]["rent"] and r["cost"]["rent"]["interruption"]]
    assert spot, "a spot price is the cheaper for some rows"
    html = unescape(answer(read_client, query))
    said = re.findall(r"<li data-spot-interruption>(.*?)</li>", html, re.S)
    assert len(said) == len(spot)
    first = spot[0]["cost"]["rent"]["interruption"]
    # ResNet-50's 25.56 M parameters × (4 fp32 + 4 momentum) bytes: the preset trains with SGD
    assert first["checkpoint_gb"] == pytest.approx(25557032 * 8 / 1e9, rel=1e-3)
    assert "204 MB of training state" in said[0] and "no published interruption rate" in said[0]
    # the page's figure is the one the row's warning gives, in the same words
    margin = re.search(r"unless they add more than (.*?)[.;]", said[0])
    assert margin is not None
    warned = [w for w in spot[0]["warnings"] if w.startswith("spot price")]
    assert len(warned) == 1 and f"unless they add more than {margin.group(1)}" in warned[0]
    # the offer line names the spot price as spot, beside the same instances on demand
    offered = re.findall(r"<li data-offer-name>(.*?)</li>", html, re.S)
    at_spot = [o for o in offered if "<span data-rent-tier>spot</span>" in o]
    assert len(at_spot) == len(spot)
    assert f"(on demand ${first['on_demand_usd_per_hour']:,.2f}/h)" in at_spot[0]
    assert all("on-demand" not in o for o in at_spot)
