"""A benchmark run that the bench refuses reads the bench's whole error message: rich wraps
it at 80 columns in the child's stderr, and the run had kept only the log's last line,
"device node (/dev/nvidiactl, /dev/kfd or /dev/dxg); use --device cpu or auto"."""

from __future__ import annotations

from pathlib import Path

from app.reports.executor import _describe_exit

WRAPPED = """\
measuring nothing yet
error: no CUDA or ROCm device for --device cuda:0: this machine has no GPU
device node (/dev/nvidiactl, /dev/kfd or /dev/dxg); use --device cpu or auto
"""


def test_a_wrapped_error_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "stderr.log").write_text(WRAPPED)
    said = _describe_exit(2, tmp_path)
    assert said == (
        "the benchmark exited with code 2: no CUDA or ROCm device for --device cuda:0: this "
        "machine has no GPU device node (/dev/nvidiactl, /dev/kfd or /dev/dxg); use --device "
        "cpu or auto"
    )


def test_without_an_error_line_the_last_line_is_kept(tmp_path: Path) -> None:
    (tmp_path / "stderr.log").write_text("Traceback (most recent call last):\n  ...\nMemoryError\n")
    assert _describe_exit(1, tmp_path) == "the benchmark exited with code 1: MemoryError"
    (tmp_path / "stderr.log").write_text("")
    assert _describe_exit(1, tmp_path) == "the benchmark exited with code 1"
