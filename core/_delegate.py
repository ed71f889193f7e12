"""`delegate`: a door's method (`Service`, `Store`) handing the call to one of its parts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["delegate"]

P = ParamSpec("P")
R = TypeVar("R")


class delegate(Generic[P, R]):
    """`name = delegate("part", Part.method)` in a class body: `door.name(...)` calls
    `door.part.method(...)`, with the method's signature and docstring. A non-data descriptor:
    an instance attribute of the same name (a test's monkeypatch) still takes precedence."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part = part
        """The attribute of the door holding the part."""
        self.method_name = method.__name__
        """The part's method called."""
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    @overload
    def __get__(self, door: None, owner: type | None = None) -> delegate[P, R]: ...

    @overload
    def __get__(self, door: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, door: object | None, owner: type | None = None) -> Any:
        if door is None:
            return self
        bound: Callable[P, R] = getattr(getattr(door, self.part), self.method_name)
        return bound

    def __call__(self, door: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        """`Door.name(door, ...)`: called from the class like a plain method (what a test does
        with the original after patching the class)."""
        method: Callable[P, R] = getattr(getattr(door, self.part), self.method_name)
        return method(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<delegate to .{self.part}.{self.method_name}>"
