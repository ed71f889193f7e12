"""A fake OpenAI-compatible judge: an HTTP server on 127.0.0.1 speaking
`POST /v1/chat/completions`, whose answers and faults the caller scripts.

Judge steps pointed at it (`model="openai/<any name>"`, `api_base=judge.url`, any `api_key`) go
through the real litellm path (HTTP, parsing, usage, errors) with no network. Stdlib only.

    with FakeJudge() as judge:
        judge.script('{"score": 1}', Fault(status=500), Reply("not JSON", delay=0.5))
        ...   # each call takes the next scripted answer, then the default one
        judge.stats()   # {"requests": 3, "byStatus": {"200": 2, "500": 1}, "log": [...]}
        judge.authorizations   # the Authorization header of each request: which key came

`KEY_ECHO` in a scripted answer's content or fault message is replaced by the key the request
carried (its `Authorization: Bearer` value), as a server echoing a key back would do.

`GET <url>/__stats` (or `GET http://127.0.0.1:<port>/__stats`) returns the same JSON, for tests
that run the judge's client in another process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

from core.judge.estimate import shortest_answer

__all__ = ["KEY_ECHO", "FakeJudge", "Fault", "Reply", "answer_from_schema", "example_for_schema"]

KEY_ECHO = "{key}"
"""Replaced, in an answer's content or a fault's message, by the key the request carried."""


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
    retry_after: str | None = None
    """The `Retry-After` header to send: seconds (`"2"`) or an HTTP date; None sends none."""


Answer = str | Reply | Fault
Responder = Callable[[dict[str, Any]], Answer]


def _default_responder(_request: dict[str, Any]) -> Answer:
    return Reply('{"score": 1}')


_SCHEMA_MARKER = "JSON schema:\n"


def answer_from_schema(request: dict[str, Any]) -> Answer:
    """A responder that answers any judge step validly: a minimal instance of the JSON schema
    the request carries (as `response_format` or in the prompt), else a short free text."""
    schema = _request_schema(request)
    if schema is None:
        return Reply("The output answers the question and is supported by the reference.")
    return Reply(json.dumps(example_for_schema(schema, schema)))


def _request_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    response_format = request.get("response_format") or {}
    if isinstance(response_format, dict) and "json_schema" in response_format:
        schema: dict[str, Any] | None = response_format["json_schema"].get("schema")
        return schema
    prompt = next(
        (m.get("content", "") for m in request.get("messages", []) if m.get("role") == "user"), ""
    )
    if isinstance(prompt, str) and _SCHEMA_MARKER in prompt:
        try:
            parsed: dict[str, Any] = json.loads(prompt.rsplit(_SCHEMA_MARKER, 1)[1])
            return parsed
        except json.JSONDecodeError:
            return None
    return None


def example_for_schema(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A small value valid against `schema` (local `$ref`s resolved against `root`): the
    shortest answer the cost estimate assumes (`core.judge.estimate.shortest_answer`)."""
    return shortest_answer(schema, root)


class FakeJudge:
    """The server. Start it with `with FakeJudge() as judge:` or `start()` / `stop()`."""

    def __init__(self, responder: Responder = _default_responder, port: int = 0) -> None:
        self.responder = responder
        """Answers any call that has no scripted answer left."""
        self.requests: list[dict[str, Any]] = []
        """The JSON body of every chat-completion request received, in order."""
        self.authorizations: list[str | None] = []
        """The `Authorization` header of every chat-completion request (None when absent), in
        the order of `requests`: which key reached this server."""
        self._script: deque[Answer] = deque()
        self._statuses: Counter[int] = Counter()
        self._log: list[dict[str, Any]] = []
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

    def stats(self) -> dict[str, Any]:
        """`{"requests": n, "byStatus": {"200": k, ...}, "log": [...]}`: chat-completion requests
        received and the HTTP status each was answered with (decided on arrival: a request the
        client gave up on, e.g. after its timeout, counts with the status the server meant to
        send); `log` has one `{"at": t, "status": s, "totalTokens": n}` per request in order of
        arrival (`t`: `time.time()` on arrival; `n`: the tokens its answer reports, 0 for an
        error), which is what a rate limit is measured on."""
        with self._lock:
            return {
                "requests": len(self.requests),
                "byStatus": {str(status): n for status, n in sorted(self._statuses.items())},
                "log": [dict(entry) for entry in self._log],
            }

    def script(self, *answers: Answer) -> FakeJudge:
        """Queue answers for the next calls, in order."""
        with self._lock:
            self._script.extend(answers)
        return self

    def reset(self) -> None:
        """Forget the script, the recorded requests and the stats."""
        with self._lock:
            self._script.clear()
            self._log.clear()
            self.requests.clear()
            self.authorizations.clear()
            self._statuses.clear()

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

    def _next_answer(
        self, request: dict[str, Any], authorization: str | None = None
    ) -> Reply | Fault:
        arrived = time.time()
        with self._lock:
            self.requests.append(request)
            self.authorizations.append(authorization)
            scripted = self._script.popleft() if self._script else None
        answer = scripted if scripted is not None else self.responder(request)
        if isinstance(answer, str):
            answer = Reply(answer)
        status = answer.status if isinstance(answer, Fault) else 200
        with self._lock:
            self._statuses[status] += 1
            self._log.append({"at": arrived, "status": status, "totalTokens": _tokens(answer)})
        return answer

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
        # Without this, Nagle's algorithm holds each small reply back ~40 ms.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/__stats"):
                self._send(200, judge.stats())
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

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
            authorization = self.headers.get("Authorization")
            answer = _with_key(judge._next_answer(request, authorization), authorization)
            if answer.delay:
                time.sleep(answer.delay)
            if isinstance(answer, Fault):
                error = {"message": answer.message, "type": "fake_error", "code": None}
                headers = {"Retry-After": answer.retry_after} if answer.retry_after else {}
                self._send(answer.status, {"error": error}, headers)
            elif request.get("stream") is True:
                include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
                self._send_stream(judge._completion(answer), include_usage)
            else:
                self._send(200, judge._completion(answer))

        def _send_stream(self, completion: dict[str, Any], include_usage: bool) -> None:
            """A `"stream": true` request answered as OpenAI does: server-sent events, one
            `chat.completion.chunk` with the content, one with the finish reason, the usage
            (when `stream_options.include_usage` asked for it), then `data: [DONE]`."""
            frames = [json.dumps(chunk) for chunk in _stream_chunks(completion, include_usage)]
            data = "".join(f"data: {frame}\n\n" for frame in [*frames, "[DONE]"]).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", "fake-request-id")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", "fake-request-id")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. its timeout fired)

        def log_message(self, format: str, *args: Any) -> None:  # silence per-request logs
            pass

    return Handler


def _stream_chunks(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The chunks of a streamed answer carrying `completion`'s message, finish reason and usage."""
    choice = completion["choices"][0]
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    content = choice["message"]["content"]
    chunks: list[dict[str, Any]] = [
        {
            **head,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": content},
                    "finish_reason": None,
                }
            ],
        },
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


def _tokens(answer: Reply | Fault) -> int:
    """The tokens an answer reports using (its total, else prompt plus completion)."""
    if isinstance(answer, Fault):
        return 0
    if answer.total_tokens is not None:
        return answer.total_tokens
    return answer.prompt_tokens + answer.completion_tokens


def _with_key(answer: Reply | Fault, authorization: str | None) -> Reply | Fault:
    """`answer` with `KEY_ECHO` replaced by the key of the request (empty without one)."""
    key = (authorization or "").removeprefix("Bearer ").strip()
    if isinstance(answer, Fault) and KEY_ECHO in answer.message:
        return replace(answer, message=answer.message.replace(KEY_ECHO, key))
    if isinstance(answer, Reply) and KEY_ECHO in answer.content:
        return replace(answer, content=answer.content.replace(KEY_ECHO, key))
    return answer


def main() -> None:
    """Serve until interrupted, answering every call with the same content. Prints the URL.

    Run it as `python -c "from core.testing.fake_judge import main; main()"`."""
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible judge on loopback")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default='{"score": 1}', help="content of every answer")
    parser.add_argument(
        "--from-schema",
        action="store_true",
        help="answer every step validly from the JSON schema it asks for (ignores --reply)",
    )
    arguments = parser.parse_args()
    responder: Responder = (
        answer_from_schema if arguments.from_schema else lambda _request: Reply(arguments.reply)
    )
    judge = FakeJudge(responder, port=arguments.port)
    print(judge.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        judge._server.serve_forever()


if __name__ == "__main__":
    main()
