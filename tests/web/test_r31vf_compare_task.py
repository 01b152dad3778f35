"""r31 review (vf): the compare page offered "Serving (many users)" as a task, but it has no
field for the load a serving plan needs, so choosing it always ended in "give the load:
concurrent_requests or requests_per_s". The page offers the tasks it can answer and says where
serving is asked."""

from __future__ import annotations

from fastapi.testclient import TestClient

SLUGS = "rtx-4090,rtx-3090"


def test_the_compare_form_offers_no_serving_task(read_client: TestClient) -> None:
    page = read_client.get(f"/compare?slugs={SLUGS}")
    assert page.status_code == 200
    assert 'value="serving"' not in page.text
    assert 'value="inference"' in page.text and 'value="training"' in page.text


def test_a_serving_link_says_where_serving_is_asked(read_client: TestClient) -> None:
    page = read_client.get(f"/compare?slugs={SLUGS}&preset=llama-3-8b&task=serving")
    assert page.status_code == 422
    assert "question form" in page.text and "concurrent_requests" not in page.text
    # inference on the same cards still compares
    ok = read_client.get(f"/compare?slugs={SLUGS}&preset=llama-3-8b&task=inference")
    assert ok.status_code == 200 and "For the job" in ok.text
