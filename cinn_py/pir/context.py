"""IrContext: the one owner of uniqued types and attributes.

Types and attributes are immutable and uniqued, as in Paddle's PIR: constructing an
equal one returns the very same object, so `is` compares them and they hash by
identity. The context keeps them in a weak-value table keyed by class and parameters,
so unused ones are freed.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any


class IrContext:
    """Holds the uniquing tables. `IrContext.instance()` is the process-wide one."""

    _instance: IrContext | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        self._table: weakref.WeakValueDictionary[tuple, Any] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    @classmethod
    def instance(cls) -> IrContext:
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = IrContext()
            return cls._instance

    def unique(self, cls: type, key: tuple, make: Any) -> Any:
        """The object of class `cls` with parameters `key`, made by `make()` once."""
        full_key = (cls, key)
        with self._lock:
            obj = self._table.get(full_key)
            if obj is None:
                obj = make()
                self._table[full_key] = obj
            return obj
