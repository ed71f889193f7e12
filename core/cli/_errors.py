"""How the command fails: `CliError` (one line on stderr, exit code 2) and `fail`."""

from __future__ import annotations

import sys

from core.cli._text import printable

__all__ = ["EXIT_USAGE", "CliError", "fail"]

EXIT_USAGE = 2
"""Bad input or usage."""


class CliError(Exception):
    """A problem to report in one line, exit code 2."""


def fail(message: str) -> int:
    """Print `message` as one `scorelab: error:` line, with every key masked and its control
    characters escaped; returns exit code 2."""
    from core.service import mask_secrets

    line = " ".join(mask_secrets(message).split())  # one line, and no key in it
    print(f"scorelab: error: {printable(line)}", file=sys.stderr)
    return EXIT_USAGE
