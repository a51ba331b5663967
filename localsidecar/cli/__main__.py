"""`python -m localsidecar.cli`: the same program as the `localsidecar` command."""

import sys

from localsidecar.__main__ import main

sys.exit(main())
