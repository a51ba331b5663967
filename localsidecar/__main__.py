"""The `localsidecar` program (console script and `python -m localsidecar`).

Signals are handled from the first statement on: the handler is installed
before Click, numpy or llama.cpp are imported (localsidecar.io.interrupts), so
Ctrl-C while the program starts prints one line and exits 130, never a
traceback. Only the interpreter's own start-up, before this module runs, is
out of reach.
"""

import sys


def main():
    from localsidecar.io.interrupts import install_process_handlers

    install_process_handlers()
    from localsidecar.cli import main as group

    return group()


if __name__ == "__main__":
    sys.exit(main())
