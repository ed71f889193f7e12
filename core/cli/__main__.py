"""`python -m core.cli`: the `scorelab` command."""

import sys

from core.cli import main

sys.exit(main())
