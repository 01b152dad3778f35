"""An import keeps the rows it can and names each one it leaves out, with why: a GPU the
catalog does not hold, and an instance listed twice (the first is kept)."""

from __future__ import annotations

from pathlib import Path

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.offers import service
from app.offers.repository import OfferFilter


def test_import_names_each_row_it_leaves_out(settings: Settings, tmp_path: Path) -> None:
    csv = tmp_path / "ours.csv"
    csv.write_text(
        "gpu,provider,instance_type,gpus,usd_per_hour,as_of,source\n"
        "a10,r33dq,one_a10,1,0.50,2026-11-29,https://example.org/r33dq\n"
        "no-such-gpu,r33dq,mystery,1,0.40,2026-11-29,https://example.org/r33dq\n"
        "a10,r33dq,one_a10,1,0.60,2026-11-29,https://example.org/r33dq\n"
    )
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as s:
            report = service.import_files(s, settings, [csv])
            kept = service.list_offers(s, settings, OfferFilter(providers=["r33dq"])).items
    finally:
        engine.dispose()
    assert report.added == 1
    assert [(o.instance_type, o.usd_per_hour) for o in kept] == [("one_a10", 0.5)]
    assert [(k.file, k.instance_type, k.reason) for k in report.skipped] == [
        ("ours.csv", "mystery", "gpu 'no-such-gpu' is not in the catalog"),
        ("ours.csv", "one_a10", "r33dq one_a10 appears twice; first kept"),
    ]
