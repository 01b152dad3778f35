"""Memory a person reads is in GiB and says so: the engine's 10^9-byte figure shown as
2^30-byte units under a "GB" label had read as the API's *_gb (76.0 "GB" beside
required_gb 81.566). A card's own "80 GB" is 80 GiB."""

from __future__ import annotations

import pytest

from app.domain.units import GIB_PER_GB, vram
from app.web.templating import gb, gb_n


def test_vram_is_the_figure_in_gib() -> None:
    assert pytest.approx(1.073741824) == GIB_PER_GB
    assert vram(81.566) == pytest.approx(81.566e9 / 2**30)
    assert vram(80 * GIB_PER_GB) == pytest.approx(80.0)  # an "80 GB" H100, as labelled


def test_the_page_filter_labels_its_figure_gib() -> None:
    assert gb(85.899345920) == "80 GiB"
    assert gb(81.566).endswith(" GiB") and gb_n(81.566) == "76"
    assert " GB" not in gb(1.0)
    assert gb(None) == gb_n(None)  # the dash, unlabelled
