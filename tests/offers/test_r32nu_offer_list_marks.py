"""New-user walk (thirty-second session): `gpu-advisor offers list --gpu rtx-4090` headed its
table with vast's $0.136 quote, unmarked at any width, though no recommendation rents it; and
`--gpu RTX-4090` (the card's name) was refused with no word of the slug it meant."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.cli.offers import _instance
from app.offers.schemas import OfferOut


def _offer(**fields: object) -> OfferOut:
    base: dict[str, object] = {
        "id": 1, "gpu": "rtx-4090", "kind": "cloud", "provider": "vast",
        "instance_type": "1x RTX 4090", "as_of": "2026-11-30", "source": "s", "stale": False,
        "origin": "seed",
    }  # fmt: skip
    return OfferOut.model_validate(base | fields)


def test_a_quoted_price_is_marked_as_the_gpu_page_marks_it() -> None:
    assert _instance(_offer(launchable=False)) == "1x RTX 4090 (quoted, not bookable)"
    assert _instance(_offer(launchable=True)) == "1x RTX 4090"


def test_contradicting_prices_are_marked_not_used() -> None:
    row = _offer(inconsistent=True, inconsistent_reason="spot above on-demand")
    assert _instance(row) == "1x RTX 4090 (prices contradict, not used)"


def test_a_purchase_carries_no_rental_mark() -> None:
    row = _offer(kind="purchase", provider=None, instance_type=None, usd=2470.0)
    assert _instance(row) == ""


def test_a_slug_in_capitals_is_refused_naming_the_slug_it_meant(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/offers", params={"gpu": "RTX-4090"})
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["details"]["field"] == "gpu"
    assert "did you mean 'rtx-4090'?" in err["message"]


def test_a_slug_short_of_its_variant_names_the_variants(read_client: TestClient) -> None:
    message = read_client.get("/api/v1/offers", params={"gpu": "h100"}).json()["error"]["message"]
    assert "did you mean" in message and "h100-sxm" in message and "h100-pcie" in message


def test_a_slug_near_nothing_gets_no_guess(read_client: TestClient) -> None:
    message = read_client.get("/api/v1/offers", params={"gpu": "zzzz"}).json()["error"]["message"]
    assert "did you mean" not in message and "no GPU 'zzzz' in the catalog" in message
