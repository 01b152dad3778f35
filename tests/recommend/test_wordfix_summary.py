"""The verdict in the reader's terms: a speech pick's real-time factor, an image pick's
seconds per image and the steps and resolution behind it, the stale prices it quotes (said
by the API and the CLI as by the page), and the same usable memory as the row's explanation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.recommend.summary import split_stale, stale_note

BUY_LLAMA = {
    "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},
    "constraints": {"acquisition": "buy", "max_purchase_usd": 1500, "max_gpus": 1},
    "objective": "best_value",
}


def _ask(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def test_a_speech_verdict_gives_its_real_time_factor(read_client: TestClient) -> None:
    """ "0.311 30-s windows/s" is about 9× real time: an hour of audio in about 6½ min."""
    answer = _ask(
        read_client,
        {"workload": {"preset": "whisper-large-v3", "task": "inference", "batch_size": 1}},
    )
    top = answer["recommendations"][0]
    audio = top["throughput"]["audio_seconds_per_s"]
    assert audio and audio > 1
    sentence = answer["summary"]["sentence"]
    said = re.search(r"about ([\d.,]+)× real time: 1 h of audio in about ([\d½]+) min", sentence)
    assert said is not None, sentence
    assert float(said.group(1).replace(",", "")) == pytest.approx(audio, rel=0.06)
    minutes = float(said.group(2).replace("½", ".5"))
    assert minutes == pytest.approx(60 / audio, abs=0.26)


def test_an_image_verdict_gives_seconds_per_image_and_its_steps(read_client: TestClient) -> None:
    # the review's question: a student's SDXL card under $1,000 makes well under one a second
    body = {
        "workload": {"preset": "sdxl", "task": "inference", "batch_size": 1},
        "constraints": {"acquisition": "buy", "max_purchase_usd": 1000},
        "objective": "best_value",
    }
    answer = _ask(read_client, body)
    rate = answer["recommendations"][0]["throughput"]["value"]
    assert rate < 1
    sentence, assumptions = answer["summary"]["sentence"], answer["summary"]["assumptions"]
    said = re.search(r"images/s \(about ([\d.]+) s per image\)", sentence)
    assert said is not None, sentence
    assert float(said.group(1)) == pytest.approx(1 / rate, rel=0.01)
    # the preset's 1024² image, 50 UNet passes = 25 steps under classifier-free guidance
    model = answer["workload"]["model"]
    assert model["input_size"] == 1024 and model["passes_per_sample"] == 50
    assert "1024×1024 images" in assumptions
    assert "25 denoising steps with classifier-free guidance (50 UNet passes" in assumptions
    # a CNN's verdict at hundreds of images a second says no seconds per image
    cnn = _ask(read_client, {"workload": {"preset": "resnet-50", "task": "inference"}})
    assert "per image" not in cnn["summary"]["sentence"]


def test_the_explanation_and_the_verdict_give_one_usable_memory(read_client: TestClient) -> None:
    """ "needs 6.6 GB of 8 GB" beside "fits with 1.18 GB spare of 7.78 GB"."""
    answer = _ask(read_client, BUY_LLAMA | {"limit": 10})
    sentence = answer["summary"]["sentence"]
    have = re.search(r"GiB spare of ([\d.,]+) GiB", sentence)
    assert have is not None, sentence
    first = answer["recommendations"][0]["explanation"][0]
    assert re.search(rf"needs [\d.,]+ GiB of {re.escape(have.group(1))} GiB", first), first


@pytest.fixture(scope="module")
def stale_clients(read_settings: Settings) -> Iterator[dict[int, TestClient]]:
    """Apps on the same data whose prices are all stale (1 day) or none (100 years)."""
    apps = {
        days: create_app(read_settings.model_copy(update={"offer_stale_days": days}))
        for days in (1, 36500)
    }
    with TestClient(apps[1]) as all_stale, TestClient(apps[36500]) as none_stale:
        yield {1: all_stale, 36500: none_stale}
    for app in apps.values():
        app.state.engine.dispose()


def test_the_api_verdict_says_which_quoted_prices_are_stale(
    stale_clients: dict[int, TestClient],
) -> None:
    answer = _ask(stale_clients[1], BUY_LLAMA)
    sentence = answer["summary"]["sentence"]
    quoted = sorted(set(re.findall(r"as of (\d{4}(?:-\d\d){0,2})", sentence)))
    assert quoted
    assert sentence.endswith(" " + stale_note(quoted)), sentence
    body, note = split_stale(sentence)
    assert note == stale_note(quoted) and "stale" not in body
    assert f"{body} {note}" == sentence
    fresh = _ask(stale_clients[36500], BUY_LLAMA)["summary"]["sentence"]
    assert "stale" not in fresh and split_stale(fresh) == (fresh, None)


def test_the_cli_verdict_is_the_api_sentence_with_its_stale_note(
    stale_clients: dict[int, TestClient],
) -> None:
    """The CLI prints summary.sentence: built once, in app/recommend/summary.py."""
    from rich.console import Console

    from app.cli.recommend import render
    from app.recommend import schemas as s

    answer = _ask(stale_clients[1], BUY_LLAMA)
    response = s.RecommendationResponse.model_validate(answer)
    console = Console(record=True, width=4000)
    render(response, console)
    text = console.export_text()
    assert f"Verdict: {answer['summary']['sentence']}" in text
    assert re.search(r"The prices? as of .* (are|is) stale\.", text)


def test_stale_note_wording() -> None:
    assert stale_note(["2026-06"]) == "The price as of 2026-06 is stale."
    assert stale_note(["2026-06", "2026-09"]) == "The prices as of 2026-06 and 2026-09 are stale."
    assert stale_note(["2025-03", "2026-06", "2026-09"]) == (
        "The prices as of 2025-03, 2026-06 and 2026-09 are stale."
    )
