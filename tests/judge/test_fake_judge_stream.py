"""The fake judge answers a `"stream": true` request as OpenAI does (Mastra's judge streams)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from core.testing.fake_judge import FakeJudge, Reply


def post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read().decode()


def frames(text: str) -> list[str]:
    return [line.removeprefix("data: ") for line in text.split("\n\n") if line.strip()]


def test_a_streamed_request_gets_server_sent_events() -> None:
    with FakeJudge() as judge:
        judge.script(Reply('{"score": 0.5}', prompt_tokens=7, completion_tokens=3))
        kind, text = post(
            judge.url,
            {"messages": [], "stream": True, "stream_options": {"include_usage": True}},
        )
    assert kind == "text/event-stream"
    events = frames(text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    content = "".join(choice["delta"].get("content", "") for c in chunks for choice in c["choices"])
    assert content == '{"score": 0.5}'
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]] == [None, "stop"]
    assert chunks[-1]["usage"]["prompt_tokens"] == 7 and chunks[-1]["choices"] == []


def test_without_include_usage_no_usage_chunk_and_plain_requests_unchanged() -> None:
    with FakeJudge() as judge:
        _, text = post(judge.url, {"messages": [], "stream": True})
        kind, plain = post(judge.url, {"messages": []})
    assert not any("usage" in json.loads(e) for e in frames(text)[:-1])
    assert kind == "application/json"
    assert json.loads(plain)["choices"][0]["message"]["content"] == '{"score": 1}'
