"""A file's bytes as text: UTF-8 (with or without a BOM) or UTF-16, anything else reported with
the bad byte and its line."""

from __future__ import annotations

from core.datasets._import_problems import Unreadable


def decode(data: bytes) -> str:
    """UTF-8 text (a BOM is allowed) or UTF-16 with its BOM; else `Unreadable` naming the byte
    and its line."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise Unreadable(
                "bad_encoding", f"The file is not valid UTF-16: {error.reason}"
            ) from error
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex().upper()
        raise Unreadable(
            "bad_encoding",
            f"The file is not valid UTF-8: byte 0x{byte} at position {error.start:,} "
            f"(line {line}) cannot be decoded; save the file as UTF-8",
        ) from error


def utf8_bytes(data: bytes) -> bytes:
    """The file as UTF-8 bytes without a BOM (UTF-16 files are converted), for parsers that
    read bytes. Invalid UTF-8 is left for the parser to reject."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return decode(data).encode("utf-8")
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
