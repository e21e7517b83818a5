"""A small op-definition DSL over IRDL, shaped like upstream `mlir.dialects.ext`.

A dialect is a class; its ops subclass `<Dialect>.Operation` and declare operands, results and
attributes as annotations, in order::

    class Graph(Dialect, name="graph"):
        pass

    class SoftmaxOp(Graph.Operation, name="softmax"):
        '''Softmax along `axis`.'''
        input: Operand
        axis: IntAttr
        result: Result

        @staticmethod
        def infer(sig):
            return sig.input            # the result type the op must have

From the classes the DSL emits IRDL (`Graph.irdl()`), loads it into a context once
(`Graph.load(ctx)`), wraps parsed operations in typed views (`SoftmaxOp(op).axis == 1`) and
builds ops (`SoftmaxOp.build(x, axis=1)` returns the result Value, its type inferred).

IRDL checks the structure (operand and result kinds, required attribute kinds). The semantic
checks IRDL cannot express live in `infer` and run through `verify_semantics`, which reports at
the op's location. `infer` receives a namespace whose fields are the operand *types* (lists for
variadic groups, None for an absent optional), the attribute values as Python objects (defaults
applied) and `result`, the declared result type (None while building). It raises `VerifyError`
for bad input and returns the expected result type, or None when any declared type is fine.
"""

from __future__ import annotations

import types
from typing import Any, ClassVar

from mlir import ir
from mlir.dialects import irdl


class VerifyError(Exception):
    """Raised by `infer` when an op is invalid; the message is reported at the op's location."""


# ----------------------------------------------------------------------------------------------
# Field kinds: what an annotation on an op class declares.


class Operand:
    """One tensor operand."""

    group = "single"


class OptionalOperand(Operand):
    """An operand that may be absent (at most one optional or variadic group per op)."""

    group = "optional"


class VariadicOperand(Operand):
    """Zero or more tensor operands (at most one optional or variadic group per op)."""

    group = "variadic"


class Result:
    """One tensor result."""


class Attr:
    """An attribute kind: its IRDL base and the conversion between Python and MLIR values."""

    irdl_base: ClassVar[str | None] = None
    description: ClassVar[str] = "attribute"

    @classmethod
    def accepts(cls, attr: ir.Attribute) -> bool:
        raise NotImplementedError

    @classmethod
    def to_python(cls, attr: ir.Attribute) -> Any:
        raise NotImplementedError

    @classmethod
    def to_mlir(cls, value: Any) -> ir.Attribute:
        raise NotImplementedError


class IntAttr(Attr):
    irdl_base = "#builtin.integer"
    description = "a 64-bit integer attribute"

    @classmethod
    def accepts(cls, attr):
        return isinstance(attr, ir.IntegerAttr) and attr.type != ir.IntegerType.get_signless(1)

    @classmethod
    def to_python(cls, attr):
        return ir.IntegerAttr(attr).value

    @classmethod
    def to_mlir(cls, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


class BoolAttr(Attr):
    irdl_base = "#builtin.integer"
    description = "a bool attribute"

    @classmethod
    def accepts(cls, attr):
        return isinstance(attr, ir.BoolAttr) or (
            isinstance(attr, ir.IntegerAttr) and attr.type == ir.IntegerType.get_signless(1)
        )

    @classmethod
    def to_python(cls, attr):
        return bool(ir.BoolAttr(attr).value)

    @classmethod
    def to_mlir(cls, value):
        return ir.BoolAttr.get(bool(value))


class FloatAttr(Attr):
    irdl_base = "#builtin.float"
    description = "a float attribute"

    @classmethod
    def accepts(cls, attr):
        return isinstance(attr, ir.FloatAttr)

    @classmethod
    def to_python(cls, attr):
        return ir.FloatAttr(attr).value

    @classmethod
    def to_mlir(cls, value):
        return ir.FloatAttr.get(ir.F32Type.get(), float(value))


class StrAttr(Attr):
    irdl_base = "#builtin.string"
    description = "a string attribute"

    @classmethod
    def accepts(cls, attr):
        return isinstance(attr, ir.StringAttr)

    @classmethod
    def to_python(cls, attr):
        return ir.StringAttr(attr).value

    @classmethod
    def to_mlir(cls, value):
        return ir.StringAttr.get(str(value))


class I64ArrayAttr(Attr):
    irdl_base = "#builtin.dense_array"
    description = "an array<i64: ...> attribute"

    @classmethod
    def accepts(cls, attr):
        return isinstance(attr, ir.DenseI64ArrayAttr)

    @classmethod
    def to_python(cls, attr):
        return list(ir.DenseI64ArrayAttr(attr))

    @classmethod
    def to_mlir(cls, value):
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])


class ElementsAttr(Attr):
    """`dense<...>` or `dense_resource<...>` tensor contents (kept as the MLIR attribute)."""

    irdl_base = None
    description = "a dense or dense_resource elements attribute"

    @classmethod
    def accepts(cls, attr):
        return cls.to_python(attr) is not None

    @classmethod
    def to_python(cls, attr):
        if isinstance(attr, ir.DenseElementsAttr):
            return attr
        try:  # the bindings give dense_resource attributes no concrete Python class
            return ir.DenseResourceElementsAttr(attr)
        except ValueError:
            return None

    @classmethod
    def to_mlir(cls, value):
        return value


_NO_DEFAULT = object()


class _Field:
    def __init__(self, name: str, kind: type, default: Any = _NO_DEFAULT):
        self.name = name
        self.kind = kind
        self.default = default

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


# ----------------------------------------------------------------------------------------------
# Dialects and ops.


class Dialect:
    """Base of a Python-defined dialect. Subclass with `name=`; ops subclass `.Operation`."""

    name: ClassVar[str]
    ops: ClassVar[dict[str, type[OpDef]]]
    Operation: ClassVar[type[OpDef]]

    def __init_subclass__(cls, *, name: str, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.name = name
        cls.ops = {}
        cls.Operation = type("Operation", (OpDef,), {"dialect": cls, "__module__": cls.__module__})

    @classmethod
    def irdl(cls) -> str:
        """The dialect as IRDL text."""
        body = "\n".join(op._irdl() for op in cls.ops.values())
        return f"irdl.dialect @{cls.name} {{\n{body}\n}}\n"

    @classmethod
    def load(cls, context: ir.Context) -> None:
        """Registers the dialect in `context`; loading twice is a no-op."""
        first = next(iter(cls.ops))
        if context.is_registered_operation(f"{cls.name}.{first}"):
            return
        with context, ir.Location.unknown():
            irdl.load_dialects(ir.Module.parse(cls.irdl()))

    @classmethod
    def view(cls, operation: ir.Operation | ir.OpView) -> OpDef | None:
        """The typed view of `operation` if it belongs to this dialect."""
        operation = getattr(operation, "operation", operation)
        dialect, _, mnemonic = operation.name.partition(".")
        if dialect != cls.name or mnemonic not in cls.ops:
            return None
        return cls.ops[mnemonic](operation)


class OpDef:
    """A typed view over a generic `ir.Operation` of a Python-defined dialect."""

    dialect: ClassVar[type[Dialect]]
    mnemonic: ClassVar[str]
    operands: ClassVar[list[_Field]]
    results: ClassVar[list[_Field]]
    attributes: ClassVar[list[_Field]]

    def __init_subclass__(cls, *, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if name is None:
            return
        cls.mnemonic = name
        cls.operands, cls.results, cls.attributes = [], [], []
        for field_name, kind in cls.__dict__.get("__annotations__", {}).items():
            default = cls.__dict__.get(field_name, _NO_DEFAULT)
            field = _Field(field_name, kind, default)
            if isinstance(kind, type) and issubclass(kind, Operand):
                cls.operands.append(field)
            elif kind is Result:
                cls.results.append(field)
            elif isinstance(kind, type) and issubclass(kind, Attr):
                cls.attributes.append(field)
            else:
                raise TypeError(f"{cls.__name__}.{field_name}: unknown field kind {kind!r}")
        groups = [f for f in cls.operands if f.kind.group != "single"]
        if len(groups) > 1:
            raise TypeError(f"{cls.__name__}: at most one optional or variadic operand group")
        for field in cls.operands + cls.results + cls.attributes:
            setattr(cls, field.name, property(_accessor(field)))
        cls.dialect.ops[name] = cls

    def __init__(self, operation: ir.Operation | ir.OpView):
        self.operation = getattr(operation, "operation", operation)

    # -- access ----------------------------------------------------------------------------

    @property
    def location(self) -> ir.Location:
        return self.operation.location

    @classmethod
    def _operand_slices(cls, count: int) -> dict[str, slice]:
        fixed = sum(1 for f in cls.operands if f.kind.group == "single")
        slices, pos = {}, 0
        for field in cls.operands:
            width = 1 if field.kind.group == "single" else count - fixed
            slices[field.name] = slice(pos, pos + width)
            pos += width
        return slices

    def operand_group(self, name: str) -> list[ir.Value]:
        operands = list(self.operation.operands)
        return operands[self._operand_slices(len(operands))[name]]

    def attribute(self, name: str) -> Any:
        field = next(f for f in self.attributes if f.name == name)
        if name in self.operation.attributes:
            return field.kind.to_python(self.operation.attributes[name])
        return None if field.required else field.default

    # -- semantics ---------------------------------------------------------------------------

    @staticmethod
    def infer(sig: types.SimpleNamespace) -> ir.Type | None:
        """Checks the op's semantics and returns the result type it must have (or None)."""
        return None

    def signature(self) -> types.SimpleNamespace:
        """The namespace `infer` reads: operand types, attribute values, the declared result."""
        sig = types.SimpleNamespace()
        operands = list(self.operation.operands)
        for name, part in self._operand_slices(len(operands)).items():
            kinds = [v.type for v in operands[part]]
            group = next(f.kind.group for f in self.operands if f.name == name)
            setattr(sig, name, _group_value(group, kinds))
        for field in self.attributes:
            setattr(sig, field.name, self.attribute(field.name))
        sig.result = self.operation.results[0].type if self.operation.results else None
        return sig

    def verify(self) -> None:
        """Raises VerifyError if the op breaks its contract."""
        for field in self.attributes:
            attr = (
                self.operation.attributes[field.name]
                if field.name in self.operation.attributes
                else None
            )
            if attr is None:
                if field.required:
                    raise VerifyError(f"requires attribute '{field.name}'")
            elif not field.kind.accepts(attr):
                raise VerifyError(f"attribute '{field.name}' must be {field.kind.description}")
        for value in self.operation.operands:
            _check_ranked_tensor(value.type, "operand")
        for value in self.operation.results:
            _check_ranked_tensor(value.type, "result")
        sig = self.signature()
        expected = self.infer(sig)
        if expected is not None and expected != sig.result:
            raise VerifyError(
                f"result type {sig.result} does not match the inferred type {expected}"
            )

    # -- building ----------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        *operands,
        result_type: ir.Type | None = None,
        loc: ir.Location | None = None,
        ip: ir.InsertionPoint | None = None,
        **attributes,
    ) -> ir.Value:
        """Creates the op and returns its result; the result type is inferred when possible."""
        values: list[ir.Value] = []
        sig = types.SimpleNamespace()
        for field, given in zip(cls.operands, _pad(operands, len(cls.operands)), strict=True):
            if field.kind.group == "single":
                group = [given]
            elif given is None:
                group = []
            else:
                group = list(given) if field.kind.group == "variadic" else [given]
            group = [_value(v) for v in group]
            values += group
            setattr(sig, field.name, _group_value(field.kind.group, [v.type for v in group]))
        attrs = {}
        for field in cls.attributes:
            value = attributes.pop(field.name, None)
            if value is None:
                if field.required:
                    raise TypeError(f"{cls.__name__}.build: missing attribute '{field.name}'")
                setattr(sig, field.name, field.default)
                continue
            attrs[field.name] = field.kind.to_mlir(value)
            setattr(sig, field.name, value)
        if attributes:
            raise TypeError(f"{cls.__name__}.build: unknown attributes {sorted(attributes)}")
        sig.result = result_type
        try:
            inferred = cls.infer(sig)
        except VerifyError as error:
            raise ValueError(f"{cls.dialect.name}.{cls.mnemonic}: {error}") from None
        result_type = result_type or inferred
        if result_type is None:
            raise TypeError(f"{cls.__name__}.build: pass result_type (it cannot be inferred)")
        op = ir.Operation.create(
            f"{cls.dialect.name}.{cls.mnemonic}",
            results=[result_type],
            operands=values,
            attributes=attrs,
            loc=loc,
            ip=ip,
        )
        return op.result

    @classmethod
    def _irdl(cls) -> str:
        lines = [f"  irdl.operation @{cls.mnemonic} {{"]
        counter = iter(range(10_000))

        def constraint(base: str | None) -> str:
            ssa = f"%c{next(counter)}"
            rhs = f'irdl.base "{base}"' if base else "irdl.any"
            lines.append(f"    {ssa} = {rhs}")
            return ssa

        modifiers = {"single": "", "optional": "optional ", "variadic": "variadic "}
        operands = [
            f"{f.name}: {modifiers[f.kind.group]}{constraint('!builtin.tensor')}"
            for f in cls.operands
        ]
        results = [f"{f.name}: {constraint('!builtin.tensor')}" for f in cls.results]
        attrs = [
            f'"{f.name}" = {constraint(f.kind.irdl_base)}' for f in cls.attributes if f.required
        ]
        if operands:
            lines.append(f"    irdl.operands({', '.join(operands)})")
        if results:
            lines.append(f"    irdl.results({', '.join(results)})")
        if attrs:
            lines.append(f"    irdl.attributes {{{', '.join(attrs)}}}")
        lines.append("  }")
        return "\n".join(lines)


def _accessor(field: _Field):
    if isinstance(field.kind, type) and issubclass(field.kind, Operand):

        def get_operand(self):
            group = self.operand_group(field.name)
            return _group_value(field.kind.group, group)

        return get_operand
    if field.kind is Result:

        def get_result(self):
            index = next(i for i, f in enumerate(self.results) if f.name == field.name)
            return self.operation.results[index]

        return get_result

    def get_attribute(self):
        return self.attribute(field.name)

    return get_attribute


def _group_value(group: str, items: list):
    if group == "single":
        return items[0]
    if group == "optional":
        return items[0] if items else None
    return items


def _pad(items: tuple, count: int) -> list:
    if len(items) > count:
        raise TypeError(f"expected at most {count} operands, got {len(items)}")
    return list(items) + [None] * (count - len(items))


def _value(v) -> ir.Value:
    if isinstance(v, ir.Value):
        return v
    if hasattr(v, "result"):
        return v.result
    raise TypeError(f"expected an ir.Value, got {type(v).__name__}")


# What tensors of Python-defined ops may hold: the element types every lowering handles.
ELEMENT_TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64")


def _check_ranked_tensor(t: ir.Type, what: str) -> None:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        raise VerifyError(f"{what} must be a statically shaped ranked tensor, got {t}")
    if str(t.element_type) not in ELEMENT_TYPES:
        raise VerifyError(
            f"{what} element type must be one of {', '.join(ELEMENT_TYPES)}, got {t.element_type}"
        )


# ----------------------------------------------------------------------------------------------
# Verification of whole modules.


def verify_semantics(root: ir.Operation, dialects: list[type[Dialect]]) -> bool:
    """Runs the Python verifiers of every op of `dialects` under `root`.

    Each failure is emitted as an error at the op's location (the context's diagnostic handlers
    see it); returns True when every op verified.
    """
    by_name = {d.name: d for d in dialects}
    ok = True

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal ok
        dialect = by_name.get(op.name.partition(".")[0])
        view = dialect.view(op) if dialect else None
        if view is not None:
            try:
                with op.location:
                    view.verify()
            except VerifyError as error:
                op.location.emit_error(f"'{op.name}' op {error}")
                ok = False
        return ir.WalkResult.ADVANCE

    root = getattr(root, "operation", root)
    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ok
