"""The HTML pages through TestClient: every page renders, errors get proper pages, bad
form input re-shows the form with the user's values, and catalog text is escaped."""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Callable, Mapping
from html import unescape as html_unescape
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.domain.cost import BuyPrice
from app.domain.rent_from import RentFrom
from app.main import create_app
from app.offers.service import buy_prices_by_gpu, rent_from_by_gpu
from app.web import charts, templating
from app.web.offer_words import price_is_stale
from tests.web.sample_report import sample_report

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
XSS = "<script>alert('x')</script> Evil Card"
QUESTION = (
    "preset=llama-3-8b&task=fine-tuning&peft=lora&batch_size=4&framework=pytorch"
    "&acquisition=rent&objective=balanced"
)
API_REQUEST = {
    "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "lora", "batch_size": 4},
    "constraints": {"framework": "pytorch", "acquisition": "rent"},
    "objective": "balanced",
}


def evil_gpu() -> dict[str, Any]:
    return {
        "slug": "evil-card",
        "name": XSS,
        "vendor": "nvidia",
        "architecture": "<b>Ada</b>",
        "segment": "workstation",
        "memory_gb": 48,
        "memory_bandwidth_gbs": 960,
        "fp32_tflops": 91.1,
        "bf16_tflops": 181,
        "backends": ["cuda"],
        "launch_price_usd": 1234,
        "notes": "<img src=x onerror=alert(1)>",
        "sources": [{"id": "ds", "title": "<i>Datasheet</i>", "url": "https://example.org/ds"}],
    }


def page(client: TestClient, url: str, status: int = 200) -> str:
    r = client.get(url)
    assert r.status_code == status, (url, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    assert "Traceback" not in r.text
    return r.text


def field_value(html: str, name: str) -> str | None:
    m = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*value="([^"]*)"', html, re.S)
    return m.group(1) if m else None


def field_error(html: str, name: str) -> str | None:
    m = re.search(rf'<p class="error" id="f-{re.escape(name)}-err">([^<]*)</p>', html)
    return m.group(1) if m else None


# ---------------------------------------------------------------------------- every page


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/gpus",
        "/gpus?vendor=amd&sort=-memory_gb",
        "/gpus?q=h100&precision=fp8&min_memory_gb=40",
        "/gpus/h100-sxm",
        "/compare",
        "/compare?slugs=h100-sxm,a100-sxm4-80gb,rtx-4090",
        "/compare?slugs=h100-sxm&slugs=rtx-4090",
        "/device",
        f"/recommendations?{QUESTION}",
        "/recommendations?preset=resnet-50",
        "/recommendations?family=decoder&params=1.3B&layers=24&hidden_size=2048&task=training&batch_size=8&seq_len=1024&dataset_samples=100k",
    ],
)
def test_page_renders(read_client: TestClient, url: str) -> None:
    html = page(read_client, url)
    assert html.startswith("<!doctype html>")
    assert '<a class="skip-link" href="#main">' in html
    assert 'id="main"' in html


def test_pages_set_a_strict_content_security_policy(read_client: TestClient) -> None:
    r = read_client.get("/gpus")
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "http" not in csp


def test_pages_reference_only_local_assets(read_client: TestClient) -> None:
    for url in ("/", "/gpus", "/gpus/h100-sxm", f"/recommendations?{QUESTION}", "/device"):
        html = page(read_client, url)
        for ref in re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="([^"]+)"', html):
            assert ref.startswith("/"), (url, ref)
        for ref in re.findall(r"<script[^>]*>", html):
            # only the external app script and the JSON data block: no inline code
            assert 'src="/static/' in ref or 'type="application/json"' in ref, ref


def test_static_assets_are_served(read_client: TestClient) -> None:
    for path in ("/static/css/app.css", "/static/js/app.js", "/static/favicon.svg"):
        assert read_client.get(path).status_code == 200, path


def test_methodology_renders_docs_markdown(tmp_path: Path, read_settings: Settings) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "methodology.md").write_text(
        "# Methodology\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n", encoding="utf-8"
    )
    app = create_app(read_settings.model_copy(update={"docs_dir": docs}))
    with TestClient(app) as c:
        html = page(c, "/methodology/details")
    app.state.engine.dispose()
    assert '<h1 id="methodology">Methodology</h1>' in html
    assert "<table>" in html and "<code>code" in html


def test_methodology_missing_is_a_404_page(tmp_path: Path, read_settings: Settings) -> None:
    app = create_app(read_settings.model_copy(update={"docs_dir": tmp_path / "none"}))
    with TestClient(app) as c:
        html = page(c, "/methodology", 404)
    app.state.engine.dispose()
    assert "Not found" in html


def test_shipped_methodology_renders_when_present(read_client: TestClient) -> None:
    if not (ROOT / "docs" / "methodology.md").is_file():
        pytest.skip("docs/methodology.md not written yet")
    guide = page(read_client, "/methodology")
    assert "How to read an answer" in guide and 'href="/methodology/details"' in guide
    page(read_client, "/methodology/details")


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "url",
    [
        "/nope",
        "/gpus/no-such-gpu",
        "/device/reports/999999",
        "/device/reports/abc",
        "/gpus/h100-sxm/extra",
    ],
)
def test_unknown_pages_get_a_404_page(read_client: TestClient, url: str) -> None:
    html = page(read_client, url, 404)
    assert "<h1>Not found</h1>" in html
    assert 'href="/gpus"' in html  # a way back, inside the normal layout


def test_compare_errors_render_the_compare_page(read_client: TestClient) -> None:
    html = page(read_client, "/compare?slugs=h100-sxm", 422)
    assert "at least two" in html and 'name="slugs"' in html
    html = page(read_client, "/compare?slugs=h100-sxm,nope-gpu", 422)
    assert "nope-gpu" in html and 'value="h100-sxm,nope-gpu"' in html


def test_catalog_bad_filter_keeps_values_and_says_why(read_client: TestClient) -> None:
    html = page(read_client, "/gpus?min_memory_gb=lots&vendor=nvidia&sort=bogus", 422)
    assert 'value="lots"' in html
    assert "must be a number" in html
    assert "cannot sort by &#39;bogus&#39;: choose a figure from the list" in html
    assert re.search(r'value="nvidia"\s+checked', html)


@pytest.mark.parametrize("offset", ["1e308", "99999999999999999999999"])
def test_catalog_huge_offset_is_a_field_error_not_a_crash(
    read_client: TestClient, offset: str
) -> None:
    # found by fuzzing: the offset reached SQLite as an integer past 64 bits (500)
    html = page(read_client, f"/gpus?offset={offset}", 422)
    assert "must be at most" in html


# ---------------------------------------------------------------------------- prices from the offers


def _read_offers(settings: Settings, read: Callable[[Any], T]) -> T:
    """``read(session)`` on the read-only test database, in a session of its own."""
    engine = make_engine(settings.database_url)
    with session_scope(make_session_factory(engine)) as session:
        got = read(session)
    engine.dispose()
    return got


@pytest.fixture(scope="module")
def rent_prices(read_settings: Settings) -> Mapping[str, RentFrom]:
    """The offers' "from" prices (tests/offers/test_rent_from.py checks them on the rows)."""
    return _read_offers(read_settings, rent_from_by_gpu)


def shown_prices(html: str) -> list[tuple[str, float | None]]:
    """(slug, the row's "from" price) for each catalog row, in order."""
    rows = re.findall(
        r'name="slugs" value="([^"]+)".*?<td class="num rent-from">(.*?)</td>', html, re.S
    )
    out = []
    for slug, cell in rows:
        m = re.search(r'data-rent-from="([^"]+)"', cell)
        out.append((slug, float(m.group(1)) if m else None))
    return out


def test_gpu_page_rents_from_the_offers_not_the_quoted_price(
    read_client: TestClient, rent_prices: Mapping[str, RentFrom]
) -> None:
    quoted = read_client.get("/api/v1/gpus/h100-sxm").json()["cloud_price"]["usd_per_hour"]
    h100 = rent_prices["h100-sxm"]
    assert h100.usd_per_gpu_hour is not None and h100.usd_per_gpu_hour < quoted
    html = page(read_client, "/gpus/h100-sxm")
    card = re.search(r"data-rent-card>(.*?)</div></div>", html, re.S)
    assert card is not None
    text = " ".join(re.sub(r"<[^>]+>", " ", card.group(1)).split())
    assert f"from {templating.usd(h100.usd_per_gpu_hour)}/GPU-h" in text
    assert f"{h100.offers} offers · as of {h100.as_of}" in text
    assert templating.usd(quoted) not in text  # the quote is shown apart, as a quote


def test_mi300x_shows_its_offers(
    read_client: TestClient, rent_prices: Mapping[str, RentFrom]
) -> None:
    mi = rent_prices["mi300x"]
    assert read_client.get("/api/v1/gpus/mi300x").json()["cloud_price"] is None
    words = f"from {templating.usd(mi.usd_per_gpu_hour)}/GPU-h · {mi.offers} offer"
    html = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page(read_client, "/gpus/mi300x")))
    assert words in html and "no cloud price" not in html
    compare = page(read_client, "/compare?slugs=h100-sxm,mi300x")
    cells = re.findall(r"<td class=\"num\" data-rent-cell>(.*?)</td>", compare, re.S)
    assert len(cells) == 2
    h100 = rent_prices["h100-sxm"]
    assert f'data-rent-from="{h100.usd_per_gpu_hour}"' in cells[0]
    assert (
        f'data-rent-from="{mi.usd_per_gpu_hour}"' in cells[1] and f"{mi.offers} offers" in cells[1]
    )


def assert_priced_in_order_unpriced_last(rows: list[tuple[str, float | None]], sort: str) -> None:
    """Catalog rows (slug, shown price) sorted by ``sort`` (a leading "-": dearest first), the
    rows without a price after every priced one."""
    priced = [p for _, p in rows if p is not None]
    assert rows[: len(priced)] == [(s, p) for s, p in rows if p is not None]  # unpriced last
    assert priced == sorted(priced, reverse=sort.startswith("-"))


@pytest.mark.parametrize("sort", ["cloud_from", "-cloud_from"])
def test_catalog_sorts_by_the_offers_price_unpriced_last(
    read_client: TestClient, rent_prices: Mapping[str, RentFrom], sort: str
) -> None:
    rows: list[tuple[str, float | None]] = []
    for offset in (0, 50, 100):
        rows += shown_prices(page(read_client, f"/gpus?sort={sort}&offset={offset}"))
    total = read_client.get("/api/v1/gpus?limit=500").json()["total"]
    assert len(rows) == total and len({s for s, _ in rows}) == total
    assert_priced_in_order_unpriced_last(rows, sort)
    assert {s: p for s, p in rows if p is not None} == {
        s: r.usd_per_gpu_hour for s, r in rent_prices.items() if r.usd_per_gpu_hour is not None
    }


def test_catalog_price_limit_is_on_the_offers_price(
    read_client: TestClient, rent_prices: Mapping[str, RentFrom]
) -> None:
    cap = 2.0  # the H100 SXM's on-demand offers start at $1.82 a GPU-hour, its quote at $3.78
    html = page(read_client, f"/gpus?max_hourly_usd={cap}&sort=cloud_from")
    rows = shown_prices(html)
    expected = {
        s
        for s, r in rent_prices.items()
        if r.usd_per_gpu_hour is not None and r.usd_per_gpu_hour <= cap
    }
    assert {s for s, _ in rows} == expected and "h100-sxm" in expected  # quoted $3.78
    # an old link's sort by the quoted price sorts by the offers' price the page shows
    old = shown_prices(
        page(read_client, f"/gpus?max_hourly_usd={cap}&sort=cloud_price_usd_per_hour")
    )
    assert old == rows


_BUY_CELL = re.compile(
    r'name="slugs" value="([^"]+)".*?<td class="num">((?:(?!</td>).)*)</td>\s*'
    r'<td class="num rent-from">',
    re.S,
)


def buy_cells(html: str) -> list[tuple[str, str]]:
    """(slug, its row's buy-price cell as HTML) for each catalog row, in order."""
    return _BUY_CELL.findall(html)


def shown_buy(html: str) -> dict[str, str]:
    """slug → the text of its catalog row's buy-price cell."""
    return {s: " ".join(re.sub(r"<[^>]+>", " ", c).split()) for s, c in buy_cells(html)}


@pytest.fixture(scope="module")
def buy_prices(read_settings: Settings) -> Mapping[str, BuyPrice]:
    """What a recommendation pays to buy each card (cost.buy_price over its offers)."""
    return _read_offers(read_settings, buy_prices_by_gpu)


def test_catalog_price_column_is_what_a_recommendation_pays(
    read_client: TestClient, read_settings: Settings, buy_prices: Mapping[str, BuyPrice]
) -> None:
    html = page(read_client, "/gpus?sort=purchase_usd&offset=0")
    cells = shown_buy(html)
    rows = re.findall(r'name="slugs" value="([^"]+)"', html)
    assert list(cells) == rows  # every row has its buy cell
    # a card sold years ago: its launch price is not shown as a price (issue #23)
    old = page(read_client, "/gpus?q=2060+super")
    b = buy_prices["rtx-2060-super"]
    assert b.offer is None and b.stale_launch is not None
    assert shown_buy(old)["rtx-2060-super"] == "no current price"
    assert templating.usd(b.stale_launch.usd) not in shown_buy(old)["rtx-2060-super"]
    # a priced card shows the price, condition and date the recommendation would use
    b = buy_prices["rtx-3090"]
    assert b.offer is not None
    want = f"{templating.usd(b.offer.usd)} {b.offer.condition} · {b.offer.as_of}"
    # and marks it stale as the offers API would (tests/web/test_stale_prices.py)
    want += " stale" * price_is_stale(b.offer.as_of, read_settings)
    assert shown_buy(page(read_client, "/gpus?q=rtx+3090"))["rtx-3090"] == want


@pytest.mark.parametrize("sort", ["purchase_usd", "-purchase_usd"])
def test_catalog_sorts_and_limits_by_the_buy_price(
    read_client: TestClient, buy_prices: Mapping[str, BuyPrice], sort: str
) -> None:
    seen: list[tuple[str, float | None]] = []
    for offset in (0, 50, 100):
        for slug, cell in buy_cells(page(read_client, f"/gpus?sort={sort}&offset={offset}")):
            m = re.search(r'data-buy="([^"]+)"', cell)
            seen.append((slug, float(m.group(1)) if m else None))
    assert_priced_in_order_unpriced_last(seen, sort)
    paid = {s: b.offer.usd for s, b in buy_prices.items() if b.offer is not None}
    assert {s: p for s, p in seen if p is not None} == paid
    cap = 1000.0
    limited = shown_buy(page(read_client, f"/gpus?max_price_usd={cap:g}"))
    assert set(limited) == {s for s, usd in paid.items() if usd <= cap}
    assert "rtx-2060-super" not in limited  # its $399 launch price is no price today


# ---------------------------------------------------------------------------- the question


# ---------------------------------------------------------------------------- the answer


def ranked_rows(html: str) -> list[tuple[int, str]]:
    return [(int(r), s) for r, s in re.findall(r'data-rank="(\d+)" data-slug="([^"]+)"', html)]


def test_answer_matches_the_api(read_client: TestClient) -> None:
    api = read_client.post("/api/v1/recommendations", json=API_REQUEST)
    assert api.status_code == 200, api.text
    body = api.json()
    html = page(read_client, f"/recommendations?{QUESTION}")
    expected = [(r["rank"], r["gpu"]["slug"]) for r in body["recommendations"]]
    assert ranked_rows(html) == expected
    assert expected, "the question should have answers"
    for r in body["recommendations"][:3]:
        # seven significant figures, as the page's sortable attributes carry them
        assert f'data-throughput="{r["throughput"]["value"]:.7g}"' in html
        assert templating.num(r["throughput"]["value"]) in html
    # every row has its explanation folded away, plus charts and exclusions
    assert html.count("<details data-explain>") == len(expected)
    assert "Throughput vs rental price" in html
    assert "Memory needed vs available" in html
    if body["excluded"]:
        assert "<table data-excluded>" in html
    # what changes the answer: on demand (a link), then the API's what_if rows, one per change
    assert '<table class="what-if" data-what-if>' not in html
    link = re.search(r'<a href="([^"]+)" data-what-if-link>', html)
    assert link is not None and "what_if=1" in link.group(1)
    html = page(read_client, "/recommendations" + link.group(1).replace("&amp;", "&"))
    what_if = read_client.post(
        "/api/v1/recommendations", json={**API_REQUEST, "what_if": True}
    ).json()
    assert '<table class="what-if" data-what-if>' in html
    assert ranked_rows(html) == expected
    for v in what_if["what_if"]:
        assert f'data-change="{v["change"]}"' in html
        # each change's top pick with what it costs, as the API says
        row = re.search(rf'data-change="{re.escape(v["change"])}">(.*?)</tr>', html)
        assert row is not None
        # a rented question prices the pick by the hour, never by its purchase, except the
        # change that lifts the acquisition (_macros.variant_price: both ways, 'either')
        if " as well as " not in v["change"]:
            assert "to buy" not in row.group(1)
        if v["hourly_usd"] is not None:
            assert f"{templating.usd(v['hourly_usd'], True)}/h" in row.group(1)


def test_exports_carry_the_same_query(read_client: TestClient) -> None:
    html = page(read_client, f"/recommendations?{QUESTION}")
    assert "/recommendations.json?preset=llama-3-8b" in html
    assert "/recommendations.csv?preset=llama-3-8b" in html
    api = read_client.post("/api/v1/recommendations", json=API_REQUEST).json()
    j = read_client.get(f"/recommendations.json?{QUESTION}")
    assert j.status_code == 200
    assert j.json()["recommendations"] == api["recommendations"]
    c = read_client.get(f"/recommendations.csv?{QUESTION}")
    assert c.status_code == 200 and c.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(c.text)))
    assert [r["slug"] for r in rows] == [r["gpu"]["slug"] for r in api["recommendations"]]
    # to the export's four significant figures (question_pages.CSV_DIGITS)
    assert float(rows[0]["throughput"]) == pytest.approx(
        api["recommendations"][0]["throughput"]["value"], rel=5e-4
    )
    # the export names what each row rents, as the page does
    for row, rec in zip(rows, api["recommendations"], strict=True):
        offer = rec["offer"]
        if offer is None:
            assert row["offer_provider"] == "" and row["offer_instance_type"] == ""
        else:
            assert row["offer_provider"] == offer["provider"]
            assert row["offer_instance_type"] == offer["instance_type"]
            assert int(row["offer_gpus"]) == offer["gpus"]
            assert float(row["hourly_usd"]) == pytest.approx(rec["cost"]["hourly_usd"], rel=5e-4)
    assert any(r["offer_provider"] for r in rows)


def test_export_with_bad_input_is_a_json_error(read_client: TestClient) -> None:
    for ext in ("json", "csv"):
        r = read_client.get(f"/recommendations.{ext}?preset=llama-3-8b&batch_size=0")
        assert r.status_code == 422
        assert r.json()["error"]["details"]["field"] == "batch_size"


def test_csv_cells_cannot_start_a_formula() -> None:
    from app.web.question_pages import _csv_cell

    assert _csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert _csv_cell("-1+2") == "'-1+2"
    assert _csv_cell(-1.5) == -1.5
    assert _csv_cell(None) == ""


def test_no_answer_explains_itself(read_client: TestClient) -> None:
    html = page(
        read_client, "/recommendations?preset=llama-3-70b&max_hourly_usd=0.01&acquisition=rent"
    )
    assert "No GPU in the catalog can run this job" in html
    assert "<table data-excluded>" in html
    # one row per (code, reason): no reason is written twice, every excluded GPU still named
    table = html[
        html.index("<table data-excluded>") : html.index(
            "</table>", html.index("<table data-excluded>")
        )
    ]
    rows = re.findall(
        r'<tr><td>(.*?)</td><td><span class="badge[^"]*">(.*?)</span></td><td class="src">(.*?)</td></tr>',
        table,
    )
    assert len({(code, reason) for _, code, reason in rows}) == len(rows)
    body = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "llama-3-70b"},
            "constraints": {"max_hourly_usd": 0.01, "acquisition": "rent"},
        },
    ).json()
    assert sum(cell.count("<a href=") for cell, _, _ in rows) == len(body["excluded"])
    assert len(rows) < len(body["excluded"])


# ---------------------------------------------------------------------------- device reports


def test_device_pages_with_a_stored_report(client: TestClient) -> None:
    r = client.post("/api/v1/device-reports", json=sample_report())
    assert r.status_code == 201, r.text
    rid = r.json()["id"]
    html = page(client, "/device")
    assert f'href="/device/reports/{rid}"' in html
    html = page(client, f"/device/reports/{rid}")
    assert html.count("<svg") >= 4
    assert "Matmul TFLOPS per precision" in html
    assert "Throughput vs batch size" in html
    assert "pinned vs pageable" in html
    # tips are report data: escaped
    assert "Use pinned memory &lt;b&gt;for&lt;/b&gt; the data loader." in html
    # the report is offered as a baseline and used as one
    home = page(client, "/")
    assert f'<option value="{rid}"' in home
    ans = page(client, f"/recommendations?preset=resnet-50&device_report_id={rid}")
    assert "data-baseline" in ans and "Speedup vs yours" in ans
    # and what it measured comes with the answer, still escaped
    assert "data-measured-tips" in ans
    assert "Use pinned memory &lt;b&gt;for&lt;/b&gt; the data loader." in ans


def test_answer_page_shows_the_catalog_date_after_a_price_edit(
    client: TestClient, admin: dict[str, str]
) -> None:
    # The catalog's newest price date is kept with the catalog's stamp (catalog.data_as_of),
    # read with the answer's: a price edit shows on the next page.
    url = "/recommendations?preset=resnet-50"
    as_of = re.search(r"<dt>Catalog data as of</dt><dd>([^<]*)</dd>", page(client, url))
    assert as_of is not None and "2000-01-01" < as_of.group(1) < "2099-01-01"
    price = {"usd_per_hour": 1.5, "as_of": "2099-01-01", "source": "cloud-renting-a-gpu-2026-09"}
    r = client.patch("/api/v1/gpus/rtx-4090", json={"cloud_price": price}, headers=admin)
    assert r.status_code == 200, r.text
    assert "<dt>Catalog data as of</dt><dd>2099-01-01</dd>" in page(client, url)


# ---------------------------------------------------------------------------- escaping


def test_catalog_text_is_escaped_everywhere(client: TestClient, admin: dict[str, str]) -> None:
    r = client.post("/api/v1/gpus", json=evil_gpu(), headers=admin)
    assert r.status_code == 201, r.text
    urls = [
        "/gpus?q=evil",
        "/gpus/evil-card",
        "/compare?slugs=evil-card,h100-sxm",
        "/recommendations?preset=resnet-50&limit=100&vendors=nvidia&segments=workstation",
    ]
    for url in urls:
        html = page(client, url)
        assert "<script>alert" not in html, url
        assert "<img src=x" not in html, url
        assert "<b>Ada</b>" not in html and "<i>Datasheet</i>" not in html, url
    html = page(client, "/gpus/evil-card")
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; Evil Card" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_user_input_is_escaped_on_rerender(read_client: TestClient) -> None:
    html = page(
        read_client, '/recommendations?preset=llama-3-8b&params="><script>alert(1)</script>', 422
    )
    assert "<script>alert(1)</script>" not in html
    assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_templates_never_mark_data_safe() -> None:
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "|safe" not in text.replace(" ", ""), path
        assert "autoescape false" not in text, path


def test_pages_import_no_sqlalchemy() -> None:
    for path in (ROOT / "app" / "web").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("sqlalchemy"), (path, name)
                assert not name.startswith("torch"), (path, name)


# ---------------------------------------------------------------------------- helpers


def test_number_formatting() -> None:
    assert templating.num(None) == "—"
    assert templating.num(1234567) == "1,234,567"
    assert templating.num(0.012345) == "0.0123"
    assert templating.num(3.0) == "3"
    assert templating.usd(1899) == "$1,899"
    assert templating.usd(0.5) == "$0.50"
    assert templating.hours(0.5) == "30 min"
    assert templating.hours(100) == "4.17 days"
    assert templating.params_h(8.03e9) == "8.03B"


def test_chart_geometry_stays_inside_the_plot() -> None:
    chart = charts.xy_chart(
        [("a", [{"x": 100, "y": 5, "label": "1"}, {"x": 30000, "y": 50, "label": "2"}])],
        x_label="price",
        y_label="tput",
        log_x=True,
    )
    for p in chart.series[0].points:
        assert chart.left <= p.x <= chart.right
        assert chart.top <= p.y <= chart.bottom
    bars = charts.bar_chart(
        [{"label": "x", "value": 10, "ref": 20}, {"label": "y", "value": 30, "ref": 20}],
        value_name="v",
        ref_name="r",
    )
    assert bars.bars[1].over and not bars.bars[0].over
    assert max(b.value_w for b in bars.bars) == pytest.approx(bars.plot_w)
    assert charts.xy_chart([("a", [])], x_label="", y_label="").empty


def test_answer_shows_each_cards_other_configurations(read_client: TestClient) -> None:
    body = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "resnet-50"},
            "objective": "fastest",
            "constraints": {"max_gpus": 4},
            "limit": 3,
        },
    ).json()
    html = page(
        read_client, "/recommendations?preset=resnet-50&objective=fastest&max_gpus=4&limit=3"
    )
    top = body["recommendations"][0]
    assert top["alternatives"]  # the engine weighed other counts of the top card
    assert html.count("<table data-alternatives>") == sum(
        1 for r in body["recommendations"] if r["alternatives"]
    )
    for a in top["alternatives"]:
        assert f'data-alt-gpus="{a["num_gpus"]}"' in html


def test_serving_answer_header_describes_the_load_not_a_batch(read_client: TestClient) -> None:
    html = page(
        read_client,
        "/recommendations?preset=llama-3-70b&task=serving&concurrent_requests=50"
        "&prompt_tokens=1000&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
        "&acquisition=rent&objective=best_value",
    )
    header = html.split('<div class="summary-cards">')[0]
    assert "<dt>Load</dt><dd>50 concurrent requests" in header
    assert "batch 1" not in header and "<dt>Framework</dt>" not in header
    assert "<dt>Runtime</dt><dd>per GPU: vLLM" in header
    # The top pick names the serving shape (replicas × GPUs per replica) under the GPU total
    # the verdict gives ("Pick 2 × NVIDIA ..."), not a bare "1 × 2 NVIDIA ..." to multiply out.
    top = html.split('<div class="k">Top pick</div>')[1].split('<div class="card">')[0]
    assert re.search(r"\d+ replicas? × \d+ GPUs? each", top), top
    assert "the top pick: " not in html.split('<div class="k">GPUs that can run it')[0]


def test_serving_rows_name_a_release_format_where_the_weights_have_one(
    read_client: TestClient,
) -> None:
    # llama.cpp runs gpt-oss's MXFP4 release on its int4 kernels: the Precision cell said
    # "int4 / fp16", as if the model had been quantised to int4
    html = page(
        read_client,
        "/recommendations?preset=gpt-oss-20b&task=serving&runtime=llama.cpp"
        "&concurrent_requests=2&objective=cheapest",
    )
    cells = re.findall(r'<td data-label="Precision">([^<]*)<br>', html)
    assert cells and all(c.startswith("MXFP4 / ") for c in cells), cells
    plain = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=serving&concurrent_requests=2&objective=cheapest",
    )
    cells = re.findall(r'<td data-label="Precision">([^<]*)<br>', plain)
    assert cells and all(c.split(" / ")[0] in ("bf16", "fp16", "fp8") for c in cells), cells


def test_a_cheapest_serving_plan_says_what_it_is_ranked_on(read_client: TestClient) -> None:
    # a serving plan has no job to finish: "Cheapest to finish" named a cost it does not rank on
    html = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=serving&concurrent_requests=2&objective=cheapest",
    )
    assert "<dt>Ranked by</dt><dd>Cheapest per hour of the load</dd>" in html
    assert "Cheapest to finish" not in html.split('<div class="summary-cards">')[0]


def test_serving_answer_says_which_targets_are_mlperf_defaults(read_client: TestClient) -> None:
    url = (
        "/recommendations?preset=llama-3-70b&task=serving&concurrent_requests=50"
        "&prompt_tokens=1000&serving.output_tokens=300&acquisition=rent&objective=best_value"
    )
    html = page(read_client, url)
    line = html.split("data-serving-table")[0].rsplit('<p class="muted small">', 1)[1]
    assert "TTFT ≤ 2,000 ms (default)" in line and "ITL ≤ 200 ms (default)" in line
    assert "data-default-targets" in line and "MLPerf" in line and "p99" in line
    mine = page(read_client, url + "&ttft_ms_target=1000&itl_ms_target=50")
    line = mine.split("data-serving-table")[0].rsplit('<p class="muted small">', 1)[1]
    assert "TTFT ≤ 1,000 ms" in line and "ITL ≤ 50 ms" in line
    assert "(default)" not in line and "data-default-targets" not in line


def test_device_page_says_no_worker_is_online(client: TestClient) -> None:
    html = page(client, "/device")
    assert "data-no-worker" in html and "gpu-advisor worker" in html


def test_use_as_baseline_keeps_the_question(client: TestClient) -> None:
    from tests.web.sample_report import sample_report

    r = client.post("/api/v1/device-reports", json=sample_report("Baseline GPU"))
    assert r.status_code == 201, r.text
    rid = r.json()["id"]
    # the question form links to /device with the question to come back to
    answer = page(client, "/?preset=resnet-50&batch_size=64")
    link = re.search(r'href="(/device\?back=[^"]+)" data-device-link', answer)
    assert link is not None
    device = page(client, html_unescape(link.group(1)))
    use = re.search(rf'href="([^"]*device_report_id={rid}[^"]*)" data-use-baseline', device)
    assert use is not None
    target = html_unescape(use.group(1))
    assert target.startswith("/recommendations?") and "batch_size=64" in target
    assert "preset=resnet-50" in target
    again = page(client, target)
    assert "Baseline GPU" in again


def test_serving_pages_show_the_blended_price_per_token_first(client: TestClient) -> None:
    html = page(
        client,
        "/recommendations?preset=llama-3-70b&task=serving&concurrent_requests=50&acquisition=rent",
    )
    blended = html.find("data-usd-blended")
    split = html.find("data-usd-out")
    assert blended != -1 and split != -1 and blended < split
    assert "whole hour ÷ output tokens" in html


def test_serving_under_either_shows_each_rows_ranked_price_per_token_with_its_basis(
    read_client: TestClient,
) -> None:
    """Issue #23: under acquisition 'either' a serving row is ranked on its cheaper basis,
    owning or renting. The $/M column showed the rented figure whatever the basis (and none
    for a card with no rental offer, the top pick here), so the figure the ranking used was
    hidden; it now shows each row's ranked figure and names its basis."""
    query = (
        "preset=llama-3-8b&task=serving&concurrent_requests=10&prompt_tokens=500"
        "&serving.output_tokens=200&limit=10"
    )
    html = page(read_client, "/recommendations?" + query)
    body = {
        "workload": {
            "preset": "llama-3-8b",
            "task": "serving",
            "serving": {"concurrent_requests": 10, "prompt_tokens": 500, "output_tokens": 200},
        },
        "limit": 10,
    }
    rows = read_client.post("/api/v1/recommendations", json=body).json()["recommendations"]
    assert {r["serving"]["price_basis"] for r in rows} == {"buy", "rent"}
    cells = re.findall(r"data-usd-blended>([^<]*)<br><span[^>]*data-usd-basis>([^<]*)<", html)
    want = [
        (
            templating.usd(r["serving"]["usd_per_million_output_tokens_blended"], True),
            "owned" if r["serving"]["price_basis"] == "buy" else "rented",
        )
        for r in rows
    ]
    assert cells == want
    assert "each row on its cheaper basis, the one it is ranked on" in html


def test_llm_inference_pages_show_the_blended_price_per_token_first(
    read_client: TestClient,
) -> None:
    query = "preset=llama-3.1-8b&task=inference&limit=5&acquisition=rent"
    html = page(read_client, "/recommendations?" + query)
    head = html.find("data-usd-blended-head")
    assert head != -1 and head < html.find("data-rent-head")  # before the offer's own cells
    body = {"workload": {"preset": "llama-3.1-8b", "task": "inference"}, "limit": 5}
    body["constraints"] = {"acquisition": "rent"}
    rows = read_client.post("/api/v1/recommendations", json=body).json()["recommendations"]
    priced = [r["usd_per_million_output_tokens_blended"] for r in rows]
    assert any(v is not None for v in priced)
    cells = re.findall(r'data-usd-blended data-value="([^"]*)">([^<]*)<', html)
    assert [c[1] for c in cells] == [templating.usd(v, True) for v in priced]


def test_an_empty_answer_page_says_why_and_what_would_run(client: TestClient) -> None:
    html = page(
        client,
        "/recommendations?preset=llama-3-70b&task=fine-tuning&peft=qlora"
        "&max_purchase_usd=300&acquisition=buy",
    )
    assert "No GPU in the catalog can run this job" in html
    assert "data-empty-reasons" in html and "Left out:" in html
    assert "These changes would let GPUs run it" in html and "no budget limit" in html
    # the budget lifted names the cheapest configuration with what it costs to buy
    item = re.search(r"<li>no budget limit \(the cheapest first\):[^<]*</li>", html)
    assert item is not None and re.search(r"\(\$[\d,]+ to buy\)", item.group(0)), html


def test_each_row_draws_its_band(read_client: TestClient) -> None:
    """The Why of every row draws the API's band as a bar on a ×0–×3 scale, labelled."""
    body = read_client.post("/api/v1/recommendations", json=API_REQUEST).json()
    html = page(read_client, f"/recommendations?{QUESTION}")
    bars = re.findall(r'<svg class="band-bar".*?</svg>', html, flags=re.S)
    assert len(bars) == len(body["recommendations"])
    for r, bar in zip(body["recommendations"], bars, strict=True):
        u = r["uncertainty"]
        assert f"range ×{templating.num(u['factor_low'], 2)} to" in bar
        found = re.search(r'<rect x="([\d.]+)" y="3" width="([\d.]+)"', bar)
        assert found is not None, bar
        x, width = found.groups()
        assert float(x) == pytest.approx(min(u["factor_low"], 3) * 40, abs=0.06)
        assert float(x) + float(width) == pytest.approx(min(u["factor_high"], 3) * 40, abs=0.11)


def test_serving_page_lists_four_other_shapes_and_counts_the_rest(read_client: TestClient) -> None:
    # the page-weight budget (tests/web/test_pages_browser.py): a card can meet the targets in
    # a dozen shapes; the page lists four per card and says how many more the JSON export has
    html = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
        "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50",
    )
    blocks = re.findall(r"<table data-alternatives>(.*?)</table>(.*?)</details>", html, re.S)
    assert blocks
    counted = 0
    for table, after in blocks:
        shown = table.count("data-alt-gpus=")
        assert 1 <= shown <= 4
        more = re.search(r"data-alt-more>(\d+) more shapes", after)
        if more:
            assert shown == 4 and int(more.group(1)) > 0
            counted += 1
    assert counted, "no card here has more than four other shapes: pick a request where one does"


def test_serving_page_writes_out_the_service_file_for_the_first_three_rows(
    read_client: TestClient,
) -> None:
    # the page-weight budget again: each service file repeats its row's command, so rows past
    # the third say where their file is (the JSON export) and keep the command itself
    html = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
        "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50",
    )
    rows = re.split(r"<tr data-serving-row ", html)[1:]
    assert len(rows) > 3
    for i, row in enumerate(rows, start=1):
        files = row.count("data-deploy-skypilot>")
        pointers = row.count("data-deploy-skypilot-export")
        assert files + pointers <= 1
        assert "data-deploy-command" in row or files + pointers == 0
        if i > 3:
            assert files == 0
    assert any("data-deploy-skypilot>" in row for row in rows[:3])
    assert any("data-deploy-skypilot-export" in row for row in rows[3:])


def test_llm_rows_show_the_likely_time_to_first_token(read_client: TestClient) -> None:
    """Beside each time to first token the pages write the API row's band on it."""
    body = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "llama-3-8b", "task": "inference"}, "objective": "fastest"},
    ).json()
    html = page(read_client, "/recommendations?preset=llama-3-8b&task=inference&objective=fastest")
    shown = re.findall(r"<span data-ttft-band>\(likely ([^)]*) ms\)</span>", html)
    want = [r["uncertainty"]["time_to_first_token_ms"] for r in body["recommendations"]]
    assert want and all(w is not None for w in want)
    assert shown == [f"{templating.num(w['low'])}–{templating.num(w['high'])}" for w in want]
    serving = "/recommendations?preset=llama-3-70b&task=serving&concurrent_requests=50"
    html = page(read_client, serving)
    cells = re.findall(
        r"data-ttft>([^<]*) ms</span><br><span [^>]*data-ttft-band>likely ([^<]*)<", html
    )
    assert cells
    for t, band in cells:
        low, high = (float(x.replace(",", "")) for x in band.split("–"))
        assert low < float(t.replace(",", "")) < high


def test_gpu_page_lists_cooling_with_its_source(read_client: TestClient) -> None:
    raw = page(read_client, "/gpus/mi100")
    row = raw[raw.index('<th scope="row">Cooling</th>') :].split("</tr>")[0]
    assert "passive" in row and "instinct.docs.amd.com" in row


def test_gpu_page_lists_the_memory_cuda_reports_with_its_source(read_client: TestClient) -> None:
    raw = page(read_client, "/gpus/l4")
    row = raw[raw.index('<th scope="row">Memory CUDA reports (default mode)</th>') :]
    row = row.split("</tr>")[0]
    assert "22,559" in row and "github.com/ArcInstitute/evo2/issues/190" in row


def test_gpu_page_does_not_call_a_price_unknown_that_its_header_buys_at(
    read_client: TestClient,
) -> None:
    """The RTX A4000's page said "$950 to buy · new" at the top and "Street price: unknown"
    in its prices: the catalog entry has no street price, the purchase offers do."""
    raw = page(read_client, "/gpus/rtx-a4000")
    street = raw[raw.index("<dt>Street price</dt>") :].split("</dd>")[0]
    assert "unknown" not in street and "$950" in street and "purchase offers" in street


def test_training_headline_memory_is_the_least_and_names_the_top_picks_share(
    read_client: TestClient,
) -> None:
    # an assumed 1,024-sequence batch is counted at micro-batch 1; the top pick's own share
    # follows it, named as the top pick's
    html = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=training&num_gpus=16&max_gpus=16"
        "&acquisition=rent&objective=fastest",
    )
    card = html.split('<div class="k">Memory needed')[1].split('<div class="card">')[0]
    assert (
        "the least the job needs: micro-batch 1, the batch of 1,024 as 1,024 "
        "gradient-accumulation steps" in card
    )
    assert "the top pick: 16 GPUs," in card
    # the assumed batch is said in the notes, in the form's words (the verdict states it among
    # its assumptions, not as its caveat)
    notes = html.split("Notes on this estimate")[1].split("</ul>")[0]
    assert "“Batch size (all GPUs)” not given: assumed 1,024 sequences" in notes


def test_a_latency_target_no_row_meets_shows_which_change_meets_it(read_client: TestClient) -> None:
    # the what-if table comes unasked for such an answer, with a column saying which change's
    # top pick meets the target (the verdict names the first)
    html = page(
        read_client, "/recommendations?preset=llama-3-8b&task=inference&latency_target_ms=2000"
    )
    assert '<table class="what-if" data-what-if>' in html
    assert "Meets 2,000 ms</th>" in html
    row = re.search(r'data-change="runtime vllm instead of transformers">(.*?)</tr>', html)
    assert row is not None and '<span class="badge ok">yes</span>' in row.group(1)
    assert "with runtime vllm instead of transformers" in html
