"""Test helpers users can use too: a fake OpenAI-compatible judge server on loopback."""

from core.testing.fake_judge import FakeJudge, Fault, Reply

__all__ = ["FakeJudge", "Fault", "Reply"]
