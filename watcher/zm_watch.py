#!/usr/bin/env python3
"""`python3 watcher/zm_watch.py …`: the watcher without installing it (the same as `zm-watch`)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from zmwatch.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
