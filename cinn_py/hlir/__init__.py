"""CINN's high-level IR side: groups of ops, grouping, op lowering, the PIR compiler."""
