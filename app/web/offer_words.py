"""How the pages speak of an offer: whether its price is stale, and its instance in words."""

from __future__ import annotations

import re
from datetime import date

from app.config import Settings
from app.offers.service import is_stale, stale_cutoff


def price_is_stale(as_of: str | None, settings: Settings, today: date | None = None) -> bool:
    """Whether a price dated ``as_of`` is older than the server's ``offer_stale_days``: the
    offers API's own rule (``stale`` on GET /api/v1/offers), called rather than restated, so a
    page never calls current a price the API calls stale."""
    if not as_of:
        return False
    return is_stale(as_of, stale_cutoff(settings, today))


def stale_rule(settings: Settings) -> str:
    """The rule a stale mark's tooltip states; short, as a ranking carries a dozen marks."""
    days = settings.offer_stale_days
    return f"price over {days} day{'s' if days != 1 else ''} old"


# Prime Intellect's SkyPilot catalog names an instance by the host it resells and its shape,
# ``runpod__1xRTX3080Ti_12GB__7__31``: read on a page, that is an internal key, not a name.
_MARKETPLACE_KEY = (
    r"(?P<host>[a-z0-9_]+?)__(?P<n>\d+)x(?P<gpu>[A-Za-z0-9]+)_(?P<mem>\d+)GB"
    r"__(?P<cpus>\d+)__(?P<ram>\d+)"
)
_MARKETPLACE_ID = re.compile(f"^{_MARKETPLACE_KEY}$")
_MARKETPLACE_IN_TEXT = re.compile(rf"\b{_MARKETPLACE_KEY}\b")


def instance_words(instance_type: str, shape: bool = True) -> str | None:
    """A composed marketplace instance id in words ('1× RTX3080Ti 12GB via runpod (7 vCPU,
    31 GB RAM)'); None for a provider's own instance name, which reads as it is written."""
    m = _MARKETPLACE_ID.match(instance_type)
    if m is None:
        return None
    words = f"{m['n']}× {m['gpu']} {m['mem']}GB via {m['host']}"
    if shape:
        words += f" ({m['cpus']} vCPU, {m['ram']} GB RAM)"
    return words


def instances_in_words(text: str) -> str:
    """A sentence with every marketplace instance id in it said in words: the engine's
    explanations name the instance a row rents by its id."""
    if "__" not in text:
        # every id has its "__" separators and most lines have none: the pattern, whose lazy
        # host is tried at each word start, runs only on the few that do
        return text
    return _MARKETPLACE_IN_TEXT.sub(lambda m: instance_words(m.group(0), False) or m.group(0), text)
