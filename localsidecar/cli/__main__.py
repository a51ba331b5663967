"""`python -m localsidecar.cli`: the same as the `localsidecar` command."""

from localsidecar.cli import main

main()
