"""Tests of core.reporting."""
