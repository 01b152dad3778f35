"""The recommend command's options come from the API's request model (no process needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from app.cli.recommend import OPTIONS, build_request, read_request_file
from app.recommend.schemas import RecommendationRequest


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for name, info in model.model_fields.items():
        ann: Any = info.annotation
        inner = [a for a in getattr(ann, "__args__", (ann,)) if a is not type(None)]
        sub = next((a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if sub is not None:
            out |= _leaf_paths(sub, (*prefix, name))
        else:
            out.add((*prefix, name))
    return out


def test_every_request_field_is_an_option() -> None:
    assert {o.path for o in OPTIONS} == _leaf_paths(RecommendationRequest)
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    flags = {f for o in OPTIONS for f in o.flags}
    for flag in (
        "--activation-mb-per-sample",
        "--lora-rank",
        "--intermediate-size",
        "--max-context",
        "--experts",
        "--active-experts",
        "--active-params",
        "--passes-per-sample",
        "--allow-tf32-matmul/--no-allow-tf32-matmul",
        "--what-if/--no-what-if",
        "--vendor",
        "--device-report",
    ):
        assert flag in flags, flag


def test_options_land_where_the_api_expects_them() -> None:
    body = build_request(
        {
            "preset": "llama-3-8b",
            "params": 7e9,
            "lora_rank": 8,
            "vendors": ["nvidia", "amd"],
            "objective": "fastest",
            "what_if": True,
            "device_report_id": "3",
            "max_gpus": None,
        }
    )
    assert body == {
        "workload": {"preset": "llama-3-8b", "model": {"params": 7e9}, "lora_rank": 8},
        "constraints": {"vendors": ["nvidia", "amd"]},
        "objective": "fastest",
        "what_if": True,
        "device_report_id": "3",
    }
    RecommendationRequest.model_validate(body)


def test_options_change_a_request_file(tmp_path: Path) -> None:
    base = {
        "workload": {"preset": "gpt-2", "task": "training", "model": {"layers": 12}},
        "constraints": {"max_gpus": 2},
        "limit": 3,
    }
    path = tmp_path / "req.json"
    path.write_text(json.dumps(base))
    body = build_request(
        {"batch_size": 16, "max_gpus": 4, "hidden_size": 768}, read_request_file(str(path))
    )
    assert body["workload"] == {
        "preset": "gpt-2",
        "task": "training",
        "batch_size": 16,
        "model": {"layers": 12, "hidden_size": 768},
    }
    assert body["constraints"] == {"max_gpus": 4} and body["limit"] == 3
    assert base["constraints"] == {"max_gpus": 2}  # the file's dict is not modified


def test_the_table_says_a_missed_deadline_and_an_empty_answer() -> None:
    # the CLI once printed an empty table and the what-ifs, not the answer's own words
    from rich.console import Console

    from app.cli.recommend import render
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import A100, H100, RULES

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": 0.001}}
    )
    response = service.recommend(request, [A100, H100], RULES)
    assert response.deadline is not None and response.empty is not None
    console = Console(record=True, width=2000)
    render(response, console)
    text = console.export_text()
    assert response.deadline.message in text and response.empty.message in text
    assert all(line in text for line in response.deadline.would)


def test_the_table_gives_the_verdict_and_memory_in_the_units_its_explanation_reads() -> None:
    """The CLI printed the API's 10^9-byte figures as "GB" (needs 21.5 GB) above an explanation
    in the vendors' GB (needs 20.0 GB of 186 GB), and no verdict: it now reads as the page."""
    from rich.console import Console

    from app.cli.recommend import render
    from app.domain.units import gib, vram
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import A100, H100, RULES
    from tests.support import summary_of

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 8}}
    )
    response = service.recommend(request, [A100, H100], RULES)
    response.summary = summary_of(response)
    console = Console(record=True, width=2000)
    render(response, console)
    text = console.export_text()
    assert f"Verdict: {response.summary.sentence}" in text
    need = response.memory.required_gb
    # "at least": the header's is the least the job needs, each row shows its own
    # GiB of 2^30 bytes, labelled so, as the explanations say it; the API's *_gb are 10^9
    assert f"needs at least {gib(need)} GiB" in text
    # "GB" only in the footnote's card label ("an 80 GB H100 holds 80 GiB")
    assert not re.search(r"\d GB\b", text.replace("an 80 GB H100", ""))
    assert "memory GiB" in text and "*_gb fields are 10^9 bytes" in text
    top = response.recommendations[0]
    # the capacity to a tenth ("15.3/16" hid 0.3 GB of room on a 15.6 GB card)
    shown = f"{vram(top.memory.required_gb):.1f}/{vram(top.memory.available_gb or 0):.1f}"
    assert shown in text
    assert f"needs {gib(top.memory.required_gb)} GiB of" in top.explanation[0]


def test_an_empty_serving_plan_lists_the_changes_that_would_run_it_and_no_empty_table() -> None:
    """The CLI printed a serving plan with no row as an empty table and none of the changes
    the page lists under its banner."""
    from rich.console import Console

    from app.catalog.loader import read_gpu_specs
    from app.cli.recommend import render
    from app.recommend import schemas as s
    from app.recommend import service
    from app.recommend.presets import DATA_DIR
    from app.shipped.rules import load_rules

    request = s.RecommendationRequest.model_validate(
        {
            "workload": {
                "preset": "qwen3-235b-a22b", "task": "serving",
                "serving": {"concurrent_requests": 4},
            },
            "constraints": {"acquisition": "buy", "max_purchase_usd": 15000},
            "objective": "cheapest",
        }
    )  # fmt: skip
    response = service.recommend(request, read_gpu_specs(DATA_DIR), load_rules(DATA_DIR))
    assert response.empty is not None and response.empty.nearest
    console = Console(record=True, width=2000)
    render(response, console)
    text = console.export_text()
    assert "These changes would let GPUs run it:" in text
    for v in response.empty.nearest:
        # can_run counts kinds of GPU, as the API's empty answer says ("1 GPU" meant one kind)
        assert f"• {v.change}: {v.can_run} kind" in text
    assert "replicas × GPUs" not in text  # no table of nothing


def test_numbers_are_read_as_the_help_and_the_form_write_them() -> None:
    """The help says --params takes "8.03B" and --max-purchase-usd "15k"; the CLI's float
    parsing refused both. A number it cannot read names its flag."""
    import pytest

    from app.cli.recommend import OptionError

    body = build_request(
        {"preset": "llama-3-8b", "params": "8.03B", "max_purchase_usd": "$15k",
         "dataset_samples": "1,281,167", "batch_size": "4"}
    )  # fmt: skip
    assert body["workload"]["model"]["params"] == 8.03e9
    assert body["workload"]["dataset_samples"] == 1_281_167
    assert body["workload"]["batch_size"] == 4 and isinstance(body["workload"]["batch_size"], int)
    assert body["constraints"]["max_purchase_usd"] == 15_000
    with pytest.raises(OptionError) as bad:
        build_request({"batch_size": "2.5"})
    assert bad.value.flag == "--batch-size" and "whole number" in str(bad.value)


def test_an_80_column_table_folds_figures_and_a_buyer_sees_no_rented_hour() -> None:
    """At 80 columns a likely range read "1,110…" and a price "0.…"; a buy answer showed
    $/1M output tokens of a rented hour (blank for its own pick) and a $/h column."""
    from rich.console import Console

    from app.cli.recommend import render
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import A100, H100, RTX4090, RULES
    from tests.support import summary_of

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 8},
         "constraints": {"acquisition": "buy"}}
    )  # fmt: skip
    response = service.recommend(request, [A100, H100, RTX4090], RULES)
    response.summary = summary_of(response)
    console = Console(record=True, width=80)
    render(response, console)
    text = console.export_text()
    table = text[text.index("┏") : text.index("┘")]
    assert "…" not in table
    assert "$/1M" not in table and "$/h" not in table and "buy $" in table


def test_a_rate_below_one_keeps_three_figures() -> None:
    """SDXL's 0.12 and 0.108 samples/s both read '0.1' (and a range '0.1–0.2')."""
    from app.cli.recommend import _fmt

    assert (_fmt(0.12), _fmt(0.108), _fmt(0.0456)) == ("0.12", "0.108", "0.0456")
    assert (_fmt(12.345), _fmt(1234.5), _fmt(0.5, 2)) == ("12.3", "1,234", "0.50")


def test_the_answers_field_names_read_as_the_flags_a_cli_user_types() -> None:
    """The verdict said "give dataset_samples for your own" and "(constraints.max_gpus 64)" to
    a CLI user, who types --dataset-samples and --max-gpus; a word no option carries stays."""
    from app.cli.recommend import as_flags

    said = as_flags(
        "Caveat: max_hours judged against an assumed job size; give dataset_samples for your "
        "own; more GPUs (constraints.max_gpus 64); not_a_field stays"
    )
    assert "--max-hours judged" in said and "give --dataset-samples" in said
    assert "(--max-gpus 64)" in said and "not_a_field stays" in said


def test_the_help_writes_a_range_as_people_do() -> None:
    """--max-context's range read "[1, 2.09715e+06]"; an end up to ten million is written
    whole with separators, a larger one stays short, and a one-sided bound says its side."""
    helps = {o.name: o.help for o in OPTIONS}
    assert helps["max_context"].endswith("[1, 2,097,152]"), helps["max_context"]
    assert helps["params"].endswith("(0, 1e+13]"), helps["params"]
    assert not any("e+06" in h or "e+05" in h for h in helps.values())


def test_an_80_column_table_never_breaks_a_figure() -> None:
    """Stable Diffusion bought under $800 at 80 columns: "2.6/12." on one line and "0" on the
    next read as two numbers. Figures stay whole on a line; the names fold instead."""
    from rich.console import Console

    from app.catalog.loader import read_gpu_specs
    from app.cli.recommend import _fmt, render
    from app.domain.units import vram
    from app.recommend import schemas as s
    from app.recommend import service
    from app.recommend.presets import DATA_DIR
    from app.shipped.rules import load_rules

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "stable-diffusion-1.5"},
         "constraints": {"acquisition": "buy", "max_purchase_usd": 800}}
    )  # fmt: skip
    response = service.recommend(request, read_gpu_specs(DATA_DIR), load_rules(DATA_DIR))
    assert response.recommendations
    console = Console(record=True, width=80)
    render(response, console)
    text = console.export_text()
    table = text[text.index("┏") : text.index("┘")]
    for r in response.recommendations:
        memory = f"{vram(r.memory.required_gb):.1f}/{vram(r.memory.available_gb or 0.0):.1f}"
        likely = f"{_fmt(r.uncertainty.low)}–{_fmt(r.uncertainty.high)}"
        assert f" {memory} " in table, memory
        # whole where the width leaves it room, else named as left out below the table
        assert f" {likely} " in table or "Left out at this width: likely range" in text, likely
        assert f" {_fmt(r.cost.purchase_usd, 0)} " in table
