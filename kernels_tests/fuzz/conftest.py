"""This folder goes on sys.path so that its tests can import the fuzzers' modules
(`fuzz_programs`, `fuzz_check`, ...); pytest runs with --import-mode=importlib, which
does not add it. The hypothesis profiles are in `fuzz_config.py`."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
