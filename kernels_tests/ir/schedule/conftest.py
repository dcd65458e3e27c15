"""This folder goes on sys.path so that the tests can `import schedule_funcs` (pytest
runs with --import-mode=importlib, which does not add it)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
