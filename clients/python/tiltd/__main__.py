# SPDX-License-Identifier: Apache-2.0
"""``python3 -m tiltd``: see tiltd.cli."""

import sys

from .cli import main

sys.exit(main())
