"""Form error wording: a word after a number is named with the field's own examples, and a
config.json error says "at" once."""

from __future__ import annotations

from app.web import forms


def test_a_word_after_the_budget_is_named_not_the_comma() -> None:
    form = forms.parse_question([("preset", "llama-3-8b"), ("max_purchase_usd", "2,500 dollars")])
    message = form.errors["max_purchase_usd"]
    assert "'dollars' is not a unit" in message and "comma" not in message
    assert "$800" in message
    ok = forms.parse_question([("preset", "llama-3-8b"), ("max_purchase_usd", "2,500 USD")])
    assert "max_purchase_usd" not in ok.errors


def test_an_unterminated_config_string_says_at_once() -> None:
    text = '{\n  "hidden_size": 4096,\n  "model_type": "llama'
    form = forms.parse_question([("hf_config", text)])
    message = form.errors["hf_config"]
    assert "at at" not in message
    assert "Unterminated string starting at line 3, column 17" in message
