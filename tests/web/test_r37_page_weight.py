"""The serving answer page's weight savers keep what they replace: one weight / KV format for
every shown shape is said once in the summary, and each chart's image is named by its caption."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

SERVING = (
    "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
    "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
)


def _tables(html: str) -> list[tuple[str, str]]:
    """(summary, table) of every 'other shapes' block."""
    return re.findall(
        r"<summary>(Other shapes of [^<]*)</summary>\s*<table data-alternatives>(.*?)</table>",
        html,
        re.S,
    )


def test_one_shared_format_is_said_in_the_summary_not_in_columns(read_client: TestClient) -> None:
    html = read_client.get(SERVING).text
    blocks = _tables(html)
    assert blocks, "the serving page lists other shapes"
    # this job's shapes are all served at bf16 weights and a bf16 cache
    assert any("all bf16 weights, bf16 KV cache" in summary for summary, _ in blocks)
    for summary, table in blocks:
        rows = re.findall(r"<tr data-alt-gpus[^>]*>(.*?)</tr>", table, re.S)
        if "weights" in summary:
            # the columns are gone and the summary names the one format they would repeat
            assert '<th scope="col">Weights</th>' not in table
            fmt = re.search(r"all (\S+) weights", summary)
            assert fmt is not None and fmt.group(1) in ("bf16", "fp16", "fp8", "int4", "int8")
            assert all(f"<td>{fmt.group(1)}</td>" not in r for r in rows)
        else:
            assert '<th scope="col">Weights</th>' in table


def test_chart_images_are_named_by_their_captions(read_client: TestClient) -> None:
    html = read_client.get(SERVING).text
    named = re.findall(r'<svg [^>]*aria-labelledby="([^"]+)"', html)
    assert named, "the serving charts name their images by id"
    for cid in named:
        caption = re.search(rf'<figcaption id="{cid}">([^<]+)</figcaption>', html)
        assert caption is not None and caption.group(1).strip(), cid
    assert len(set(named)) == len(named)
