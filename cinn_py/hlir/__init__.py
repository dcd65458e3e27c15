"""CINN's high-level IR side: groups of ops, grouping, op lowering (the driver above
it, `cinn_py.driver`, runs them)."""
