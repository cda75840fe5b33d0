"""``python -m fastscore``: the ``fastscore`` command."""
import sys

from fastscore.cli import main

sys.exit(main())
