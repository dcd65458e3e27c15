"""Op declarations: an op is declared once, not hand-written.

An `OpDef` names the op's operands, attributes (with their kinds and defaults),
results, traits, extra `verify` checks and `infer_meta` (result dtype and shape from
the operands and attributes). Dialect modules declare their ops with `OpDef(...)`
and end with the list they register. Everything else (the parser recovering attribute
types, the builder filling defaults and result types, the verifier) reads these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cinn_py.errors import VerifyError
from cinn_py.pir import attributes as A
from cinn_py.pir.constant import constant_of
from cinn_py.pir.types import DenseTensorType, Type, VectorType

if TYPE_CHECKING:
    from cinn_py.pir.operation import Operation
    from cinn_py.pir.value import Value


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Default of an attribute that every op must carry."""

ATTR_KINDS = (
    "bool",
    "int32",
    "int64",
    "float",
    "double",
    "str",
    "type",
    "int_array",
    "data_type",
    "place",
    "data_layout",
    "scalar",
    "array<bool>",
    "array<int32>",
    "array<int64>",
    "array<float>",
    "array<double>",
    "array<str>",
    "array",
)
"""The kinds an attribute may be declared with. `array<K>` is an ArrayAttribute of K;
plain `array` takes any items; `scalar` takes any number attribute (pd_op.Scalar)."""


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
    mutable_kind: str = "int_array"

    def __post_init__(self) -> None:
        if self.mutable_kind not in ATTR_KINDS:
            raise ValueError(f"operand {self.name}: unknown mutable_kind '{self.mutable_kind}'")


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: str
    default: Any = REQUIRED

    def __post_init__(self) -> None:
        if self.kind not in ATTR_KINDS:
            raise ValueError(f"attribute {self.name}: unknown kind '{self.kind}'")


COMMON_ATTRS: dict[str, AttrSpec] = {
    spec.name: spec
    for spec in (
        AttrSpec("stop_gradient", "array<bool>", None),
        AttrSpec("persistable", "array<bool>", None),
        AttrSpec("struct_name", "str", None),
        AttrSpec("op_callstack", "array<str>", None),
        AttrSpec("op_role", "int32", None),
        AttrSpec("op_dist_attr", "str", None),
    )
}
"""Attributes any op may carry whatever its declaration (Paddle adds them everywhere)."""


InferMeta = Callable[["InferContext"], Sequence[Type]]
Verifier = Callable[["Operation"], None]


@dataclass(frozen=True)
class OpDef:
    """The declaration of one op."""

    name: str
    operands: tuple[OperandSpec, ...] = ()
    attributes: tuple[AttrSpec, ...] = ()
    results: tuple[str, ...] = ("out",)
    traits: frozenset[str] = frozenset()
    infer_meta: InferMeta | None = None
    computed_meta: InferMeta | None = None
    """The result types the kernel really computes, where they differ from the types
    Paddle declares (`infer_meta` reproduces Paddle's, bugs included, so Paddle's programs
    verify). The verifier accepts either; `specialize_shapes` uses this one."""
    verify: Verifier | None = None
    variadic_operands: bool = False
    """The op takes any number of operands (builtin.combine); `operands` names the one kind."""
    variadic_results: bool = False
    """The op has as many results as its input says (builtin.split); `results` names the one kind."""
    attr_index: dict[str, AttrSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr_index", {a.name: a for a in self.attributes})

    def attr_spec(self, name: str) -> AttrSpec | None:
        return self.attr_index.get(name) or COMMON_ATTRS.get(name)

    def operand_index(self, name: str) -> int:
        for i, spec in enumerate(self.operands):
            if spec.name == name:
                return i
        raise KeyError(f"{self.name} has no operand '{name}'")

    def has_trait(self, trait: str) -> bool:
        return trait in self.traits


def operand(name: str, **kw: Any) -> OperandSpec:
    return OperandSpec(name, **kw)


def attr(name: str, kind: str, default: Any = REQUIRED) -> AttrSpec:
    return AttrSpec(name, kind, default)


# -- registry ------------------------------------------------------------------------

_REGISTRY: dict[str, OpDef] = {}


def register_ops(dialect: str, ops: Sequence[OpDef]) -> None:
    """Register a dialect's ops; each name must start with `dialect.` and be new."""
    for op_def in ops:
        if not op_def.name.startswith(dialect + "."):
            raise ValueError(f"{op_def.name} does not belong to dialect {dialect}")
        if op_def.name in _REGISTRY and _REGISTRY[op_def.name] is not op_def:
            raise ValueError(f"{op_def.name} is registered twice")
        _REGISTRY[op_def.name] = op_def


def lookup_op_def(name: str) -> OpDef | None:
    return _REGISTRY.get(name)


def registered_op_names() -> list[str]:
    return sorted(_REGISTRY)


# -- attribute kinds -------------------------------------------------------------------

_KIND_CLASSES: dict[str, tuple[type[A.Attribute], ...]] = {
    "bool": (A.BoolAttribute,),
    "int32": (A.Int32Attribute,),
    "int64": (A.Int64Attribute,),
    "float": (A.FloatAttribute,),
    "double": (A.DoubleAttribute,),
    "str": (A.StrAttribute,),
    "type": (A.TypeAttribute,),
    "int_array": (A.IntArrayAttribute,),
    "data_type": (A.DataTypeAttribute,),
    "place": (A.PlaceAttribute,),
    "data_layout": (A.DataLayoutAttribute,),
    "scalar": A.SCALAR_ATTRIBUTES,
}


def attribute_matches(kind: str, attribute: A.Attribute) -> bool:
    """Does `attribute` have the declared `kind`? Numbers may be held wider than declared."""
    if kind.startswith("array"):
        if not isinstance(attribute, A.ArrayAttribute):
            return False
        item_kind = kind[6:-1] if kind != "array" else None
        return item_kind is None or all(attribute_matches(item_kind, a) for a in attribute)
    classes = _KIND_CLASSES[kind]
    if isinstance(attribute, classes):
        return True
    # Paddle itself is loose about int widths and float widths in saved programs.
    widen = {
        "int32": A.Int64Attribute,
        "int64": A.Int32Attribute,
        "float": A.DoubleAttribute,
        "double": A.FloatAttribute,
    }
    return kind in widen and isinstance(attribute, widen[kind])


def make_attribute(kind: str, value: Any) -> A.Attribute:
    """The attribute of declared `kind` holding Python `value` (used for defaults and builders)."""
    if isinstance(value, A.Attribute):
        return value
    if kind.startswith("array"):
        item_kind = kind[6:-1] if kind != "array" else None
        items = [
            make_attribute(item_kind, v) if item_kind else A.attr_from_python(v) for v in value
        ]
        return A.ArrayAttribute.get(items)
    makers: dict[str, Callable[[Any], A.Attribute]] = {
        "bool": A.BoolAttribute.get,
        "int32": A.Int32Attribute.get,
        "int64": A.Int64Attribute.get,
        "float": A.FloatAttribute.get,
        "double": A.DoubleAttribute.get,
        "str": A.StrAttribute.get,
        "type": A.TypeAttribute.get,
        "int_array": A.IntArrayAttribute.get,
        "data_type": A.DataTypeAttribute.get,
        "place": A.PlaceAttribute.get,
        "data_layout": A.DataLayoutAttribute.get,
        "scalar": A.scalar_attribute,
    }
    return makers[kind](value)


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
        self.where = where

    @classmethod
    def of(cls, op: Operation) -> InferContext:
        return cls(op.op_def, op.operand_values(), op.attributes, op.where())

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
        attribute = self.attributes.get(name)
        if attribute is not None:
            return attribute.to_python()
        spec = self.op_def.attr_spec(name)
        if spec is None or spec.default is REQUIRED:
            raise self.error(f"needs attribute '{name}'")
        return spec.default

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
