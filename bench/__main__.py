"""`python -m bench`: run every benchmark and print one table (see bench/run.py, bench/README.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scripts import each other by name

from run import main  # noqa: E402

sys.exit(main())
