"""Op entries: everything about an op in one place, as CINN's `CINN_REGISTER_OP` does.

An `OpDef` is the one entry of an op: its declaration (operands, attributes with their
kinds and defaults, results), `infer_meta` (result dtype and shape from the operands
and attributes, `computed_meta` where the kernel computes something else;
`symbolic_meta` / `symbolic_value` for the symbolic shape analysis), its pattern
kind and traits, and how it runs: the reference `kernel` (NumPy, the oracle), the
`lowering` (a TE-style compute for fused kernels), the `decompose` rule (primitives
that fuse with their neighbours). An op with a kernel but neither of the others runs as
a library instruction. The ops themselves are declared in `cinn_py/ops/` (one module
per family) and `cinn_py/pir/dialects/` (structural ops); everything else (parser,
builder, verifier, passes, fusion, lowering, the reference executor) asks the entry,
by `lookup_op_def(name)` and `OpDef.has_trait(Trait...)`.

The registry imports `cinn_py.ops` on first lookup, so `cinn_py.pir` itself imports
neither the kernels nor the lowerings.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cinn_py.errors import VerifyError
from cinn_py.pir import attributes as A
from cinn_py.pir.constant import constant_of
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DenseTensorType, Type, VectorType

if TYPE_CHECKING:
    from cinn_py.hlir.op_lowering.context import OpLowering
    from cinn_py.pir.operation import Operation
    from cinn_py.pir.passes.decompose import DecomposeRule
    from cinn_py.pir.value import Value
    from cinn_py.reference_ops.context import Kernel


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Default of an attribute that every op must carry."""


class ScalarKind:
    """pd_op.Scalar: any number attribute (Paddle prints a Scalar as the attribute it wraps)."""

    name = "scalar"

    def __repr__(self) -> str:
        return "Scalar"


Scalar = ScalarKind()


@dataclass(frozen=True)
class ArrayOf:
    """An ArrayAttribute whose items are of kind `item` (None: any items)."""

    item: type[A.Attribute] | None = None

    @property
    def name(self) -> str:
        return "array" if self.item is None else f"array<{self.item.kind}>"


AttrKind = type[A.Attribute] | ArrayOf | ScalarKind
"""What an attribute is declared as: an attribute class (`Int32Attribute`), `ArrayOf(...)`
or `Scalar`."""


def kind_name(kind: AttrKind) -> str:
    """The kind's name as errors and the parser's tables spell it: `int32`, `array<bool>`."""
    return kind.kind if isinstance(kind, type) else kind.name


_NAMED_KINDS: dict[str, AttrKind] = {
    **{cls.kind: cls for cls in A.ATTRIBUTE_KINDS.values() if cls is not A.ArrayAttribute},
    "scalar": Scalar,
}


ATTR_KINDS: tuple[str, ...] = (
    *_NAMED_KINDS,
    *(f"array<{k}>" for k in ("bool", "int32", "int64", "float", "double", "str")),
    "array",
)
"""The name of every kind a declaration may use (`kind_name`)."""


def kind_from_name(name: str) -> AttrKind:
    """The kind `kind_name` spells `name` (the parser's typed prefixes name kinds so)."""
    if name == "array":
        return ArrayOf()
    if name.startswith("array<"):
        item = _NAMED_KINDS[name[len("array<") : -1]]
        assert isinstance(item, type)
        return ArrayOf(item)
    return _NAMED_KINDS[name]


def _check_kind(kind: object, what: str) -> None:
    if isinstance(kind, (ArrayOf, ScalarKind)):
        return
    if not (isinstance(kind, type) and issubclass(kind, A.Attribute)) or kind is A.Attribute:
        raise ValueError(f"{what}: unknown attribute kind {kind!r}")
    if kind is A.ArrayAttribute:
        raise ValueError(f"{what}: declare an array as ArrayOf(item kind)")


@dataclass(frozen=True)
class OperandSpec:
    """One operand slot.

    `variadic`: a Tensor[] operand, fed by a `builtin.combine` (its type is a vector).
    `mutable_attr`: the operand carries a constant that Paddle could also hold as an
    attribute of that name (reshape's `shape`, sum's `axis`, scale's `scale`); the
    fold pass turns a constant producer into that attribute, of kind `mutable_kind`
    (Paddle's IntArray for shapes and axis lists, Scalar or float for single values).
    """

    name: str
    optional: bool = False
    variadic: bool = False
    mutable_attr: str | None = None
    mutable_kind: AttrKind = A.IntArrayAttribute

    def __post_init__(self) -> None:
        _check_kind(self.mutable_kind, f"operand {self.name}")


@dataclass(frozen=True)
class AttrSpec:
    """One attribute: its name, kind and default (`REQUIRED`: every op must carry it;
    None: optional, with no value when absent)."""

    name: str
    kind: AttrKind
    default: Any = REQUIRED

    def __post_init__(self) -> None:
        _check_kind(self.kind, f"attribute {self.name}")

    @property
    def kind_name(self) -> str:
        return kind_name(self.kind)


COMMON_ATTRS: dict[str, AttrSpec] = {
    spec.name: spec
    for spec in (
        AttrSpec("stop_gradient", ArrayOf(A.BoolAttribute), None),
        AttrSpec("persistable", ArrayOf(A.BoolAttribute), None),
        AttrSpec("struct_name", A.StrAttribute, None),
        AttrSpec("op_callstack", ArrayOf(A.StrAttribute), None),
        AttrSpec("op_role", A.Int32Attribute, None),
        AttrSpec("op_dist_attr", A.StrAttribute, None),
    )
}
"""Attributes any op may carry whatever its declaration (Paddle adds them everywhere)."""


InferMeta = Callable[["InferContext"], Sequence[Type]]
Verifier = Callable[["Operation"], None]
SymbolicRule = Callable[..., Any]
"""A rule of `cinn_py/pir/shape_analysis.py` (typed there: `Rule`, `ValueRule`); loose
here, as `cinn_py.pir.op_def` does not import the analysis."""


@dataclass(frozen=True)
class OpDef:
    """The one entry of an op: declaration, meta inference, traits and its
    implementations (see the module docstring; `docs/EXTENDING.md`)."""

    name: str
    operands: tuple[OperandSpec, ...] = ()
    attributes: tuple[AttrSpec, ...] = ()
    results: tuple[str, ...] = ("out",)
    pattern: OpPatternKind | None = None
    """How its outputs depend on its inputs, for fusion (None: fuses with nothing)."""
    traits: frozenset[Trait] = frozenset()
    kernel: Kernel | None = None
    """The reference kernel (NumPy): the oracle, constant folding, library instructions."""
    lowering: OpLowering | None = None
    """The compute a fused kernel inlines, and the dtypes it accepts."""
    decompose: DecomposeRule | None = None
    """Rewrites the op into primitives before fusion (None from the rule: left whole)."""
    infer_meta: InferMeta | None = None
    computed_meta: InferMeta | None = None
    """The result types the kernel really computes, where they differ from the types
    Paddle declares (`infer_meta` reproduces Paddle's, bugs included, so Paddle's programs
    verify). The verifier accepts either; `specialize_shapes` uses this one."""
    symbolic_meta: SymbolicRule | None = None
    """The result shapes as DimExprs, for the symbolic shape analysis: a
    `cinn_py.pir.shape_analysis.Rule`, `(ShapeAnalysis, Operation) -> list[Shape | None]`
    (None for a result it does not model). None: an ELEMENTWISE op broadcasts its tensor
    operands, a PROGRAM_OUTPUT op passes its operand through, any other op's -1 dims
    become fresh symbols (`docs/SHAPES.md`)."""
    symbolic_value: SymbolicRule | None = None
    """What the op computes on shape values (integer tensors whose elements are dims,
    such as `shape(x)`), for the symbolic shape analysis: a
    `cinn_py.pir.shape_analysis.ValueRule`, `(ShapeAnalysis, Operation) -> list[DimExpr]
    | None` (None: not a shape value). None: its result is never one (but for a
    SHAPE_ONLY op, whose value is its operand's shape)."""
    verify: Verifier | None = None
    variadic_operands: bool = False
    """The op takes any number of operands (builtin.combine); `operands` names the one kind."""
    variadic_results: bool = False
    """The op has as many results as its input says (builtin.split); `results` names the one kind."""
    attr_index: dict[str, AttrSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr_index", {a.name: a for a in self.attributes})
        object.__setattr__(self, "traits", frozenset(self.traits))
        for trait in self.traits:
            if not isinstance(trait, Trait):
                raise ValueError(f"{self.name}: trait {trait!r} is not a Trait")
        if self.pattern is not None and not isinstance(self.pattern, OpPatternKind):
            raise ValueError(f"{self.name}: pattern {self.pattern!r} is not an OpPatternKind")

    def attr_default(self, name: str) -> Any:
        """The declared default of attribute `name` (REQUIRED if it has none)."""
        spec = self.attr_spec(name)
        return REQUIRED if spec is None else spec.default

    @property
    def compiled_by(self) -> str:
        """How a compiled target runs the op: `lowered`, `decomposed` (where the rule
        applies; otherwise lowered or library), `library` (its reference kernel as a
        LibraryInstruction), `structural` or `none`."""
        if Trait.STRUCTURAL in self.traits:
            return "structural"
        if self.decompose is not None:
            return "decomposed"
        if self.lowering is not None:
            return "lowered"
        if self.kernel is not None:
            return "library"
        return "none"

    def attr_spec(self, name: str) -> AttrSpec | None:
        return self.attr_index.get(name) or COMMON_ATTRS.get(name)

    def operand_index(self, name: str) -> int:
        for i, spec in enumerate(self.operands):
            if spec.name == name:
                return i
        raise KeyError(f"{self.name} has no operand '{name}'")

    def has_trait(self, trait: Trait) -> bool:
        return trait in self.traits


def operand(name: str, **kw: Any) -> OperandSpec:
    return OperandSpec(name, **kw)


def attr(name: str, kind: AttrKind, default: Any = REQUIRED) -> AttrSpec:
    return AttrSpec(name, kind, default)


# -- registry ------------------------------------------------------------------------

_REGISTRY: dict[str, OpDef] = {}
_loaded = False


def register_ops(dialect: str, ops: Sequence[OpDef]) -> None:
    """Register a dialect's ops; each name must start with `dialect.` and be new."""
    for op_def in ops:
        if not op_def.name.startswith(dialect + "."):
            raise ValueError(f"{op_def.name} does not belong to dialect {dialect}")
        if op_def.name in _REGISTRY:
            raise ValueError(f"{op_def.name} is registered twice")
        _REGISTRY[op_def.name] = op_def


def _load_ops() -> None:
    """Import `cinn_py.ops` (whose modules register the op entries) once, on first use."""
    global _loaded
    if not _loaded:
        _loaded = True
        import cinn_py.ops  # noqa: F401, PLC0415  (registers every op family)


def lookup_op_def(name: str) -> OpDef | None:
    """The entry of op `name`, None if cinn_py does not know it."""
    _load_ops()
    return _REGISTRY.get(name)


def registered_op_names() -> list[str]:
    _load_ops()
    return sorted(_REGISTRY)


@contextlib.contextmanager
def override_op(name: str, **fields: Any) -> Iterator[OpDef]:
    """Within the block, op `name`'s entry with `fields` replaced: how tests plant a wrong
    lowering and the fuzzer swaps in a kernel variant. Not for production code."""
    _load_ops()
    old = _REGISTRY[name]
    _REGISTRY[name] = dataclasses.replace(old, **fields)
    try:
        yield _REGISTRY[name]
    finally:
        _REGISTRY[name] = old


def registered_ops() -> list[OpDef]:
    """Every entry, by name."""
    _load_ops()
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


# -- attribute kinds -------------------------------------------------------------------

_WIDER = {
    A.Int32Attribute: A.Int64Attribute,
    A.Int64Attribute: A.Int32Attribute,
    A.FloatAttribute: A.DoubleAttribute,
    A.DoubleAttribute: A.FloatAttribute,
}
"""Paddle itself is loose about int widths and float widths in saved programs."""


def attribute_matches(kind: AttrKind, attribute: A.Attribute) -> bool:
    """Does `attribute` have the declared `kind`? Numbers may be held wider than declared."""
    if isinstance(kind, ArrayOf):
        if not isinstance(attribute, A.ArrayAttribute):
            return False
        return kind.item is None or all(attribute_matches(kind.item, a) for a in attribute)
    if isinstance(kind, ScalarKind):
        return isinstance(attribute, A.SCALAR_ATTRIBUTES)
    if isinstance(attribute, kind):
        return True
    wider = _WIDER.get(kind)
    return wider is not None and isinstance(attribute, wider)


def make_attribute(kind: AttrKind, value: Any) -> A.Attribute:
    """The attribute of declared `kind` holding Python `value` (used for defaults and builders)."""
    if isinstance(value, A.Attribute):
        return value
    if isinstance(kind, ArrayOf):
        item = kind.item
        items = [make_attribute(item, v) if item else A.attr_from_python(v) for v in value]
        return A.ArrayAttribute.get(items)
    if isinstance(kind, ScalarKind):
        return A.scalar_attribute(value)
    return kind.get(value)


# -- infer_meta context ------------------------------------------------------------------


class InferContext:
    """What `infer_meta` sees: operand types, attributes and constant operands.

    Built from an op (`InferContext.of(op)`) or from pieces before the op exists (the
    Builder), so the same infer function serves both.
    """

    def __init__(
        self,
        op_def: OpDef,
        operands: Sequence[Value | None],
        attributes: dict[str, A.Attribute],
        where: str = "",
    ) -> None:
        self.op_def = op_def
        self.operands = list(operands)
        self.attributes = attributes
        self._where = where
        self._op: Operation | None = None
        self.declared: list[Type] | None = None
        """The result types the op declares, when it exists (`of`): for a result whose
        dims Paddle leaves unset (einsum's inner cache), which an infer_meta then keeps."""

    @classmethod
    def of(cls, op: Operation) -> InferContext:
        ctx = cls(op.op_def, op.operand_values(), op.attributes)
        ctx._op = op
        ctx.declared = [r.type for r in op.results]
        return ctx

    @property
    def where(self) -> str:
        """Where the op is, for error messages; for an op (`of`) found only when asked,
        as finding its position scans its block (every op of a program, verified one
        after the other, would make that quadratic)."""
        return self._op.where() if self._op is not None else self._where

    def error(self, why: str, operand: str = "") -> VerifyError:
        return VerifyError(self.op_def.name, why, where=self.where, operand=operand)

    def _index(self, key: int | str) -> int:
        return key if isinstance(key, int) else self.op_def.operand_index(key)

    def value(self, key: int | str) -> Value | None:
        i = self._index(key)
        return self.operands[i] if i < len(self.operands) else None

    def has(self, key: int | str) -> bool:
        return self.value(key) is not None

    def tensor(self, key: int | str) -> DenseTensorType:
        """The operand's dense tensor type; a VerifyError if it is missing or not a tensor."""
        value = self.value(key)
        name = key if isinstance(key, str) else self.op_def.operands[key].name
        if value is None:
            raise self.error("is missing", operand=name)
        if not isinstance(value.type, DenseTensorType):
            raise self.error(f"must be a tensor, got {value.type!r}", operand=name)
        return value.type

    def tensors(self, key: int | str) -> list[DenseTensorType]:
        """The tensor types inside a variadic (Tensor[]) operand."""
        value = self.value(key)
        name = key if isinstance(key, str) else self.op_def.operands[key].name
        if value is None:
            raise self.error("is missing", operand=name)
        if isinstance(value.type, DenseTensorType):
            return [value.type]
        if not isinstance(value.type, VectorType):
            raise self.error(f"must be a vector of tensors, got {value.type!r}", operand=name)
        for t in value.type.types:
            if not isinstance(t, DenseTensorType):
                raise self.error(f"holds a non-tensor {t!r}", operand=name)
        return list(value.type.types)

    def attr(self, name: str) -> Any:
        """The attribute's Python value, or the declared default."""
        value = attr_value(self.op_def, self.attributes, name)
        if value is REQUIRED:
            raise self.error(f"needs attribute '{name}'")
        return value

    def constant(self, key: int | str) -> Any:
        """A mutable-attribute operand's value: the folded attribute, else the constant
        its producer holds, else None (unknown until run time)."""
        i = self._index(key)
        spec = self.op_def.operands[i]
        if spec.mutable_attr and spec.mutable_attr in self.attributes:
            return self.attributes[spec.mutable_attr].to_python()
        value = self.value(i)
        if value is None:
            return None
        return constant_of(value)


def attr_value(op_def: OpDef | None, attributes: dict[str, A.Attribute], name: str) -> Any:
    """Attribute `name`'s Python value, else its declared default (REQUIRED if neither):
    the one rule every context (infer_meta, kernels, lowerings, decompositions) reads
    attributes by."""
    attribute = attributes.get(name)
    if attribute is not None:
        return attribute.to_python()
    return REQUIRED if op_def is None else op_def.attr_default(name)
