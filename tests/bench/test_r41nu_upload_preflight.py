"""`bench --upload` asks the server before measuring: a server that was down had been found out
only after the whole benchmark (a new user's pass, forty-first session). It warns and measures
anyway (the server may be up by the end; a failed upload keeps the report), so the check is a
warning, not a refusal."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

from rich.console import Console

from app.bench.command import bench_command
from app.bench.server_url import unreachable
from tests.support import free_port


@contextmanager
def _answering(status: int) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_nothing_listening_is_said() -> None:
    base = f"http://127.0.0.1:{free_port()}"
    said = unreachable(base)
    assert said is not None and said.startswith(f"cannot connect to {base}")


def test_a_server_that_answers_passes_and_a_404_is_named() -> None:
    with _answering(200) as base:
        assert unreachable(base) is None
    with _answering(503) as base:  # up but not ready: it may be by the end of the run
        assert unreachable(base) is None
    with _answering(404) as base:
        said = unreachable(base + "/device")
        assert said is not None and "answers 404" in said and "base URL" in said


def test_bench_warns_before_it_measures() -> None:
    base = f"http://127.0.0.1:{free_port()}"
    console = Console(record=True, width=200)
    # --gpu on a machine whose torch sees no GPU is refused right after the device probe:
    # the warning comes before that, so nothing is measured here
    code = bench_command("quick", "cpu", None, base, None, "rtx-4090", None, None, console=console)
    out = console.export_text()
    assert code == 2
    assert f"warning: cannot connect to {base}" in out and "measuring anyway" in out
    assert out.index("warning:") < out.index("names a GPU")
