"""New user's walk (thirty-fifth session): the compare page's badges read "0.431× worse" and
"0.929× worse", which a student reads as "0.43 times worse" (barely worse?) for a card with 43 %
of the baseline's FP32 rate. The ratio and the word are now set apart ("0.431×, worse") and the
line above says what a ratio is."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from tests.web.test_pages import page


def test_a_ratio_and_its_verdict_read_apart(read_client: TestClient) -> None:
    text = page(read_client, "/compare?slugs=rtx-4090,rtx-3090,a100-sxm4-80gb")
    badges = re.findall(r'<span class="badge[^"]*" data-better="(\w+)">([^<]*)</span>', text)
    assert {b for b, _ in badges} >= {"yes", "no"}
    for better, said in badges:
        if better == "same":
            assert re.fullmatch(r"[\d.,]+×", said), said
        else:
            word = "better" if better == "yes" else "worse"
            assert re.fullmatch(rf"[\d.,]+×, {word}", said), said
    assert "each GPU's figure ÷ the first GPU's" in html_lib.unescape(text)
