"""The Scope: every tensor a compiled program keeps, by name, in the target's memory.

A compiled program reads and writes named variables: its feeds, its parameters and the
inputs and outputs of its groups (`var_<N>` for the value printed `%N`). Values that live
only inside a fused kernel get no variable. On `cuda-emu` the arrays are NumPy arrays, on
`cuda` CuPy arrays; bfloat16 is held as its uint16 bit patterns, bool as one byte.

Generated kernels load and store with 128-bit vector accesses, so every array is
C-contiguous and aligned: the target's array library (`Target.empty`, `Target.arena`)
gives such arrays (host arrays cut at a 64-byte boundary, `targets.memory`; CuPy's
allocations are 256-byte aligned). Arrays are allocated on first use, so declaring a
variable costs nothing.

    scope = BuildScope("cuda-emu", program)     # cinn_py.driver: a variable per tensor value
    scope["var_0"].set(x)                       # copy into the variable's own buffer
    runtime_program.execute(scope)
    y = scope["var_3"].to_numpy()
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from cinn_py.backends.kernel_args import data_pointer
from cinn_py.errors import CinnError, FeedError, ShapeError
from cinn_py.pir.printer import print_type
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import boundary_dtype
from cinn_py.runtime.arena_pool import ArenaPool
from cinn_py.runtime.memory_plan import MemoryPlan
from cinn_py.targets import Target, compiled_target


class Variable:
    """One named tensor: its static type and its array in the target's memory."""

    def __init__(self, name: str, type_: DenseTensorType, target: str | Target) -> None:
        if not type_.is_static:
            raise ShapeError(
                f"variable '{name}' has the dynamic type {print_type(type_)}: the runtime "
                "needs static shapes (specialise the program on its feeds first)"
            )
        self.name = name
        self.type = type_
        self.target = compiled_target(target)
        self.dtype: np.dtype = boundary_dtype(type_.data_type)
        """The array's dtype: the element type's, uint16 for bfloat16."""
        self._array: Any = None
        self.external = False
        """Whether the array is a caller's (a feed used in place, `adopt`), which the
        variable must never write into."""
        self.scope: Scope | None = None
        """The scope that holds it, told when its array changes (`Scope.generation`)."""

    def _hold(self, array: Any, external: bool = False) -> None:
        self._array = array
        self.external = external
        if self.scope is not None:
            self.scope.generation += 1

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.dims)

    @property
    def allocated(self) -> bool:
        return self._array is not None

    @property
    def array(self) -> Any:
        """The variable's array (NumPy on cuda-emu, CuPy on cuda), allocated on first use."""
        if self._array is None:
            self._hold(self.target.empty(self.shape, self.dtype))
        return self._array

    def bind(self, array: Any) -> None:
        """Hold `array` (a view of the program's arena) instead of an allocation of its own."""
        if tuple(array.shape) != self.shape or np.dtype(array.dtype) != self.dtype:
            raise CinnError(f"variable '{self.name}' cannot hold a {array.dtype} {array.shape}")
        self._hold(array)

    def holds_caller_array(self, array: Any) -> bool:
        """Whether the variable holds `array` itself, a caller's (`adopt`)."""
        return self.external and self._array is array

    def adopt(self, array: Any) -> None:
        """Hold a caller's array in place of a copy (a feed already in the target's
        memory, C-contiguous and aligned: `Target.adopt_feed`). The scope's launches are
        packed again only when its address differs from the array held."""
        self._check_fits(array)
        if array is self._array:
            return  # the array the last run held: nothing to do (the common serving loop)
        if self._array is not None and data_pointer(self._array) == data_pointer(array):
            self._array, self.external = array, True  # same bytes: the launches stay valid
            return
        self._hold(array, external=True)

    def _check_fits(self, value: Any) -> None:
        if (
            getattr(value, "shape", None) == self.type.dims
            and getattr(value, "dtype", None) == self.dtype
        ):
            return
        got_shape = tuple(getattr(value, "shape", ()))
        # np.asarray only for values without a dtype: a device array refuses it
        got_dtype = (
            _numpy_dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype
        )
        if got_shape != self.shape or got_dtype != self.dtype:
            raise FeedError(
                self.name,
                f"{self.dtype} {list(self.shape)}",
                f"{got_dtype} {list(got_shape)}",
            )

    def set(self, value: Any) -> None:
        """Copy `value` into the variable's own buffer (so its alignment stays). `value` must
        already have the variable's shape and dtype; a host array goes to the device on cuda.
        A variable holding a caller's array (`adopt`) gets a buffer of its own first."""
        self._check_fits(value)
        if self.external:
            self._hold(self.target.empty(self.shape, self.dtype))
        target = self.array
        if isinstance(target, np.ndarray):
            np.copyto(target, value)
        elif isinstance(value, np.ndarray):
            target.set(np.asarray(value, order="C"))  # ascontiguousarray makes 0-D 1-D
        else:
            target[...] = value

    def to_numpy(self) -> np.ndarray:
        """A host copy of the array (bfloat16 as uint16 bit patterns)."""
        array = self.array
        if isinstance(array, np.ndarray):
            return array.copy()
        return array.get()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(variable)`: the host array (the array itself on cuda-emu, a copy
        from the GPU on cuda)."""
        array = self.array if isinstance(self.array, np.ndarray) else self.array.get()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def copy(self) -> Any:
        """A copy of the array in the target's memory (NumPy or CuPy)."""
        return self.array.copy()

    def __repr__(self) -> str:
        return f"Variable({self.name}: {print_type(self.type)}, {self.target})"


class Scope:
    """Variables by name, all on one target."""

    def __init__(self, target: str | Target, arena_pool: ArenaPool | None = None) -> None:
        self.target = compiled_target(target)
        self._vars: dict[str, Variable] = {}
        self.arena: Any = None
        """The memory plan's arena, once `bind_arena` made it (or took the pool's)."""
        self.arena_pool = arena_pool
        """Where the arena comes from when several scopes share one (`ArenaPool`: the
        compiles of one program with -1 dims); None: an arena of its own."""
        self._memory: MemoryPlan | None = None
        self.generation = 0
        """Counts the changes of which array a variable holds (a variable added, replaced,
        dropped, allocated or bound; never `Variable.set`, which copies into the array it
        has): launches packed at one generation hold valid pointers until it changes."""

    def var(self, name: str, type_: DenseTensorType) -> Variable:
        """The variable `name` of type `type_`: the existing one if its type matches,
        else a new one (replacing a variable of another type)."""
        existing = self._vars.get(name)
        if existing is not None and existing.type is type_:
            return existing
        variable = Variable(name, type_, self.target)
        variable.scope = self
        self._vars[name] = variable
        self.generation += 1
        return variable

    def __getitem__(self, name: str) -> Variable:
        try:
            return self._vars[name]
        except KeyError:
            raise CinnError(f"the scope has no variable '{name}'") from None

    def get(self, name: str) -> Variable | None:
        return self._vars.get(name)

    def get_tensor(self, name: str) -> Any:
        """The array of variable `name` (the seed's `scope->GetTensor`)."""
        return self[name].array

    def __contains__(self, name: object) -> bool:
        return name in self._vars

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._vars.values())

    def __len__(self) -> int:
        return len(self._vars)

    def var_names(self) -> list[str]:
        return list(self._vars)

    def bind_arena(self, plan: MemoryPlan) -> None:
        """Allocate one arena of `plan.arena_bytes` in the target's memory (`Target.arena`:
        a CuPy array on cuda, a NumPy byte buffer on cuda-emu, its start on
        `plan.alignment`) and make each planned variable a view of it at its offset."""
        if self.arena_pool is None:
            arena = self.target.arena(max(plan.arena_bytes, 1), plan.alignment)
        else:
            arena = self.arena_pool.reserve(plan.arena_bytes, plan.alignment)
        self._memory = plan
        self._bind_views(arena)

    def refresh_arena(self) -> None:
        """With a shared arena that grew since this scope was bound: the variables
        rebound as views of the current buffer (so the old one can be freed; the
        launches are packed again). Nothing otherwise."""
        pool, plan = self.arena_pool, self._memory
        if pool is None or plan is None or pool.buffer is None or self.arena is pool.buffer:
            return
        self._bind_views(pool.reserve(plan.arena_bytes, plan.alignment))

    def _bind_views(self, arena: Any) -> None:
        plan = self._memory
        for name, offset in plan.offsets.items():
            variable = self[name]
            nbytes = plan.ranges[name].nbytes
            view = arena[offset : offset + nbytes].view(variable.dtype)
            variable.bind(view.reshape(variable.shape))
        self.arena = arena

    def keep_only(self, names: Iterable[str]) -> None:
        """Drop every variable not in `names` (and its array)."""
        keep = set(names)
        for name in [n for n in self._vars if n not in keep]:
            del self._vars[name]
            self.generation += 1

    def __repr__(self) -> str:
        return f"Scope({self.target}, {len(self)} variables)"


def _numpy_dtype(dtype: Any) -> np.dtype:
    """A NumPy, CuPy or torch dtype as NumPy's (torch.float16 -> float16)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).removeprefix("torch."))
