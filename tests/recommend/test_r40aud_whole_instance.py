"""An empty answer's nearest configuration names what its hourly price pays for (the
fortieth session's expert audit): "best 3 × AMD Instinct MI300X 192GB ($9.96/h to rent)" had
read as three GPUs' price, where the only offer is a 4-GPU instance, paid whole."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend.whatif import price_note


def _nearest(n: int, paid: int | None) -> s.NearestOut:
    return s.NearestOut(
        change="renting as well as buying", top_slug="mi300x", top_name="MI300X", num_gpus=n,
        can_run=1, hourly_usd=9.96, rent_gpus_paid=paid,
    )  # fmt: skip


def test_the_price_note_names_a_whole_instance_only_where_it_is_more() -> None:
    assert price_note(_nearest(3, 4), "rent") == " ($9.96/h to rent a whole 4-GPU instance)"
    assert price_note(_nearest(4, None), "rent") == " ($9.96/h to rent)"
    assert "instance" not in price_note(_nearest(3, 4), "buy")
