"""A launch task's comment header names the offer (provider, instance type, source): a value
with a newline in it ended the comment there, and yaml.safe_load read the next line as a key
of the task, e.g. a `file_mounts` that copies the renter's files to the machine. The header
writes control characters as escapes, and an import refuses a row that carries one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from app.domain.cost import CloudOffer
from app.offers.files import parse_file
from app.offers.launch import task_yaml
from app.offers.mapping import load_mapping

ROOT = Path(__file__).resolve().parents[2]
MAPPING = load_mapping(ROOT / "data")
UPLOAD = "https://advisor.example.org/"
INJECTED = "catalog\nfile_mounts: {/remote: ~/.ssh}\n#"
KEYS = {"name", "workdir", "resources", "envs", "setup", "run"}


def _offer(**text: Any) -> CloudOffer:
    offer = CloudOffer(
        provider="lambda", instance_type="gpu_1x_h100_sxm5", gpus=1, usd_per_hour=3.29,
        spot_usd_per_hour=None, tier="on-demand", as_of="2026-11-30", source="skypilot catalog",
        accelerator="H100",
    )  # fmt: skip
    return replace(offer, **text)


def test_a_newline_in_any_header_value_adds_no_key() -> None:
    for field in ("provider", "instance_type", "source", "as_of"):
        text = task_yaml(_offer(**{field: INJECTED}), "h100-sxm", UPLOAD)
        task = yaml.safe_load(text)
        assert set(task) == KEYS, (field, sorted(task))
        # the value is still there to read, escaped, on the comment line
        assert "catalog\\nfile_mounts: {/remote: ~/.ssh}\\n#" in text
    # the GPU slug goes into the header too
    text = task_yaml(_offer(), "h100-sxm\nfile_mounts: {}", UPLOAD)
    assert set(yaml.safe_load(text)) == KEYS


def test_a_carriage_return_or_line_separator_is_escaped_too() -> None:
    for ch in ("\r", "\u2028", "\x85"):
        text = task_yaml(_offer(source=f"x{ch}file_mounts: {{}}"), "h100-sxm", UPLOAD)
        assert set(yaml.safe_load(text)) == KEYS, repr(ch)


def test_import_refuses_a_row_with_a_control_character(tmp_path: Path) -> None:
    csv = tmp_path / "ours.csv"
    csv.write_text(
        "gpu,provider,instance_type,gpus,usd_per_hour,as_of,source\n"
        "a10,r33fx,one_a10,1,0.50,2026-11-29,https://example.org/r33fx\n"
        'a10,r33fx,two_a10,2,1.00,2026-11-29,"https://example.org\nfile_mounts: {}"\n'
        'a10,r33fx,"bad\tname",1,0.50,2026-11-29,https://example.org/r33fx\n'
    )
    parsed = parse_file(csv, MAPPING, as_of="2026-11-30")
    assert [o.instance_type for o in parsed.offers] == ["one_a10"]
    reasons = {s.instance_type: s.reason for s in parsed.skipped}
    assert reasons["two_a10"] == "column 'source' contains a control character ('\\n' at 19)"
    assert reasons["bad\tname"].startswith("column 'instance_type' contains a control")


def test_import_of_a_skypilot_file_refuses_a_source_with_a_newline(tmp_path: Path) -> None:
    vms = tmp_path / "vms.csv"
    vms.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
        "gpu_1x_a10,A10,1,30,200,0.75,,us-east-1\n"
    )
    parsed = parse_file(
        vms, MAPPING, provider="lambda", as_of="2026-11-30", source="vms\nfile_mounts: {}"
    )
    assert parsed.offers == []
    assert [s.reason for s in parsed.skipped] == [
        "column 'source' contains a control character ('\\n' at 3)"
    ]
