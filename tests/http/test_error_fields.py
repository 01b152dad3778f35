"""The field an error names is the one the user wrote."""

from __future__ import annotations

from app.errors import field_path


def test_a_unions_failing_branch_is_not_part_of_the_field() -> None:
    # {"device_report_id": 1.5} failed every branch of int | str: pydantic's location names
    # the last, and the answer read 'device_report_id.str'
    assert field_path(("body", "device_report_id", "str"), "body") == "device_report_id"
    assert field_path(("body", "x", "function-after[check(), int]"), "body") == "x"
    assert field_path(("body", "constraints", "vendors", 0), "body") == "constraints.vendors.0"
    assert field_path(("query", "min_memory_gb"), "q") == "min_memory_gb"
    assert field_path(("body", 12), "body") == "body"
