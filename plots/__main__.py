"""`python -m plots`: see plots/cli.py."""

import sys

from plots.cli import main

sys.exit(main())
