"""cinn_py: a CINN-style tensor compiler for Paddle PIR programs, written in Python."""

__version__ = "0.1.0"
