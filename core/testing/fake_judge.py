"""A fake OpenAI-compatible judge: an HTTP server on 127.0.0.1 speaking
`POST /v1/chat/completions`, whose answers and faults the caller scripts.

Judge steps pointed at it (`model="openai/<any name>"`, `api_base=judge.url`, any `api_key`) go
through the real litellm path (HTTP, parsing, usage, errors) with no network. Stdlib only.

    with FakeJudge() as judge:
        judge.script('{"score": 1}', Fault(status=500), Reply("not JSON", delay=0.5))
        ...   # each call takes the next scripted answer, then the default one
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

__all__ = ["FakeJudge", "Fault", "Reply"]


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful completion."""

    content: str
    prompt_tokens: int = 10
    completion_tokens: int = 20
    total_tokens: int | None = 30
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    finish_reason: str = "stop"
    model: str = "fake-judge-model"
    delay: float = 0.0
    """Seconds to wait before answering (to make a slow judge)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """An HTTP error answer (429, 500, 503, 400, 401, ...)."""

    status: int = 500
    message: str = "fake judge fault"
    delay: float = 0.0


Answer = str | Reply | Fault
Responder = Callable[[dict[str, Any]], Answer]


def _default_responder(_request: dict[str, Any]) -> Answer:
    return Reply('{"score": 1}')


class FakeJudge:
    """The server. Start it with `with FakeJudge() as judge:` or `start()` / `stop()`."""

    def __init__(self, responder: Responder = _default_responder, port: int = 0) -> None:
        self.responder = responder
        """Answers any call that has no scripted answer left."""
        self.requests: list[dict[str, Any]] = []
        """The JSON body of every chat-completion request received, in order."""
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._ids = count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The `api_base` to give litellm: `http://127.0.0.1:<port>/v1`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def call_count(self) -> int:
        """Chat-completion requests received so far."""
        with self._lock:
            return len(self.requests)

    def script(self, *answers: Answer) -> FakeJudge:
        """Queue answers for the next calls, in order."""
        with self._lock:
            self._script.extend(answers)
        return self

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def prompts(self) -> list[str]:
        """The user message of every request, in order."""
        with self._lock:
            return [
                next((m["content"] for m in r.get("messages", []) if m.get("role") == "user"), "")
                for r in self.requests
            ]

    def start(self) -> FakeJudge:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeJudge:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _next_answer(self, request: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        return self.responder(request)

    def _completion(self, reply: Reply) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
        }
        if reply.total_tokens is not None:
            usage["total_tokens"] = reply.total_tokens
        if reply.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
        if reply.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
        }


def _handler_for(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real provider

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                request = json.loads(body or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "request body is not JSON"}})
                return
            answer = judge._next_answer(request)
            if isinstance(answer, str):
                answer = Reply(answer)
            if answer.delay:
                time.sleep(answer.delay)
            if isinstance(answer, Fault):
                error = {"message": answer.message, "type": "fake_error", "code": None}
                self._send(answer.status, {"error": error})
            else:
                self._send(200, judge._completion(answer))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", "fake-request-id")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. its timeout fired)

        def log_message(self, format: str, *args: Any) -> None:  # silence per-request logs
            pass

    return Handler


def main() -> None:
    """Serve until interrupted, answering every call with the same content. Prints the URL.

    Run it as `python -c "from core.testing.fake_judge import main; main()"`."""
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible judge on loopback")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default='{"score": 1}', help="content of every answer")
    arguments = parser.parse_args()
    judge = FakeJudge(lambda _request: Reply(arguments.reply), port=arguments.port)
    print(judge.url, flush=True)
    try:
        judge._server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
