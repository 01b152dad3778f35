"""The form's error summary lists the fields in the order the page shows them (first-time
user's review: "Sequence length … Most to pay renting … Batch size" for a form that shows Batch
size first)."""

from __future__ import annotations

from app.web.forms import QuestionForm, grouped_fields


def test_the_error_summary_follows_the_forms_order() -> None:
    page = [f.name for *_, fs in grouped_fields() for f in fs]
    form = QuestionForm()
    # found in another order than the page's
    for name in reversed(["batch_size", "seq_len", "max_hourly_usd"]):
        assert name in page
        form.add_error(name, "bad")
    form.add_error("request", "the request as a whole")
    names = [n for n, _, _ in form.error_items()]
    assert names[:-1] == sorted(names[:-1], key=page.index) and names[-1] == "request"
