"""New-user walk (thirty-second session): an empty answer's page said "Left out: 59 does not
fit, 37 over budget" where the API's empty.message says "59 do not fit" (whatif.reason_count,
the thirtieth session's fix, had not reached the page's macro)."""

from __future__ import annotations

from app.web.templating import make_templates


def _reasons(reasons: dict[str, int]) -> str:
    env = make_templates().env
    tpl = env.from_string(
        '{% from "_macros.html" import why_empty %}{{ why_empty(reasons, [], "buy") }}'
    )
    return tpl.render(reasons=reasons)


def test_the_verb_agrees_with_the_count_on_the_page() -> None:
    html = _reasons({"does_not_fit": 59, "over_budget": 37, "no_price": 21})
    assert "Left out: 59 do not fit, 37 over budget, 21 no price." in html


def test_one_card_keeps_the_singular() -> None:
    html = _reasons({"does_not_fit": 1, "misses_deadline": 2})
    assert "2 miss deadline" in html and "1 does not fit" in html
