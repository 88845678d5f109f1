"""The ``flexio`` command a pip install gives: the flexio program this package carries,
started in this process's place (same arguments, standard streams, signals and exit
status)."""

import os
import sys

from ._api import binary


def main():
    exe = binary()
    if exe is None:
        sys.stderr.write(
            "flexio: this flexio Python package was built without the flexio program "
            "(build the wheel with python/build-wheel)\n"
        )
        return 127
    os.execv(exe, ["flexio"] + sys.argv[1:])
    return 127  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
