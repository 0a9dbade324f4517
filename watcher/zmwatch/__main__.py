"""`python -m zmwatch`: the same as `zm-watch` (how the hook starts its background child)."""

import sys

from zmwatch.cli import main

sys.exit(main())
