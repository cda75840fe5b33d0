"""``python -m fastscore``: the ``fastscore`` command."""
import sys

from fastscore.cli import main

if __name__ == "__main__":  # not when imported (as a walk over the package's modules does)
    sys.exit(main())
