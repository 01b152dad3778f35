"""A new user's walk at 390 px (2026-12-06): the report of a real `gpu-advisor bench --profile
quick` on a CPU-only machine pushed its page 46 px sideways — the channels_last tip quotes
`model = model.to(memory_format=torch.channels_last)`, one 50-character word with no place to
break. Tips and warnings wrap inside the phone's width."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.web.sample_report import sample_report
from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

# the tips and a warning as that CPU run wrote them (app/bench/tips.py), word for word
CPU_TIPS = [
    "channels_last convolutions are 1.5× faster here (bf16, training): model = "
    "model.to(memory_format=torch.channels_last) and the same for the inputs",
    "this run measured the CPU only: torch 2.13.0+cpu sees no CUDA, ROCm, MPS or XPU device",
]
CPU_WARNINGS = [
    "bandwidth arrays are smaller than 4 × the last-level cache: the figure may include cache "
    "bandwidth",
    # a warning that names a file or a kernel runs as long
    "see /tmp/gpu-advisor-bench-0123456789abcdef/report-with-a-long-name.json_for_the_rest",
]


@pytest.fixture
def phone(browser: Browser, watch: Any, server: str) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(base_url=server, viewport={"width": 390, "height": 844})
    pg = watch.attach(context.new_page())
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


def test_a_cpu_reports_tips_wrap_on_a_phone(phone: Page, server: str) -> None:  # noqa: F811
    report = sample_report("Intel(R) Xeon(R) Processor")
    report["tips"] = CPU_TIPS
    report["warnings"] = CPU_WARNINGS
    r = httpx.post(f"{server}/api/v1/device-reports", json=report, timeout=30)
    assert r.status_code == 201, r.text
    phone.goto(f"/device/reports/{r.json()['id']}")
    tip = phone.locator("[data-tips] li", has_text="channels_last")
    assert "memory_format=torch.channels_last" in tip.inner_text()
    sw, width = phone.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= width, f"the report page scrolls sideways: {sw} > {width}"
    # each tip and warning inside the screen, not only the page's own width
    for li in phone.locator("[data-tips] li, .notice li").all():
        box = li.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, li.inner_text()
