"""`gpu-advisor bench`'s table at 80 columns, or piped: words fold between words only. The
benchmark column had broken "benchmar / k", "bandwidt / h", "transfor / mer" while the measured
column was padded to its widest cell (the peak memory's two figures on one line). These rows are
a quick CPU run's (app.bench.command's _SECTIONS), the peak memory's figures on two lines.

Needs the change to app/bench/command.py proposed with it (rows_table, summary_table's width)."""

from __future__ import annotations

import pytest
from rich.console import Console

from app.bench.command import rows_table

ROWS = [
    ("matmul fp32", "0.0411 TFLOPS [yellow]~[/]", "—", "—", "best of 4: 1536×1536×1536"),
    ("matmul fp16", "0.000245 TFLOPS [yellow]~[/]", "—", "—", "not native (emulated)"),
    ("memory bandwidth", "10.7 GB/s", "—", "—", "triad, 128 MiB arrays"),
    ("host↔device", "[dim]n/a[/]", "—", "—", "CPU only"),
    ("CNN block train fp32", "1,268 samples/s", "—", "—", "B90=1; 0.00781 TFLOPS"),
    ("transformer forward fp32", "176 samples/s", "—", "—", "B90=2; 0.00479 TFLOPS"),
    ("peak memory (train step)", "17.2 MiB +\n1.29 MiB/sample", "—", "—", "transformer_block"),
    ("attention prefill fp32", "0.0021 TFLOPS", "—", "—", "best of 1: sdpa 1×8×128×128×64"),
    ("normalization fp32", "8.24 GB/s", "—", "—", "best of 2: layer_norm 2048×1024"),
    ("embedding fp32", "2.1 GB/s", "—", "—", "best of 1: embedding 32000×1024×2048"),
    ("launch graph", "[dim]skipped[/]", "—", "—", "CUDA graphs need a CUDA device (this is cpu)"),
    (
        "all reduce",
        "[dim]skipped[/]",
        "—",
        "—",
        "collectives are measured with NCCL on CUDA GPUs (this is cpu)",
    ),
]


@pytest.mark.parametrize("width", [80, 72])
def test_every_word_stays_whole_and_the_table_fits(width: int) -> None:
    con = Console(record=True, width=width)
    con.print(rows_table("AMD EPYC (cpu, quick profile)", ROWS, width))
    text = con.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    cells = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    bench_words = {w for c in cells for w in c[1].split()}
    for row in ROWS:
        for word in row[0].split():
            assert word in bench_words, (word, width)
    measured = {c[2].strip() for c in cells}
    for figure in ("0.000245 TFLOPS ~", "1,268 samples/s", "17.2 MiB +", "1.29 MiB/sample"):
        assert figure in measured, figure  # a figure never breaks
    if width == 80:  # room for every note word whole too
        note_words = {w for c in cells for w in c[5].split()}
        for row in ROWS:
            for word in row[4].split():
                assert word in note_words, word


def test_a_wide_terminal_keeps_each_row_on_one_line() -> None:
    con = Console(record=True, width=200)
    con.print(rows_table("t", ROWS, 200))
    lines = [line for line in con.export_text().splitlines() if line.startswith("│")]
    assert len(lines) == len(ROWS) + 1  # the peak memory's two figures: its second line
