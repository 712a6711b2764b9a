#!/usr/bin/env python3
"""The differential campaign of PyPTO against the reference pass; run it through
ci/differential.sh (docs/pypto.md)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from cds_pypto.campaign import main  # noqa: E402

sys.exit(main())
