"""Reading offer files: SkyPilot vms.csv as published, our columns, and broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.offers.files import OfferFileError, parse_file
from app.offers.mapping import load_mapping

ROOT = Path(__file__).resolve().parents[2]
SEEWEB = Path(__file__).parent / "data" / "seeweb-vms.csv"
MAPPING = load_mapping(ROOT / "data")


def test_skypilot_vms_csv_one_offer_per_instance_type_with_reasons_for_the_rest() -> None:
    parsed = parse_file(SEEWEB, MAPPING, provider="seeweb", as_of="2026-11-30")
    assert parsed.format == "skypilot"
    by_type = {o.instance_type: o for o in parsed.offers}
    l40s8 = by_type["ECS4GPU7"]
    assert (l40s8.gpu_slug, l40s8.gpus, l40s8.usd_per_hour, l40s8.tier) == (
        "l40s",
        8,
        6.8,
        "on-demand",
    )
    assert by_type["ECS1GPU"].gpu_slug == "quadro-rtx-6000"
    assert by_type["ECS1GPU7"].regions == 1 and by_type["ECS1GPU7"].vcpus == 8
    reasons = {s.instance_type: s.reason for s in parsed.skipped}
    assert "CPU-only" in reasons["eCS1"]
    assert "does not say which" in reasons["ECS1GPU10"]  # H200: SXM or NVL, never guessed
    assert "no reviewed mapping" in reasons["ECS1GPU12"]
    assert all(o.as_of == "2026-11-30" and o.source for o in parsed.offers)


def test_vms_csv_without_cloud_name_asks_for_provider(tmp_path: Path) -> None:
    copy = tmp_path / "vms.csv"
    copy.write_text(SEEWEB.read_text())
    with pytest.raises(OfferFileError, match="--provider"):
        parse_file(copy, MAPPING, as_of="2026-11-30")
    folder = tmp_path / "catalogs" / "v7" / "seeweb"
    folder.mkdir(parents=True)
    (folder / "vms.csv").write_text(SEEWEB.read_text())
    assert parse_file(folder / "vms.csv", MAPPING, as_of="2026-11-30").provider == "seeweb"


def test_truncated_line_rejects_the_file(tmp_path: Path) -> None:
    text = SEEWEB.read_text().splitlines()
    broken = tmp_path / "vms.csv"
    broken.write_text("\n".join([*text[:5], "ECS9GPU7,L40S,1,8"]) + "\n")
    with pytest.raises(OfferFileError, match=r"line 6: 4 fields"):
        parse_file(broken, MAPPING, provider="seeweb", as_of="2026-11-30")


def test_text_where_a_price_belongs_rejects_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "vms.csv"
    broken.write_text(SEEWEB.read_text().replace(",0.85,it-fr2", ",call us,it-fr2"))
    with pytest.raises(OfferFileError, match=r"column 'Price': 'call us' is not a number"):
        parse_file(broken, MAPPING, provider="seeweb", as_of="2026-11-30")


def test_plain_csv_of_our_columns(tmp_path: Path) -> None:
    plain = tmp_path / "offers.csv"
    plain.write_text(
        "gpu,provider,instance_type,gpus,usd_per_hour,spot_usd_per_hour,tier,regions,as_of,source\n"
        "rtx-4090,mylab,box-4x4090,4,2.40,,marketplace,1,2026-11-01,https://example.org/prices\n"
    )
    parsed = parse_file(plain, MAPPING, as_of="2026-11-30")
    (o,) = parsed.offers
    assert (o.gpu_slug, o.provider, o.gpus, o.usd_per_hour, o.tier, o.as_of) == (
        "rtx-4090",
        "mylab",
        4,
        2.40,
        "marketplace",
        "2026-11-01",
    )
    plain.write_text(plain.read_text().replace("2026-11-01", "last week"))
    with pytest.raises(OfferFileError, match="as_of"):
        parse_file(plain, MAPPING, as_of="2026-11-30")


def test_unknown_columns_are_rejected(tmp_path: Path) -> None:
    other = tmp_path / "x.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(OfferFileError, match="unknown columns"):
        parse_file(other, MAPPING, as_of="2026-11-30")


def test_every_mapping_rule_names_a_catalog_gpu() -> None:
    from app.catalog.loader import read_catalog

    slugs = {e.slug for e in read_catalog(ROOT / "data")}
    assert {r.slug for r in MAPPING.rules} <= slugs
