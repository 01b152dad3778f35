"""r32 new-user walk: a ResNet-50 training summary said "runs 1,640 images/s" where its row
and the table said 1,639: the engine's words (rank.significant, which the summary and the
rows' explanations use) rounded to three figures above 1,000, the pages and the CLI wrote such
a figure whole (README: "whole from 1,000"). One rule now writes all of them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.cli.recommend import _fmt
from app.domain import rank
from app.domain.figures import sig_figs
from app.numbers import sig_figs as numbers_sig_figs
from app.recommend import schemas as s
from app.recommend import service
from app.web.templating import num
from tests.support import summary_of


@pytest.mark.parametrize(
    ("value", "said"),
    [(1639.4, "1,639"), (32625.77, "32,626"), (999.4, "999"), (157.2, "157"), (23.71, "23.7"),
     (0.0000123, "0.0000123"), (0.0, "0")],
)  # fmt: skip
def test_the_engine_writes_a_figure_as_the_pages_and_the_cli_do(value: float, said: str) -> None:
    assert rank.significant(value) == said
    assert sig_figs(value) == numbers_sig_figs(value) == num(value) == _fmt(value) == said


def test_a_training_summary_gives_the_rows_figure(shipped_catalog: Any) -> None:
    gpus, offers, rules = shipped_catalog
    body = {"workload": {"preset": "resnet-50", "task": "training"}, "constraints": {"max_gpus": 1}}
    answer = service.recommend(
        s.RecommendationRequest.model_validate(body), gpus, rules, offers=offers
    )
    top = answer.recommendations[0]
    said = re.search(r"runs ([\d,.]+) images/s", summary_of(answer).sentence)
    assert said is not None and top.throughput.value >= 1000  # a figure the rule writes whole
    assert said.group(1) == f"{round(top.throughput.value):,}" == num(top.throughput.value)
