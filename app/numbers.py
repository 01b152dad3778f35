"""Numbers as people write them — "8.03B", "$800", "15k", "1,281,167" — read the same way by
the form and the command line."""

from __future__ import annotations

import math
import re
from decimal import Decimal

# one rule for every figure a person reads, kept in the domain so the engine's own words
# (rank.significant: explanations, the summary) write it as the pages and the CLI do
from app.domain.figures import sig_figs as sig_figs

# A comma is a thousands separator only between whole groups of three digits ("1,500",
# "12,000,000"): "0,80" or "2,50" is a decimal comma, and stripping it read $0.80 as $80.
_GROUPED_RE = re.compile(
    r"^[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?[kmbt]?$", re.I
)
_NUMBER_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([kmbt]?)$", re.IGNORECASE)
_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
NUMBER_HELP = "like 15k, 8.03B, 1,281,167 or $800"
# A word after the digits ("2,500 dollars", "15 kW"): the number is fine, the word is not read;
# the message says so rather than blaming the comma or the digits.
_WORD_RE = re.compile(r"^(.*[0-9.])([^\W\d_]+)$")


def parse_number(text: str) -> float:
    """'8.03B' -> 8.03e9, '$800' -> 800, '15k' -> 15000, '1,281,167' -> 1281167, '1.2e9'."""
    cleaned = re.sub(r"[\s_$]|usd", "", text.strip(), flags=re.IGNORECASE)
    word = _WORD_RE.match(cleaned)
    if word and word.group(2).lower() not in _SUFFIX and _reads(word.group(1)):
        raise ValueError(
            f"{text.strip()!r}: {word.group(2)!r} is not a unit read here (k, M, B, T, $ or "
            f"USD); write the number alone, {NUMBER_HELP}"
        )
    if "," in cleaned:
        if not _GROUPED_RE.match(cleaned):
            raise ValueError(
                f"{text.strip()!r}: a comma only separates thousands (1,500); "
                "write decimals with a point (0.80)"
            )
        cleaned = cleaned.replace(",", "")
    negative = cleaned.startswith("-")
    match = _NUMBER_RE.match(cleaned.lstrip("-+"))
    if not match:
        raise ValueError(f"must be a number, {NUMBER_HELP}")
    # decimal arithmetic, so 8.03B is exactly 8030000000
    value = float(Decimal(match.group(1)) * Decimal(_SUFFIX[match.group(2).lower()]))
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return -value if negative else value


def _reads(text: str) -> bool:
    """Whether ``text`` alone is a number parse_number reads."""
    try:
        parse_number(text)
    except ValueError:
        return False
    return True


# A duration's unit after its number, in hours: "Finish within (hours)" is where people write
# "36h", "2 days" or "1 week"; any other word is refused with the ones read here.
_HOURS_PER = {
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 1.0),
    **dict.fromkeys(("d", "day", "days"), 24.0),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 168.0),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 1 / 60),
}
_DURATION_RE = re.compile(r"^(.*?[0-9.])\s*([^\W\d_]+)$")
HOURS_HELP = "like 24, 36h, 2 days or 1 week"

# What each number field's "must be a number" message gives as an example: a value that field
# takes, written as people write it there (the shared help's "$800" read as an epoch count).
# The form, the command line and the JSON API say the same (a batch size had been refused
# on the CLI "like 15k, 8.03B, 1,281,167 or $800"); a form field not listed gets one by its
# kind (web.forms.number_example). tests/web checks every example parses and is within its
# field's limits.
NUMBER_EXAMPLES: dict[str, tuple[str, ...]] = {
    "params": ("8.03B", "70B", "124M"),
    "layers": ("32",),
    "hidden_size": ("4,096",),
    "num_heads": ("32",),
    "num_kv_heads": ("8",),
    "intermediate_size": ("14,336",),
    "vocab_size": ("128k", "32,000"),
    "max_context": ("8k", "131,072"),
    "gflops_per_sample": ("4.1",),
    "input_size": ("224",),
    "experts": ("8",),
    "active_experts": ("2",),
    "active_params": ("13B",),
    "activation_mb_per_sample": ("120", "0.5"),
    "activation_coeff": ("34",),
    "passes_per_sample": ("1", "50"),
    "kv_elements_per_token": ("65,536", "64k"),
    "kv_window_elements_per_token": ("65,536", "64k"),
    "sliding_window": ("4,096", "4k"),
    "batch_size": ("8", "1,024"),
    "seq_len": ("2,048", "8k"),
    "output_tokens": ("256", "1k"),
    "lora_rank": ("16",),
    "loss_chunks": ("8",),
    "dataset_samples": ("1,281,167", "50k"),
    "epochs": ("3", "0.5"),
    "latency_target_ms": ("500",),
    "concurrent_requests": ("64", "1k"),
    "requests_per_s": ("2", "0.5"),
    "prompt_tokens": ("1,000", "2k"),
    "serving.output_tokens": ("300",),
    "prompt_tokens_spread": ("500",),
    "output_tokens_spread": ("100",),
    "ttft_ms_target": ("2,000",),
    "itl_ms_target": ("200",),
    "max_purchase_usd": ("$800", "25k"),
    "max_hourly_usd": ("$2.50",),
    "max_job_cost_usd": ("$500", "10k"),
    "max_hours": ("24", "36h", "2 days"),
    "max_gpus": ("8",),
    "num_gpus": ("2",),
    "electricity_usd_per_kwh": ("0.15", "$0.30"),
    "hours_per_week": ("40",),
    "years": ("3", "1.5"),
    "resale_fraction": ("0.3",),
    "speed_weight": ("0.5",),
    "limit": ("10", "25"),
}


def field_help(name: str) -> str:
    """'like 8 or 1,024': the examples a number field ``name`` (a request field, or the
    form's "serving.output_tokens") is refused with; the shared NUMBER_HELP for any other."""
    examples = NUMBER_EXAMPLES.get(name) or NUMBER_EXAMPLES.get(name.rpartition(".")[2])
    if not examples:
        return NUMBER_HELP
    head = ", ".join(examples[:-1])
    return "like " + (f"{head} or {examples[-1]}" if head else examples[-1])


def field_error(exc: ValueError, name: str) -> ValueError:
    """``exc`` from parse_number with the shared examples replaced by field ``name``'s."""
    said = str(exc)
    if said.endswith(NUMBER_HELP):
        return ValueError(said.removesuffix(NUMBER_HELP) + field_help(name))
    return exc


def parse_hours(text: str) -> float:
    """A time in hours as people write it: '24' -> 24, '36h' -> 36, '2 days' -> 48, '1 week'
    -> 168, '90 min' -> 1.5; a bare number reads as parse_number reads it ('1.5k')."""
    stripped = text.strip()
    m = _DURATION_RE.match(stripped)
    unit = "" if m is None else m.group(2).lower()
    if unit == "m":  # a million to parse_number, a minute to some: neither is guessed
        raise ValueError(f"{stripped!r}: write min for minutes; {HOURS_HELP}")
    if m is None or unit in _SUFFIX:
        try:
            return parse_number(stripped)
        except ValueError as exc:
            # "soon": a time's own examples, not a price's ("like 15k, 8.03B ... or $800")
            if str(exc).endswith(NUMBER_HELP):
                raise ValueError(f"{stripped!r}: must be a number of hours, {HOURS_HELP}") from None
            raise
    if unit not in _HOURS_PER:
        raise ValueError(f"{stripped!r}: {m.group(2)!r} is not a time unit read here; {HOURS_HELP}")
    return parse_number(m.group(1)) * _HOURS_PER[unit]


def parse_int(text: str) -> int:
    value = parse_number(text)
    if value != int(value):
        raise ValueError("must be a whole number")
    return int(value)


def shown_of(shown: int, total: int) -> str:
    """How many a listing holds, as a table's title counts them: "53", or "4 of 53" where the
    page shows fewer (a bare "53" above four rows read as if the rest had gone missing)."""
    return f"{total}" if shown == total else f"{shown} of {total}"
