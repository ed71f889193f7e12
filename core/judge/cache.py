"""The judge cache: identical judge requests answered from a store instead of the provider.

Opt-in per judge (`JudgeConfig(cache=True)`, `ExperimentConfig.cache`). The key is a SHA-256
of what decides the answer: the model, the API base, the messages, the `response_format` and
every call setting except those that only change how the request travels (`timeout`,
`num_retries`, `max_retries`, the API key). Only validated answers are stored, so a malformed
answer is never replayed (docs/core.md, The judge cache).

Where (`SCORELAB_JUDGE_CACHE`):

- unset: an SQLite file `judge-cache.sqlite3` in the data directory (`SCORELAB_DATA_DIR`, else
  `data/` of the project checkout when writable, else `$XDG_DATA_HOME/scorelab`);
- a folder path: the SQLite file in that folder;
- `redis://...` or `rediss://...`: litellm's own `RedisCache` (needs the `redis` package).

litellm's `Cache` object is not used for the disk: litellm 1.110 removed its disk backend, and
its global `litellm.cache` would switch caching on for every call of the process, where a cache
hit must stay visible in the judge record (no attempt, no model call, `cached: true`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "CACHE_ENV",
    "DATA_DIR_ENV",
    "CachedAnswer",
    "DiskJudgeCache",
    "JudgeCacheError",
    "JudgeCacheStore",
    "cache_key",
    "cache_location",
    "judge_cache",
]

CACHE_ENV = "SCORELAB_JUDGE_CACHE"
"""Where the judge cache lives: unset (the data directory), a folder, or a `redis://` URL."""
DATA_DIR_ENV = "SCORELAB_DATA_DIR"
"""scorelab's data directory (the judge cache's default home)."""
CACHE_FILE = "judge-cache.sqlite3"
REDIS_TTL_S = 90 * 24 * 3600
"""How long a Redis entry lives (litellm's RedisCache would otherwise keep it 60 s)."""

_NOT_IN_KEY = frozenset({"timeout", "num_retries", "max_retries", "api_key", "stream_timeout"})
"""Call arguments that change how a request travels, never what the judge answers."""
_KEY_VERSION = "scorelab-judge-cache-1"


CachedAnswer = dict[str, Any]
"""What is stored per key: `content`, `model`, `finish_reason` and `usage` (the provider's
token counts when the answer was first paid for)."""


class JudgeCacheError(RuntimeError):
    """The judge cache `SCORELAB_JUDGE_CACHE` names cannot be opened."""


class JudgeCacheStore(Protocol):
    """A place answers are kept; `get` and `put` never raise (a broken cache is a miss)."""

    async def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under `key`, or None."""
        ...

    async def put(self, key: str, answer: CachedAnswer) -> None:
        """Store `answer` under `key`."""
        ...


def cache_key(arguments: Mapping[str, Any]) -> str:
    """The key of a judge request (the litellm arguments as the judge call builds them)."""
    keyed = {name: value for name, value in arguments.items() if name not in _NOT_IN_KEY}
    text = json.dumps([_KEY_VERSION, keyed], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class DiskJudgeCache:
    """An SQLite file (stdlib `sqlite3`, WAL): safe for several threads and processes at once.

    Each thread gets its own connection; reads and writes of one small row take microseconds,
    so they run in the event loop rather than in a thread pool."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._connection().execute(
                "CREATE TABLE IF NOT EXISTS answers "
                "(key TEXT PRIMARY KEY, answer TEXT NOT NULL, stored_at REAL NOT NULL)"
            )
        except (OSError, sqlite3.Error) as error:
            raise JudgeCacheError(
                f"The judge cache file {path} cannot be opened: {error}"
            ) from None

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
        return connection

    async def get(self, key: str) -> CachedAnswer | None:
        return self.read(key)

    async def put(self, key: str, answer: CachedAnswer) -> None:
        self.write(key, answer)

    def read(self, key: str) -> CachedAnswer | None:
        """`get`, without an event loop."""
        try:
            row = (
                self._connection()
                .execute("SELECT answer FROM answers WHERE key = ?", (key,))
                .fetchone()
            )
            return None if row is None else json.loads(row[0])
        except (sqlite3.Error, ValueError):
            return None

    def write(self, key: str, answer: CachedAnswer) -> None:
        """`put`, without an event loop."""
        # A full disk or a locked file: the answer is simply not kept.
        with contextlib.suppress(sqlite3.Error):
            self._connection().execute(
                "INSERT OR REPLACE INTO answers (key, answer, stored_at) VALUES (?, ?, ?)",
                (key, json.dumps(answer), time.time()),
            )

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT count(*) FROM answers").fetchone()[0])


class RedisJudgeCache:
    """litellm's `RedisCache` behind the same two methods."""

    def __init__(self, url: str) -> None:
        from core.judge._litellm import litellm

        litellm()  # configures litellm (price table, quiet) before its submodule loads
        try:
            from litellm.caching.redis_cache import RedisCache

            self._redis = RedisCache(url=url)
        except ImportError as error:  # the `redis` package is litellm's optional dependency
            raise JudgeCacheError(
                f"{CACHE_ENV} names a Redis server, but the `redis` package is not installed "
                "(pip install redis)"
            ) from error
        self.url = url

    async def get(self, key: str) -> CachedAnswer | None:
        try:
            value = await self._redis.async_get_cache(key)
        except Exception:
            return None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        return value if isinstance(value, dict) else None

    async def put(self, key: str, answer: CachedAnswer) -> None:
        with contextlib.suppress(Exception):  # an unreachable server: the answer is not kept
            await self._redis.async_set_cache(key, answer, ttl=REDIS_TTL_S)


def cache_location(environ: Mapping[str, str] | None = None) -> str:
    """Where the judge cache is: a `redis://` URL as configured, or the SQLite file's path."""
    environ = os.environ if environ is None else environ
    configured = (environ.get(CACHE_ENV) or "").strip()
    if configured.startswith(("redis://", "rediss://", "unix://")):
        return configured
    if configured:
        return str(Path(configured).expanduser() / CACHE_FILE)
    return str(_data_dir(environ) / CACHE_FILE)


def _data_dir(environ: Mapping[str, str]) -> Path:
    configured = (environ.get(DATA_DIR_ENV) or "").strip()
    if configured:
        return Path(configured).expanduser()
    project = Path(__file__).resolve().parents[2]
    if (project / "pyproject.toml").is_file() and os.access(project, os.W_OK):
        return project / "data"
    base = Path(environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "scorelab"


def judge_cache() -> JudgeCacheStore:
    """The process's judge cache, as `SCORELAB_JUDGE_CACHE` says now (one store per place)."""
    return _store(cache_location())


@cache
def _store(location: str) -> JudgeCacheStore:
    if location.startswith(("redis://", "rediss://", "unix://")):
        return RedisJudgeCache(location)
    return DiskJudgeCache(Path(location))
