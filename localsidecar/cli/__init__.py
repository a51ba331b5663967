"""The command line: the `localsidecar` Click group (cli/group.py) and its
commands, one module per family.

Importing this package loads nothing else: `python -m localsidecar.cli` and
the console script start at localsidecar.__main__, which installs the signal
handlers and the standard streams before Click or the commands are imported.
`from localsidecar.cli import main` gives the group itself.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("main", "COMMANDS"):
        from localsidecar.cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'localsidecar.cli' has no attribute {name!r}")
