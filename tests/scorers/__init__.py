"""Tests of the prebuilt scorers (`core.scorers`)."""
