"""The PATCH body offers exactly the fields of a whole entry, each optional."""

from __future__ import annotations

from app.catalog.schemas import GpuCreate, GpuFields, GpuPatch


def test_patch_has_every_entry_field_and_nothing_else() -> None:
    entry = set(GpuCreate.model_fields) - {"slug"}  # the slug comes from the path
    assert set(GpuPatch.model_fields) == entry
    assert set(GpuFields.model_fields) <= entry
    for name, info in GpuPatch.model_fields.items():
        assert not info.is_required(), name
