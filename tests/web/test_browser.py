"""The pages in a real browser: Playwright drives Debian's chromium against the real
server (`gpu-advisor serve`) in a child process, on a fresh SQLite database.

Skipped when /usr/bin/chromium is absent, unless GPU_ADVISOR_REQUIRE_BROWSER=1. Browsers
are never downloaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from tests.support import lab_card, live_server

CHROMIUM = "/usr/bin/chromium"
REQUIRED = os.environ.get("GPU_ADVISOR_REQUIRE_BROWSER") == "1"
ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "browser-admin-token"

if not Path(CHROMIUM).exists():
    if REQUIRED:
        pytest.fail(f"{CHROMIUM} is missing and GPU_ADVISOR_REQUIRE_BROWSER=1", pytrace=False)
    pytest.skip(f"{CHROMIUM} is not installed", allow_module_level=True)
try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover
    if REQUIRED:
        raise
    pytest.skip("playwright is not installed", allow_module_level=True)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("browser-server")
    env = {
        **os.environ,
        "GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp / 'advisor.db'}",
        "GPU_ADVISOR_ADMIN_TOKEN": ADMIN_TOKEN,
        "GPU_ADVISOR_BENCH_JOBS_DIR": str(tmp / "jobs"),
    }
    env.pop("GPU_ADVISOR_UPLOAD_TOKEN", None)
    with live_server(env, tmp / "server.log") as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


class Watch:
    """Console errors, failed page loads and requests to any host but the server."""

    def __init__(self, base: str) -> None:
        self.host = urlparse(base).netloc
        self.errors: list[str] = []
        self.foreign: list[str] = []

    def attach(self, page: Page) -> Page:
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", self._request)
        return page

    def _request(self, request: Any) -> None:
        url = urlparse(request.url)
        if url.scheme in ("data", "about", "blob"):
            return
        if url.netloc != self.host:
            self.foreign.append(request.url)


@pytest.fixture
def watch(server: str) -> Iterator[Watch]:
    w = Watch(server)
    yield w
    assert not w.foreign, f"requests to other hosts: {w.foreign}"
    # 422 pages are expected in the bad-input test; the browser logs their status as errors
    real = [e for e in w.errors if "status of 422" not in e]
    assert not real, f"console errors: {real}"


@pytest.fixture
def page(browser: Browser, watch: Watch, server: str) -> Iterator[Page]:
    context = browser.new_context(base_url=server, viewport={"width": 1280, "height": 900})
    pg = watch.attach(context.new_page())
    pg.set_default_timeout(30_000)
    yield pg
    context.close()


def table_rows(pg: Page) -> list[tuple[str, str, str]]:
    rows = pg.locator("tr[data-rank]")
    out = []
    for i in range(rows.count()):
        row = rows.nth(i)
        out.append(
            (
                row.get_attribute("data-rank") or "",
                row.get_attribute("data-slug") or "",
                row.locator("[data-throughput]").get_attribute("data-throughput") or "",
            )
        )
    return out


def fmt(value: float) -> str:
    from app.web.templating import num

    return num(value)


# ---------------------------------------------------------------------------- the question


def test_question_to_ranked_table_matches_the_api(page: Page, server: str) -> None:
    page.goto("/")
    page.select_option("#f-preset", "llama-3-8b")
    page.select_option("#f-task", "fine-tuning")
    page.fill("#f-batch_size", "4")
    page.select_option("#f-acquisition", "rent")
    page.select_option("#f-peft", "lora")  # shown because the task is fine-tuning
    page.get_by_role("button", name="Recommend GPUs").click()
    page.wait_for_url(re.compile(r"/recommendations\?"))
    assert "batch_size=4" in page.url and "seq_len=" not in page.url  # blanks left out

    api = httpx.post(
        f"{server}/api/v1/recommendations",
        json={
            "workload": {
                "preset": "llama-3-8b",
                "task": "fine-tuning",
                "peft": "lora",
                "batch_size": 4,
            },
            "constraints": {"framework": "pytorch", "acquisition": "rent"},
            "objective": "balanced",
        },
        timeout=30,
    ).json()
    expected = api["recommendations"]
    rows = table_rows(page)
    assert len(rows) == len(expected) > 0
    for (rank, slug, tput), rec in zip(rows, expected, strict=True):
        assert int(rank) == rec["rank"] and slug == rec["gpu"]["slug"]
        assert float(tput) == pytest.approx(rec["throughput"]["value"])
    first = page.locator("tr[data-rank='1']")
    assert fmt(expected[0]["throughput"]["value"]) in first.inner_text()
    assert expected[0]["gpu"]["name"] in first.inner_text()


def test_memory_saver_banner_and_exactly_n_gpus(page: Page) -> None:
    # the QLoRA student question: checkpointing on by default, single cards, a banner saying so
    page.goto("/")
    page.select_option("#f-preset", "llama-3-8b")
    page.select_option("#f-task", "fine-tuning")
    page.select_option("#f-acquisition", "buy")
    page.fill("#f-max_purchase_usd", "800")
    page.select_option("#f-peft", "qlora")  # shown because the task is fine-tuning
    page.get_by_role("button", name="Recommend GPUs").click()
    page.wait_for_url(re.compile(r"/recommendations\?"))
    banner = page.locator("[data-advice]")
    assert banner.is_visible() and "checkpointing is on" in banner.inner_text()
    # QLoRA of an 8B model needs about 12 GB (logits and the 16-bit embeddings and head
    # counted): cards that hold it run it alone; smaller ones appear only as multi-card rows
    shown = page.locator("tbody tr[data-rank]").count()
    assert page.locator("tbody tr[data-rank] [data-num-gpus]").count() < shown
    # exactly two GPUs, asked in the form, is what every row shows
    page.goto("/")
    page.select_option("#f-preset", "resnet-50")
    page.locator("details[data-group='assumptions'] > summary").click()
    page.fill("#f-num_gpus", "2")
    page.get_by_role("button", name="Recommend GPUs").click()
    page.wait_for_url(re.compile(r"num_gpus=2"))
    badges = page.locator("tbody tr[data-rank] [data-num-gpus]")
    rows = page.locator("tbody tr[data-rank]")
    assert rows.count() > 0 and badges.count() == rows.count()
    assert all("2" in b for b in badges.all_inner_texts())


def test_explanation_and_share_link(page: Page, browser: Browser, watch: Watch) -> None:
    page.goto("/recommendations?preset=resnet-50&acquisition=rent")
    details = page.locator("details[data-explain]").first
    assert not details.evaluate("d => d.open")
    details.locator("summary").click()
    assert details.evaluate("d => d.open")
    assert details.get_by_text("Memory breakdown").is_visible()
    assert details.get_by_text("Where the numbers come from").is_visible()
    rows = table_rows(page)

    href = page.locator("[data-share-url]").input_value()
    assert href and "/recommendations?" in href and href.startswith("http")
    other = watch.attach(page.context.new_page())
    other.goto(href)
    assert table_rows(other) == rows
    other.close()


def test_form_shows_the_fields_of_the_task(page: Page) -> None:
    page.goto("/")  # the default preset is an inference one
    visible = lambda name: page.locator(f"[data-field='{name}']").is_visible()  # noqa: E731
    assert visible("output_tokens") and visible("latency_target_ms")
    assert not visible("epochs") and not visible("peft")
    # a deadline needs a job of known size: the dataset box shows wherever "Finish within" does
    assert visible("max_hours") and visible("dataset_samples")
    page.select_option("#f-task", "fine-tuning")
    assert visible("dataset_samples") and visible("peft") and visible("optimizer")
    assert not visible("output_tokens")
    page.select_option("#f-task", "training")
    assert visible("epochs") and not visible("peft")
    # a preset brings its task and its values as placeholders
    page.select_option("#f-task", "")
    page.select_option("#f-preset", "resnet-50")
    assert visible("dataset_samples") and not visible("output_tokens")
    assert page.locator("#f-dataset_samples").get_attribute("placeholder") == "1.28M"
    # human numbers in: the answer reads them
    page.fill("#f-max_hourly_usd", "$40")
    page.fill("#f-dataset_samples", "15k")
    page.get_by_role("button", name="Recommend GPUs").click()
    page.wait_for_url(re.compile(r"/recommendations\?"))
    assert page.locator("tr[data-rank]").count() > 0
    assert "15k" in page.url or "15k" in page.url.replace("%20", "")


def test_bad_input_shows_field_messages_and_keeps_values(page: Page) -> None:
    page.goto("/")
    page.fill("#f-batch_size", "-5")
    page.fill("#f-params", "lots")
    page.get_by_role("button", name="Recommend GPUs").click()
    page.wait_for_url(re.compile(r"/recommendations\?"))
    assert page.locator("#f-batch_size").input_value() == "-5"
    assert page.locator("#f-params").input_value() == "lots"
    assert page.locator("#f-batch_size-err").inner_text() == "must be at least 1"
    assert "8.03B" in page.locator("#f-params-err").inner_text()
    assert page.locator("#f-batch_size").get_attribute("aria-invalid") == "true"
    # the error summary takes focus so keyboard and screen-reader users land on it
    assert page.evaluate("document.activeElement.id") == "form-errors"


# ---------------------------------------------------------------------------- the catalog


def test_catalog_filter_sort_open_and_compare(page: Page, server: str) -> None:
    page.goto("/gpus")
    page.get_by_label("AMD", exact=True).check()
    page.select_option("#c-sort", "-memory_gb")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(re.compile(r"vendor=amd"))
    api = httpx.get(f"{server}/api/v1/gpus?vendor=amd&sort=-memory_gb&limit=500").json()
    names = page.locator("td.gpu-name a").all_inner_texts()
    assert names == [g["name"] for g in api["items"]]

    page.locator("td.gpu-name a").first.click()
    page.wait_for_url(re.compile(r"/gpus/[a-z0-9-]+$"))
    assert page.locator("h1").inner_text() == api["items"][0]["name"]
    assert page.get_by_role("heading", name="Sources").is_visible()

    page.goto("/gpus?sort=-memory_bandwidth_gbs")
    boxes = page.locator("input[name='slugs']")
    compare = page.locator("[data-compare-button]")
    assert compare.is_disabled()
    chosen = [boxes.nth(i).get_attribute("value") for i in range(3)]
    for i in range(3):
        boxes.nth(i).check()
    assert compare.is_enabled()
    compare.click()
    page.wait_for_url(re.compile(r"/compare\?"))
    headers = page.locator("[data-compare-table] thead th a").all_inner_texts()
    assert len(headers) == 3
    for slug in chosen:
        assert page.locator(f"[data-compare-table] a[href='/gpus/{slug}']").count() == 1


def test_catalog_name_with_script_is_shown_as_text(page: Page, server: str) -> None:
    name = "<script>window.__pwned = 1</script> Sneaky Card"
    body = lab_card(slug="sneaky-card", name=name)
    r = httpx.post(
        f"{server}/api/v1/gpus",
        json=body,
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=10,
    )
    assert r.status_code in (201, 409), r.text
    page.goto("/gpus?q=sneaky")
    assert page.locator("td.gpu-name a").inner_text() == name
    page.goto("/gpus/sneaky-card")
    assert page.locator("h1").inner_text() == name
    assert page.evaluate("window.__pwned") is None


# ---------------------------------------------------------------------------- this machine


def test_benchmark_run_shows_progress_and_charts(page: Page, server: str) -> None:
    probe = httpx.get(f"{server}/api/v1/benchmark-runs", timeout=10)
    if probe.status_code == 404:
        pytest.skip("the benchmark-runs API is not installed")
    page.goto("/device")
    start = page.get_by_role("button", name="Run a quick benchmark on the server")
    start.click()
    progress = page.locator("#bench-progress")
    progress.wait_for(state="visible")
    done = page.locator("[data-bench-report]")
    done.wait_for(timeout=240_000)
    assert page.locator("[data-bench-step]").inner_text() == "done"
    # the stored reports list refreshes itself with the new report, no reload needed
    rid = (done.get_attribute("href") or "").rsplit("/", 1)[-1]
    page.locator(f"[data-reports] a[href='/device/reports/{rid}']").wait_for()
    assert progress.evaluate("p => p.value") == 1
    done.click()
    page.wait_for_url(re.compile(r"/device/reports/\d+$"))
    charts = page.locator("[data-report-charts] figure")
    assert charts.count() >= 3
    assert page.locator("[data-report-charts] svg").count() >= 2
    assert page.get_by_role("heading", name="Tips").is_visible()


def test_ranking_turns_into_labelled_cards_on_a_phone(
    browser: Browser, watch: Watch, server: str
) -> None:
    context = browser.new_context(base_url=server, viewport={"width": 390, "height": 844})
    pg = watch.attach(context.new_page())
    pg.goto("/recommendations?preset=llama-3-8b&limit=3")
    head = pg.locator("table.ranking thead").bounding_box()
    assert head is not None and head["height"] <= 1  # visually hidden, still read by screen readers
    first = pg.locator("tr[data-rank]").first
    box = first.bounding_box()
    assert box is not None and box["width"] <= 390  # no sideways scrolling for the ranking
    label = first.locator("td[data-label='Throughput']").evaluate(
        "el => getComputedStyle(el, '::before').content"
    )
    assert "Throughput" in label
    context.close()
