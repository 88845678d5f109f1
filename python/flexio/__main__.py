"""``python -m flexio ARGS``: the flexio command."""

import sys

from ._cli import main

sys.exit(main())
