"""The `localsidecar` program: the console script, `python -m localsidecar`
and `python -m localsidecar.cli` all start here.

Signals are handled from the first statement on: the handler is installed
before Click, numpy or llama.cpp are imported (localsidecar.io.interrupts), so
Ctrl-C while the program starts prints one line and exits 130, never a
traceback. Only the interpreter's own start-up, before this module runs, is
out of reach. Then the standard streams are prepared (localsidecar.io.streams:
closed ones opened on /dev/null, stdout's write errors one line), and only
then is the Click group imported. Importing any localsidecar module installs
nothing: this function does, once per process.
"""

import sys


def main():
    from localsidecar.io.interrupts import install_process_handlers

    install_process_handlers()
    from localsidecar.io.streams import prepare_standard_streams

    problem = prepare_standard_streams()
    if problem is not None:
        print(f"Error: {problem}", file=sys.stderr, flush=True)
        return 2
    from localsidecar.cli.group import main as group

    return group()


if __name__ == "__main__":
    sys.exit(main())
