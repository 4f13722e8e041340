"""Tests for glasstorch._dispatcher.schema, with real PyTorch as the oracle.

Every check compares glasstorch's parser against ``torch._C.parse_schema``
(and torchgen for ``kind()``): the printed form, each argument's name, type,
kwarg-only flag, default value and alias annotation, and each return.
"""
from __future__ import annotations

import pathlib
import re
import time

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glasstorch._dispatcher.schema import (
    NO_DEFAULT,
    AliasInfo,
    Argument,
    FunctionSchema,
    Return,
    SchemaParseError,
    SchemaType,
    parse_schema,
    parse_type,
)

# Python-only ops with ``PyObject`` arguments (torch.distributed's, registered
# once another test module imports it) are refused by torch's own parser:
# they are checked apart.
ALL_SCHEMAS = [str(s) for s in torch._C._jit_get_all_schemas() if "PyObject" not in str(s)]


# --------------------------------------------------------------------------
# Comparison helpers
# --------------------------------------------------------------------------

def _alias(info):
    return None if info is None else (info.before_set, info.after_set, info.is_write)


def _torch_default(value):
    # torch turns a Device default into a torch.device; glasstorch keeps the string.
    return str(value) if isinstance(value, torch.device) else value


def assert_same(mine: FunctionSchema, ref) -> None:
    """Assert that a glasstorch schema matches a torch._C.FunctionSchema in every field."""
    where = str(ref)
    assert str(mine) == str(ref), where
    assert (mine.name, mine.overload_name) == (ref.name, ref.overload_name), where
    assert mine.is_mutable == ref.is_mutable, where
    assert len(mine.arguments) == len(ref.arguments), where
    for a, b in zip(mine.arguments, ref.arguments):
        assert a.name == b.name, where
        assert a.type.python_str() == str(b.type), (where, a.name)
        assert a.kwarg_only == b.kwarg_only, (where, a.name)
        assert a.N == b.N, (where, a.name)
        assert a.has_default_value() == b.has_default_value(), (where, a.name)
        if a.has_default_value():
            expected = _torch_default(b.default_value)
            # repr distinguishes 1 / 1.0 / True.
            assert repr(a.default_value) == repr(expected), (where, a.name)
        else:
            assert a.default_value is NO_DEFAULT
        assert _alias(a.alias_info) == _alias(b.alias_info), (where, a.name)
        assert (a.is_write, a.is_out) == (b.is_write, b.is_out), (where, a.name)
    assert len(mine.returns) == len(ref.returns), where
    for r, s in zip(mine.returns, ref.returns):
        assert (r.name or "") == s.name, where
        assert r.type.python_str() == str(s.type), where
        assert _alias(r.alias_info) == _alias(s.alias_info), where


def check(text: str) -> FunctionSchema:
    """Parse with both parsers and assert they agree; return glasstorch's result."""
    mine = parse_schema(text)
    assert_same(mine, torch._C.parse_schema(text))
    return mine


def outcome_agrees(text: str) -> None:
    """Both parsers reject ``text``, or both accept it and agree on everything."""
    try:
        ref = torch._C.parse_schema(text)
    except Exception as exc:  # torch raises RuntimeError, and sometimes ValueError/IndexError
        if "Unknown custom class type" in str(exc):
            return  # glasstorch has no class registry to consult (documented)
        with pytest.raises(RuntimeError):
            parse_schema(text)
        return
    assert_same(parse_schema(text), ref)


# --------------------------------------------------------------------------
# (a) every schema torch knows
# --------------------------------------------------------------------------

def test_every_registered_schema_round_trips():
    assert len(ALL_SCHEMAS) > 3000
    # torch's printer is not a fixed point for a multi-name alias set: it
    # prints ``(a|b)`` as ``(b|a)``, so re-parsing flips it back.  We compare
    # with torch's re-parse of its own output, which covers these too.
    not_fixed_points = []
    for text in ALL_SCHEMAS:
        ref = torch._C.parse_schema(text)
        assert_same(parse_schema(text), ref)
        if str(ref) != text:
            not_fixed_points.append(text)
    assert all("|" in text for text in not_fixed_points)
    assert 0 < len(not_fixed_points) <= 10, not_fixed_points


def test_pyobject_schemas_are_refused_as_torch_refuses_them():
    import torch.distributed.tensor  # noqa: F401  (registers _dtensor's PyObject ops)
    texts = [str(s) for s in torch._C._jit_get_all_schemas() if "PyObject" in str(s)]
    assert texts
    for text in texts:
        with pytest.raises(RuntimeError, match="unknown type specifier"):
            torch._C.parse_schema(text)
        with pytest.raises(SchemaParseError, match="unknown type specifier 'PyObject'"):
            parse_schema(text)


def test_every_dispatcher_operator_was_covered():
    # (re-read: other tests may have made torch register more operators since)
    covered = {str(s).split("(", 1)[0] for s in torch._C._jit_get_all_schemas()}
    names = torch._C._dispatch_get_all_op_names()
    assert len(names) > 2500
    assert set(names) <= covered


def test_aten_op_overload_schemas_parse():
    for op_name in ("add", "split", "max", "sum", "index", "empty", "to", "copy_"):
        packet = getattr(torch.ops.aten, op_name)
        for overload in packet.overloads():
            ref = getattr(packet, overload)._schema
            mine = check(str(ref))
            assert (mine.name, mine.overload_name) == (ref.name, ref.overload_name)


def test_argument_types_reparse_to_the_same_type():
    seen = 0
    for text in ALL_SCHEMAS[::3]:
        for arg in parse_schema(text).arguments:
            assert parse_type(str(arg.type)) == arg.type, (text, arg.name)
            seen += 1
    assert seen > 4000


# --------------------------------------------------------------------------
# (b) yaml spellings
# --------------------------------------------------------------------------

def _native_functions_yaml() -> pathlib.Path:
    import torchgen

    return pathlib.Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"


def test_every_native_functions_yaml_entry():
    path = _native_functions_yaml()
    if not path.exists():
        pytest.skip("torchgen's packaged native_functions.yaml is not installed")
    funcs = re.findall(r"^- func: (.*)$", path.read_text(), re.M)
    assert len(funcs) == 2584
    for text in funcs:
        check(text)


YAML_SPELLINGS = [
    # (as written in native_functions.yaml, as torch prints it)
    ("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
     "float eps=1e-05, bool cudnn_enable=True) -> Tensor",
     "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
     "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor"),
    ("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
     "contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)"),
    ("foo(ScalarType dt=float32) -> ()", "foo(ScalarType dt=6) -> ()"),
    ("foo(ScalarType? dt=long) -> ()", "foo(ScalarType? dt=4) -> ()"),
    ("foo(Tensor self, int reduction=Mean) -> Tensor", "foo(Tensor self, int reduction=1) -> Tensor"),
    ("foo(Layout layout=strided) -> ()", "foo(Layout layout=0) -> ()"),
    ("foo(int[2] x=[1,1]) -> ()", "foo(int[2] x=1) -> ()"),
    ("foo(int[2] stride=1) -> ()", "foo(int[2] stride=1) -> ()"),
    ("foo(int[3] padding=0, int[2] pad=[0, 1]) -> ()", "foo(int[3] padding=0, int[2] pad=[0, 1]) -> ()"),
    ("foo(SymInt[2] x=1) -> ()", "foo(SymInt[2] x=[1, 1]) -> ()"),
    ("foo(float x=1.0, float y=0.0, float z=10.0) -> ()", "foo(float x=1., float y=0., float z=10.) -> ()"),
    ("foo(float x=1, float y=-1) -> ()", "foo(float x=1., float y=-1.) -> ()"),
    ("foo(float tol=1e-15, float e=1e-08, float f=1e-06) -> ()",
     "foo(float tol=1.0000000000000001e-15, float e=1e-08, float f=9.9999999999999995e-07) -> ()"),
    ("foo(Scalar p=0.3333333333333333) -> ()", "foo(Scalar p=0.33333333333333331) -> ()"),
    ("foo(float x=1e20, float y=1e18) -> ()", "foo(float x=1e+20, float y=1000000000000000000.) -> ()"),
    ("gelu(Tensor self, *, str approximate='none') -> Tensor",
     'gelu(Tensor self, *, str approximate="none") -> Tensor'),
    ("foo(str s=\"\\\"'\\\\\") -> ()", "foo(str s=\"\\\"\\'\\\\\") -> ()"),
    ("foo(str s=' \\n\\t\\f\\v') -> ()", 'foo(str s=" \\n\\t\\f\\v") -> ()'),
    ("foo(bool[3] output_mask=True) -> ()", "foo(bool[3] output_mask=[True, True, True]) -> ()"),
    ("foo(float[] x=[1, 2.5]) -> ()", "foo(float[] x=[1., 2.5]) -> ()"),
    ("foo(complex c=1.5j) -> ()", "foo(complex c=0.+1.5j) -> ()"),
    ("foo(Tensor x) -> (Tensor)", "foo(Tensor x) -> Tensor"),
    ("foo(Tensor x, *) -> ()", "foo(Tensor x) -> ()"),
    ("  aten :: foo . bar ( Tensor  x ) ->  Tensor  ", "aten::foo.bar(Tensor x) -> Tensor"),
    ("foo(Tensor x,\n    Tensor y) -> Tensor  # a comment", "foo(Tensor x, Tensor y) -> Tensor"),
    ("foo(DeviceIndex i, ConstQuantizerPtr q, None n) -> ()", "foo(int i, int q, NoneType n) -> ()"),
]


@pytest.mark.parametrize("text,printed", YAML_SPELLINGS)
def test_yaml_spelling_is_reserialised_like_torch(text, printed):
    assert str(torch._C.parse_schema(text)) == printed  # the expectation itself is right
    assert str(check(text)) == printed


FACTS_LINES = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
]


@pytest.mark.parametrize("text", FACTS_LINES)
def test_facts_file_lines_print_unchanged(text):
    assert str(check(text)) == text


# --------------------------------------------------------------------------
# Default values
# --------------------------------------------------------------------------

DEFAULTS = [
    # (declaration, python value)
    ("int[2] stride=1", [1, 1]),
    ("int[2] x=[1,1]", [1, 1]),
    ("int[1]? dim=1", 1),
    ("int[] x=[]", []),
    ("float eps=1e-05", 1e-05),
    ("float x=1", 1.0),
    ("float? x=1", 1),
    ("int x=1.5", 1.5),
    ("int x=-100", -100),
    ("Scalar s=-2", -2),
    ("Scalar s=0.5", 0.5),
    ("bool b=True", True),
    ("bool? b=None", None),
    ("MemoryFormat m=contiguous_format", 0),
    ("MemoryFormat? m=None", None),
    ("ScalarType dt=float32", 6),
    ("ScalarType dt=bfloat16", 15),
    ("ScalarType dt=long", 4),
    ("int reduction=Mean", 1),
    ("Layout l=strided", 0),
    ("str s='none'", "none"),
    ("str? s=\"reduced\"", "reduced"),
    ("str s=\"\\101\\a\"", "A\a"),
    ("complex c=-2j", complex(0, -2)),
    ("Tensor? t=None", None),
    ("Tensor t=None", None),
    ("Generator? g=None", None),
    ("Device d=\"cpu\"", "cpu"),
    ("float x=-1e-10", -1e-10),
    ("float x=1e300", 1e300),
    ("SymInt[2] x=[1, 2]", [1, 2]),
    ("ScalarType[] x=[float32, 4]", [6, 4]),
]


@pytest.mark.parametrize("decl,value", DEFAULTS)
def test_default_values(decl, value):
    schema = check(f"foo({decl}) -> ()")
    arg = schema.arguments[0]
    assert arg.has_default_value()
    assert repr(arg.default_value) == repr(value)


def test_missing_default_is_the_sentinel():
    arg = check("foo(Tensor self, int dim) -> Tensor").arguments[1]
    assert arg.default_value is NO_DEFAULT
    assert not arg.has_default_value()
    assert not NO_DEFAULT and repr(NO_DEFAULT) == "NO_DEFAULT"


# --------------------------------------------------------------------------
# Types and alias annotations
# --------------------------------------------------------------------------

TYPES = [
    "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[]?", "Tensor[][]", "int", "int[2]",
    "int[1]?", "int[]?", "SymInt", "SymInt[]", "SymInt[2]", "SymInt?", "SymInt[1]?", "bool[3]",
    "float", "float[]?", "complex", "str", "str?", "Scalar", "Scalar?", "Scalar[]", "ScalarType?",
    "Layout?", "Device?", "MemoryFormat?", "Generator?", "Storage", "Stream", "Any", "SymBool",
    "DeviceIndex", "QScheme", "t", "t1", "tVal", "t[]", "Dict(str, t)", "Dict(SymInt, Tensor)",
    "Future(t)", "RRef(t)", "Await(t)", "(int, str)", "(Tensor, t)[]", "()", "NoneType",
    "Union(int, str)", "__torch__.torch.classes.quantized.LinearPackedParamsBase",
]


@pytest.mark.parametrize("spelling", TYPES)
def test_type_spelling_and_python_str(spelling):
    ref_schema = torch._C.parse_schema(f"foo({spelling} x) -> ()")
    ref_spelling = str(ref_schema)[len("foo("):-len(" x) -> ()")]
    t = parse_type(spelling)
    assert str(t) == ref_spelling
    assert t.python_str() == str(ref_schema.arguments[0].type)
    assert parse_type(str(t)) == t


def test_type_fields():
    t = parse_type("Tensor?[]")
    assert (t.base, t.is_list, t.optional, t.size) == ("Tensor", True, False, None)
    assert (t.elem.base, t.elem.optional, t.elem.is_list) == ("Tensor", True, False)
    t = parse_type("int[1]?")
    assert (t.base, t.is_list, t.optional, t.size, t.elem) == ("int", True, True, 1, SchemaType("int"))
    t = parse_type("Dict(str, Tensor)")
    assert t.base == "Dict" and t.contained == (SchemaType("str"), SchemaType("Tensor"))
    assert parse_type("t").is_type_var and not parse_type("Tensor").is_type_var
    assert parse_type("__torch__.torch.classes.c10d.Work").is_class
    assert parse_type("int??") == parse_type("int?")


@pytest.mark.parametrize("spelling,tensor_like", [
    ("Tensor", True), ("Tensor?", True), ("Tensor[]", True), ("Tensor?[]", True),
    ("Tensor[1]", True), ("Tensor[]?", True), ("int", False), ("int[]", False),
    ("Scalar", False), ("Tensor[][]", False), ("(Tensor, Tensor)", False), ("t", False),
])
def test_is_tensor_like(spelling, tensor_like):
    assert parse_type(spelling).is_tensor_like is tensor_like


def test_tensor_predicates():
    assert parse_type("Tensor").is_tensor and not parse_type("Tensor?").is_tensor
    assert parse_type("Tensor?").is_optional_tensor
    assert parse_type("Tensor[]").is_tensor_list and not parse_type("Tensor?[]").is_tensor_list
    assert parse_type("Tensor?[]").is_optional_tensor_list


ALIAS_SCHEMAS = [
    "foo(Tensor(a) x) -> Tensor(a)",
    "foo(Tensor(a!) x) -> Tensor(a!)",
    "foo(Tensor(a -> *) x) -> Tensor(a)[]",
    "foo(Tensor(a! -> *) x) -> ()",
    "foo(Tensor(a|b) x) -> Tensor(b|a)",
    "foo(Tensor(a|b!) x) -> ()",
    "foo(Tensor(a -> b|c) x) -> ()",
    "foo(Tensor(a0!) x, Tensor(A) y, Tensor(ab_1) z) -> ()",
    "foo(Tensor(*) x) -> Tensor(*)",
    "foo(Tensor(a!)[] x) -> Tensor(a!)[]",
    "foo(Tensor(a)[](b!) x) -> ()",
    "foo(Tensor[](b) x) -> ()",
    "foo(Tensor(a)? x) -> Tensor(a)?",
    "foo(Tensor(a!)?[] x) -> ()",
    "foo(Tensor(a!)[]? x) -> ()",
    "foo(Tensor x, *, Tensor(a!)[] out) -> ()",
    "foo(Dict(str, t)(a!) self, t(b -> *) v) -> t(*)",
    "foo(Tensor! x, Tensor[]! y) -> Tensor!",
    "foo(Dict(str, Tensor(a)) x, (Tensor(a), int) y) -> ()",
    "foo(int(a) x) -> ()",
]


@pytest.mark.parametrize("text", ALIAS_SCHEMAS)
def test_alias_annotations(text):
    check(text)


def test_alias_info_objects():
    schema = check("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
    info = schema.arguments[0].alias_info
    assert (info.before_set, info.after_set, info.is_write) == ({"a"}, {"*"}, False)
    assert str(info) == "(a -> *)"
    ret = schema.returns[0].alias_info  # the list holds the annotation for its elements
    assert (ret.before_set, ret.after_set, ret.contained) == (set(), set(), (AliasInfo(("a",)),))
    out = check("foo(Tensor x, *, Tensor(a!) out) -> Tensor(a!)").arguments[1]
    assert out.is_out and out.is_write and str(out.alias_info) == "(a!)"
    assert AliasInfo(("a", "b"), is_write=True) == AliasInfo(("b", "a"), is_write=True)


# --------------------------------------------------------------------------
# Names, returns, varargs, objects
# --------------------------------------------------------------------------

def test_names():
    s = check("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.name, s.overload_name, s.namespace, s.unqualified_name) == ("aten::add", "Tensor", "aten", "add")
    s = check("foo(Tensor x) -> Tensor")  # torch leaves a bare name unqualified
    assert (s.name, s.overload_name, s.namespace) == ("foo", "", "")
    assert parse_schema("foo(Tensor x) -> Tensor", default_namespace="aten").name == "aten::foo"
    assert parse_schema("ns::foo(Tensor x) -> Tensor", default_namespace="aten").name == "ns::foo"
    # torch does not reserve the ``_out`` suffix at parse time (torchgen does).
    assert check("my_out(Tensor x) -> Tensor").name == "my_out"


@pytest.mark.parametrize("text", [
    "foo(Tensor x) -> ()",
    "foo() -> ()",
    "foo(Tensor x) -> (Tensor values, Tensor indices)",
    "foo(Tensor x) -> (Tensor a, Tensor)",
    "foo(Tensor x) -> Tensor a",
    "foo(Tensor x) -> (Tensor(a!) values)",
    "foo(Tensor x) -> ((int, str))",
    "foo(Tensor x) -> ((int, str)[] y, int)",
    "foo(Tensor x) -> (((int, str)))",
    "foo(Tensor x) -> Tensor[]",
    "foo(Tensor x) -> Tensor?",
    "foo(...) -> ...",
    "foo(Tensor x, ...) -> (Tensor, ...)",
    "foo(Tensor x) -> (...)",
    "foo(*, Tensor x) -> Tensor",
    "foo(Tensor x, *, Tensor y, *, Tensor z) -> ()",
    "foo(int a=1, int[2] b, Tensor[] c) -> ()",  # c10 exempts list arguments from the default-order rule
])
def test_returns_and_varargs(text):
    check(text)


def test_vararg_flags():
    s = check("foo(Tensor x, ...) -> (Tensor, ...)")
    assert s.is_vararg and s.is_varret
    s = check("foo(Tensor x) -> (Tensor values, Tensor indices)")
    assert not s.is_vararg and not s.is_varret
    assert [r.name for r in s.returns] == ["values", "indices"]
    assert check("foo(Tensor x) -> Tensor").returns[0].name is None


def test_objects_equality_hash_and_repr():
    text = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    a, b = parse_schema(text), parse_schema(text)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != parse_schema("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
    assert a.arguments[2] == Argument("alpha", SchemaType("Scalar"), 1, kwarg_only=True)
    assert a.returns[0] == Return(SchemaType("Tensor"))
    assert repr(a) == f"FunctionSchema({text!r})"
    assert str(a.arguments[2]) == "Scalar alpha=1"
    built = FunctionSchema("aten::mm", "", [Argument("self", SchemaType("Tensor")),
                                           Argument("mat2", SchemaType("Tensor"))],
                           [Return(SchemaType("Tensor"))])
    assert str(built) == "aten::mm(Tensor self, Tensor mat2) -> Tensor"


# --------------------------------------------------------------------------
# kind() and is_mutable
# --------------------------------------------------------------------------

def test_kind_matches_torchgen_for_every_schema():
    torchgen_model = pytest.importorskip("torchgen.model")
    compared = 0
    for text in ALL_SCHEMAS:
        try:
            expected = torchgen_model.FunctionSchema.parse(text).kind().name
        except Exception:  # torchgen rejects the TorchScript-only schemas
            continue
        assert parse_schema(text).kind() == expected, text
        compared += 1
    assert compared > 3500


@pytest.mark.parametrize("text,kind", [
    ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "functional"),
    ("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "inplace"),
    ("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "out"),
    ("aten::__iadd__.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "inplace"),
    ("aten::__add__.Tensor(Tensor self, Tensor other) -> Tensor", "functional"),
    ("aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
     "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", "mutable"),
    ("aten::foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_buf) -> Tensor(a!)", "scratch"),
])
def test_kind_examples(text, kind):
    schema = check(text)
    assert schema.kind() == kind
    torchgen_model = pytest.importorskip("torchgen.model")
    assert torchgen_model.FunctionSchema.parse(text).kind().name == kind


def test_is_mutable_and_out_arguments():
    s = check("aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
              "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)")
    assert s.is_mutable
    assert [a.name for a in s.out_arguments] == ["max", "max_values"]
    assert not check("aten::mm(Tensor self, Tensor mat2) -> Tensor").is_mutable


# --------------------------------------------------------------------------
# (c) errors
# --------------------------------------------------------------------------

BAD_SCHEMAS = [
    "foo(Tensor x, ) -> Tensor",
    "foo(Tensor x -> Tensor",
    "foo(Tensoor x) -> Tensor",
    "foo(Dimname n) -> ()",
    "foo(SymFloat n) -> ()",
    "foo(Foo.Bar x) -> ()",
    "foo(Tensor x)",
    "foo(Tensor x) ->",
    "foo(Tensor x) -> Tensor extra junk",
    "foo(Tensor(a!|b) x) -> ()",
    "foo(Tensor?(a) x) -> ()",
    "foo(Tensor(!) x) -> ()",
    "foo(Tensor() x) -> ()",
    "foo(Tensor(1) x) -> ()",
    "foo(Tensor(a)(b) x) -> ()",
    "foo(Tensor!! x) -> ()",
    "foo((int, int)(a) x) -> ()",
    "foo(int[2][3] x) -> ()",
    "foo(int[2]?[] x) -> ()",
    "foo(int[a] x) -> ()",
    "foo(..., Tensor x) -> ()",
    "foo(...,) -> ()",
    "foo(int x=1, ...) -> ()",
    "foo(Tensor x=1) -> ()",
    "foo(Generator x=1) -> ()",
    "foo(Device x=1) -> ()",
    "foo(SymBool x=True) -> ()",
    "foo(Any x=None) -> ()",
    "foo(int[] x=1) -> ()",
    "foo(int[] x=None) -> ()",
    "foo(str[] x=['a']) -> ()",
    "foo(Tensor?[] x=[None]) -> ()",
    "foo(int[] x=[1,]) -> ()",
    "foo(int[] x=[1.5]) -> ()",
    "foo(float[] x=[True]) -> ()",
    "foo(int[1] dim=None) -> ()",
    "foo(int x=inf) -> ()",
    "foo(int x=preserve_format) -> ()",
    "foo(float x=--1) -> ()",
    "foo(int x=$) -> ()",
    'foo(str x="abc) -> ()',
    'foo(str x="\\q") -> ()',
    'foo(str x="\\x41") -> ()',
    "foo(Tensor def) -> ()",
    "foo(int in) -> ()",
    "aten::foo.None(Tensor x) -> ()",
    "aten::True(Tensor x) -> ()",
    "foo.(Tensor x) -> ()",
    "::foo(Tensor x) -> ()",
    "foo-bar(Tensor x) -> ()",
    "ns::foo::bar(Tensor x) -> ()",
    "foo(Dict(Scalar, t) x) -> ()",
    "foo(Dict(str?, t) x) -> ()",
    "foo(Tensor x) -> (Tensor x, *, Tensor y)",
    "foo(Tensor x) -> (Tensor x=None)",
    "foo(Tensor x) -> (,)",
    "foo(Tensor x) -> (int, str)?",
    "foo(Tensor x=None, Tensor y) -> ()",
    "foo(int[] a=[], int b) -> ()",
    "foo(Tensor x,\n    Tensoor y) -> Tensor",
]


# torch marks the character after the identifier for these; we mark the identifier.
TORCH_CARET_ELSEWHERE = {"foo(int x=inf) -> ()", "foo(int x=preserve_format) -> ()"}


def _caret_column(message: str):
    """Column of the ``~~~ <--- HERE`` marker in an error message, if any."""
    for line in message.splitlines():
        if line.endswith("<--- HERE"):
            return len(line) - len(line.lstrip(" "))
    return None


@pytest.mark.parametrize("text", BAD_SCHEMAS)
def test_bad_schema_raises_with_position(text):
    with pytest.raises(Exception) as torch_error:
        torch._C.parse_schema(text)
    with pytest.raises(RuntimeError) as our_error:
        parse_schema(text)
    message = str(our_error.value)
    torch_column = _caret_column(str(torch_error.value))
    if isinstance(our_error.value, SchemaParseError):
        # The message quotes the offending line and marks the column.
        column = _caret_column(message)
        assert column == our_error.value.column
        assert "<--- HERE" in message
        assert text.splitlines()[our_error.value.line] in message
        if torch_column is not None and text not in TORCH_CARET_ELSEWHERE:
            assert column == torch_column, (message, str(torch_error.value))
    else:
        assert "Non-default positional argument follows default argument" in message


@pytest.mark.parametrize("text,expected", [
    ("foo(Tensor x, ) -> Tensor",
     "expected ident but found ')' here:\nfoo(Tensor x, ) -> Tensor\n              ~ <--- HERE\n"),
    ("foo(Tensor x -> Tensor",
     "expected ) but found 'arrow' here:\nfoo(Tensor x -> Tensor\n             ~~ <--- HERE\n"),
    ("foo(Tensor x=1) -> ()",
     "expected None but found 'number' here:\nfoo(Tensor x=1) -> ()\n             ~ <--- HERE\n"),
])
def test_error_messages_read_like_torch(text, expected):
    with pytest.raises(RuntimeError) as torch_error:
        torch._C.parse_schema(text)
    assert str(torch_error.value) == expected
    with pytest.raises(SchemaParseError) as our_error:
        parse_schema(text)
    assert str(our_error.value) == expected


def test_unknown_type_error_names_the_type_and_column():
    with pytest.raises(SchemaParseError) as info:
        parse_schema("foo(Tensoor x) -> Tensor")
    err = info.value
    assert "unknown type specifier 'Tensoor'" in str(err)
    assert (err.line, err.column, err.offset) == (0, 4, 4)
    assert "    ~~~~~~~ <--- HERE" in str(err)


def test_position_on_later_line():
    with pytest.raises(SchemaParseError) as info:
        parse_schema("foo(Tensor x,\n    Tensoor y) -> Tensor")
    assert (info.value.line, info.value.column) == (1, 4)


# --------------------------------------------------------------------------
# Property tests: generated schemas and corrupted real schemas
# --------------------------------------------------------------------------

_BASES = ["Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
          "Device", "MemoryFormat", "Generator", "Storage", "Stream", "Any", "t", "SymBool",
          "DeviceIndex", "QScheme", "Dict(str, t)", "(int, Tensor)"]
_SUFFIXES = ["", "", "?", "[]", "[2]", "[1]?", "?[]", "[]?", "[][]"]
_ALIASES = ["", "", "", "(a)", "(a!)", "(b -> *)", "(a|b)", "(c!)", "!"]
_DEFAULTS = ["", "", "", "=None", "=0", "=-1", "=1.5", "=1e-05", "=True", "=False", "=[]",
             "=[0, 1]", "=[1,1]", "=[True]", '="none"', "='x'", "=contiguous_format", "=float32",
             "=Mean", "=long", "=2j"]
_NAMES = ["self", "other", "x", "dim", "out", "values", "alpha", "input"]

argument_text = st.builds(
    lambda base, alias, suffix, name, default: f"{base}{alias}{suffix} {name}{default}",
    st.sampled_from(_BASES), st.sampled_from(_ALIASES), st.sampled_from(_SUFFIXES),
    st.sampled_from(_NAMES), st.sampled_from(_DEFAULTS),
)
return_text = st.builds(
    lambda base, alias, suffix, name: f"{base}{alias}{suffix}{name}",
    st.sampled_from(_BASES), st.sampled_from(_ALIASES), st.sampled_from(_SUFFIXES),
    st.sampled_from(["", "", " values", " indices"]),
)


@st.composite
def schema_text(draw):
    name = draw(st.sampled_from(["foo", "aten::foo", "aten::foo_.Tensor", "ns::bar.out", "aten::__iadd__"]))
    args = draw(st.lists(argument_text, max_size=5))
    if args and draw(st.booleans()):
        args.insert(draw(st.integers(0, len(args))), "*")
    if draw(st.integers(0, 9)) == 0:
        args.append("...")
    rets = draw(st.lists(return_text, max_size=3))
    if len(rets) == 1 and draw(st.booleans()):
        returns = rets[0]
    else:
        returns = "(" + ", ".join(rets) + ")"
    return f"{name}({', '.join(args)}) -> {returns}"


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(schema_text())
def test_generated_schemas_agree_with_torch(text):
    outcome_agrees(text)


@settings(max_examples=300, deadline=None, database=None)
@given(st.sampled_from(ALL_SCHEMAS), st.integers(0, 10_000), st.sampled_from(
    ["", "(", ")", "[", "]", "?", "!", "|", "*", ",", "=", "-", ">", ".", ":", " ", "a", "T",
     "1", '"', "j", "_"]))
def test_corrupted_real_schemas_agree_with_torch(text, index, insert):
    """Delete one character (or insert one) and check both parsers still agree."""
    i = index % (len(text) + 1)
    corrupted = text[:i] + insert + text[i + 1:] if insert == "" else text[:i] + insert + text[i:]
    outcome_agrees(corrupted)


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------

def test_parsing_is_fast_enough():
    texts = ALL_SCHEMAS[:1500]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for text in texts:
            parse_schema(text)
        best = min(best, (time.process_time() - start) / len(texts))
    # Typically ~35 µs per schema; the bound leaves room for a loaded machine.
    assert best < 150e-6, f"{best * 1e6:.1f} µs per schema"
