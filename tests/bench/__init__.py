"""Tests of the on-device benchmark package (app/bench)."""
