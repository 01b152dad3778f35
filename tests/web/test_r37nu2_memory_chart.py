"""The memory chart scales to its largest card: robust scaling, which keeps one mis-measured
figure from flattening the rest, had marked a 12 GiB card "off scale" where the rows needed
~5 GiB on 8–16 GiB cards (Llama 3 8B at int4: its fence 11.1 GiB). A card's memory is a spec,
not a measurement. The deadline notice says the user's limit as written ("24 h")."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.web import charts

INT4 = "/recommendations?preset=llama-3-8b&task=inference&precision=int4"


def test_a_chart_of_specs_cuts_no_bar() -> None:
    rows = [{"label": f"#{i}", "value": 5.0, "ref": ref} for i, ref in
            enumerate([7.6, 7.6, 7.6, 7.6, 11.8, 15.6, 16.0])]  # fmt: skip
    robust = charts.bar_chart(rows, value_name="needed", ref_name="available")
    assert any(b.clipped for b in robust.bars)  # the fence the memory chart had used
    plain = charts.bar_chart(rows, value_name="needed", ref_name="available", robust=False)
    assert not any(b.clipped for b in plain.bars)
    widest = max(plain.bars, key=lambda b: b.ref or 0.0)
    assert widest.ref_w == plain.plot_w  # the largest card spans the track


def test_the_answer_pages_memory_chart_has_no_card_off_scale(read_client: TestClient) -> None:
    page = read_client.get(INT4)
    assert page.status_code == 200
    chart = page.text.split("Memory needed vs available, per GPU", 1)[1].split("</figure>")[0]
    assert "GiB" in chart and "off scale" not in chart


def test_the_deadline_notice_says_the_limit_as_written(read_client: TestClient) -> None:
    page = read_client.get(
        "/recommendations?preset=resnet-50&task=training&dataset_samples=1.28M&epochs=90"
        "&max_hours=24&acquisition=rent&objective=cheapest"
    )
    assert page.status_code == 200
    assert "<strong>Finish within 24 h:</strong>" in page.text
    assert "24.0 h" not in page.text
