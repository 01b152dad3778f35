"""A new user's review, page by page: a mistyped GPU slug, the compare page's prices, whole
sentences in the verdict and the assumptions."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.catalog.near_slugs import closest_slugs
from tests.web.test_pages import page


def test_closest_slugs_put_the_model_variants_first() -> None:
    slugs = ["rtx-3060-12gb", "rtx-3060-ti", "rtx-3090", "rtx-4060", "h100-sxm"]
    assert closest_slugs("rtx-3060", slugs)[:2] == ["rtx-3060-12gb", "rtx-3060-ti"]
    assert "h100-sxm" not in closest_slugs("rtx-3060", slugs)
    assert closest_slugs("", slugs) == []


def test_an_unknown_gpu_page_says_which_it_may_have_meant(read_client: TestClient) -> None:
    html = page(read_client, "/gpus/rtx-3060", 404)
    near = re.search(r"<p data-did-you-mean>(.*?)</p>", html, re.S)
    assert near, "no 'did you mean' on the 404 page"
    assert '<a href="/gpus/rtx-3060-12gb">' in near.group(1)
    assert '<a href="/gpus/rtx-3060-ti">' in near.group(1)


def _row_cells(html: str, label: str) -> list[str]:
    row = re.search(rf'<th scope="row">{re.escape(label)}\b.*?</tr>', html, re.S)
    assert row, label
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)


def test_compare_buys_at_the_price_the_rest_of_the_site_does(read_client: TestClient) -> None:
    # the RTX 3060 12GB's page said "$280 to buy" while compare said "Price used for buying —"
    gpu = page(read_client, "/gpus/rtx-3060-12gb")
    price = re.search(r'data-buy-card>.*?<div class="v">(\$[0-9,]+)</div>', gpu, re.S)
    assert price, "the GPU page shows no buy price"
    html = page(read_client, "/compare?slugs=rtx-3060-12gb,rtx-4090&preset=stable-diffusion-1.5")
    first = _row_cells(html, "Price used for buying")[0]
    assert re.search(rf'<span data-buy="[0-9.]+">{re.escape(price.group(1))}</span>', first), first


def _assumptions(html: str) -> dict[str, str]:
    echo = re.search(r"<dl class=\"echo\" data-assumptions[^>]*>(.*?)</dl>", html, re.S)
    assert echo
    return {
        dt: re.sub(r"<[^>]+>", "", dd).strip()
        for dt, dd in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", echo.group(1), re.S)
    }


def test_the_assumptions_are_whole_and_only_what_the_question_uses(
    read_client: TestClient,
) -> None:
    either = _assumptions(page(read_client, "/recommendations?preset=resnet-50&task=training"))
    # the Prices line ended "…(any host); the better"
    assert not either["Prices"].endswith("the better")
    assert either["Prices"].endswith("each option at the cheaper of the two")
    assert "spread over it" in either["Usage"]
    rent = _assumptions(
        page(read_client, "/recommendations?preset=resnet-50&task=training&acquisition=rent")
    )
    # a rent-only question buys nothing: a bought card's hours say nothing to it
    assert "Usage" not in rent
    assert rent["Prices"].startswith("renting:")
