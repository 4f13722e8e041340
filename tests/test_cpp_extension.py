"""``torch.utils.cpp_extension``: C++ sources built with the system compiler and
called with glasstorch tensors.

Building a real PyTorch extension takes ~45 s here, so the oracle is torch
computing the same thing in Python; the C++ sources are what one would hand to
torch's ``load_inline`` unchanged.  Where torch's behaviour can only be seen by
building against it (pybind11's TypeError text), the expected text was recorded
from torch 2.13.  Few modules are built (a module-scope fixture shares one) to
keep the file fast.
"""
from __future__ import annotations

import logging
import os
import shutil

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import glasstorch as gt
from glasstorch._core.allocator import cpu_allocator
from glasstorch.library import Library
from glasstorch.utils import cpp_extension

from .helpers import assert_same, to_numpy

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                reason="needs a C++ compiler")

KERNELS = r"""
#include <tuple>

torch::Tensor scale(torch::Tensor x, double s) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "scale: x must be float32, got ",
              x.scalar_type());
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] * static_cast<float>(s);
  return y;
}

// Row sums of a 2-d tensor read through its strides (any layout, no copy).
torch::Tensor row_sums(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "row_sums: expected a 2-d tensor, got ", x.dim(), " dims");
  auto out = torch::empty({x.size(0)}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "row_sums", [&] {
    const scalar_t* p = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.size(0); ++i) {
      scalar_t acc = 0;
      for (int64_t j = 0; j < x.size(1); ++j) acc += p[i * x.stride(0) + j * x.stride(1)];
      o[i] = acc;
    }
  });
  return out;
}

torch::Tensor add_i64(torch::Tensor a, torch::Tensor b, int64_t k) {
  TORCH_CHECK(a.scalar_type() == torch::kInt64 && b.scalar_type() == torch::kInt64,
              "add_i64 expects int64 tensors");
  TORCH_CHECK(a.sizes() == b.sizes(), "add_i64: sizes differ: ", a.sizes(), " vs ", b.sizes());
  auto ac = a.contiguous(), bc = b.contiguous();
  auto out = torch::empty_like(ac);
  const int64_t* pa = ac.data_ptr<int64_t>();
  const int64_t* pb = bc.data_ptr<int64_t>();
  int64_t* po = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < ac.numel(); ++i) po[i] = pa[i] + pb[i] + k;
  return out;
}

// In place, through the caller's strides and storage offset.
void fill_index_(torch::Tensor x) {
  auto a = x.accessor<float, 2>();
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < a.size(1); ++j) a[i][j] = static_cast<float>(100 * i + j);
}

std::tuple<std::vector<int64_t>, std::vector<int64_t>, bool, int64_t> layout(torch::Tensor x) {
  return {x.sizes().vec(), x.strides().vec(), x.is_contiguous(), x.numel()};
}

std::vector<torch::Tensor> pair(torch::Tensor x) { return {x, torch::zeros_like(x)}; }

torch::Tensor sin_add(torch::Tensor x, torch::Tensor y) { return x.sin() + y.sin(); }

torch::Tensor negative_size() { return torch::empty({-1}); }

double first(torch::Tensor x) { return x.data_ptr<float>()[0]; }

torch::Tensor twice(const torch::Tensor& x) { return x.mul(2.0); }

TORCH_LIBRARY(gt_cpp_ext_test, m) {
  m.def("scale(Tensor x, float s) -> Tensor");
  m.def("twice", &twice);
}

TORCH_LIBRARY_IMPL(gt_cpp_ext_test, CPU, m) {
  m.impl("scale", &scale);
}
"""
FUNCTIONS = {"scale": "scale(x, s) = x * s", "row_sums": "row_sums", "add_i64": "add_i64",
             "fill_index_": "fill_index_", "layout": "layout", "pair": "pair",
             "sin_add": "sin_add", "negative_size": "negative_size", "first": "first"}

FLOAT_PARAM = "typing.SupportsFloat | typing.SupportsIndex"   # pybind11's names (torch 2.13)
INT_PARAM = "typing.SupportsInt | typing.SupportsIndex"


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    return cpp_extension.load_inline("gt_test_kernels", KERNELS, functions=FUNCTIONS,
                                     build_directory=str(tmp_path_factory.mktemp("kernels")))


def both(data, dtype="float32"):
    """The same values as a glasstorch and a torch tensor."""
    array = np.asarray(data, dtype=dtype)
    return gt.tensor(array), torch.tensor(array)


# -- values ------------------------------------------------------------------------------

def test_scale_matches_torch_and_glasstorch(ext):
    ours, theirs = both(np.arange(12).reshape(3, 4) / 7)
    assert_same(ext.scale(ours, 2.5), theirs * 2.5)
    assert_same(ext.scale(ours, 2.5), ours * 2.5)
    assert_same(ext.scale(ours.t(), 3), theirs.t().contiguous() * 3)   # non-contiguous input


@given(rows=st.integers(1, 5), cols=st.integers(1, 5), transpose=st.booleans(),
       step=st.integers(1, 2), dtype=st.sampled_from(["float32", "float64"]))
def test_row_sums_reads_strides(ext, rows, cols, transpose, step, dtype):
    data = np.random.default_rng(rows * 10 + cols).standard_normal((rows * step, cols + 1))
    ours, theirs = both(data, dtype)

    def view(t):   # every other row, all but the first column (a storage offset), maybe .t()
        t = t[::step, 1:]
        return t.t() if transpose else t

    ours, theirs = view(ours), view(theirs)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert_same(ext.row_sums(ours), theirs.sum(1), atol=1e-5)


def test_int64_kernel(ext):
    (a, ta), (b, tb) = both([[1, -2, 3], [4, 5, 2**40]], "int64"), both([[7, 8, 9]] * 2, "int64")
    assert_same(ext.add_i64(a, b, -3), ta + tb - 3)
    assert_same(ext.add_i64(a.t(), b.t(), 1), (ta.t() + tb.t() + 1).contiguous())


def test_new_tensors_come_from_glasstorch(ext):
    x = gt.ones(4)
    before = cpu_allocator.stats.allocations
    y = ext.scale(x, 2.0)
    assert type(y) is gt.Tensor and y.device.type == "cpu" and not y.requires_grad
    assert cpu_allocator.stats.allocations == before + 1


def test_in_place_write_through_a_view_is_visible(ext):
    ours, theirs = gt.zeros(4, 6), torch.zeros(4, 6)
    ext.fill_index_(ours[1:, 2:].t())                   # storage offset and strides applied
    view = theirs[1:, 2:].t()
    for i in range(view.shape[0]):
        for j in range(view.shape[1]):
            view[i, j] = 100 * i + j
    assert_same(ours, theirs)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, 3), lambda lib: lib.ones(2, 3).t(),
                                  lambda lib: lib.ones(4, 5)[1:, ::2], lambda lib: lib.ones(())])
def test_sizes_and_strides_are_torchs(ext, make):
    theirs = make(torch)
    assert ext.layout(make(gt)) == (list(theirs.shape), list(theirs.stride()),
                                    theirs.is_contiguous(), theirs.numel())


def test_returned_tensors_keep_identity(ext):
    x = gt.arange(3.0)
    same, zeros = ext.pair(x)
    assert same is x
    assert_same(zeros, gt.zeros(3))


def test_ops_called_from_cpp_go_through_the_dispatcher(ext):
    (x, tx), (y, ty) = both([0.5, 1.0, 2.0]), both([3.0, -1.0, 0.0])
    with gt._dispatcher.dispatch_trace() as trace:
        result = ext.sin_add(x, y)
    assert_same(result, tx.sin() + ty.sin())
    assert "aten::sin" in str(trace) and "aten::add.Tensor" in str(trace)


# -- errors ------------------------------------------------------------------------------

def test_torch_check_message_is_a_runtime_error(ext):
    with pytest.raises(RuntimeError, match="^scale: x must be float32, got Double$"):
        ext.scale(gt.ones(2, dtype=gt.float64), 2.0)
    with pytest.raises(RuntimeError, match=r"^add_i64: sizes differ: \[2\] vs \[3\]$"):
        ext.add_i64(gt.ones(2, dtype=gt.int64), gt.ones(3, dtype=gt.int64), 0)
    with pytest.raises(NotImplementedError, match="^\"row_sums\" not implemented for 'Long'$"):
        ext.row_sums(gt.ones(2, 2, dtype=gt.int64))


def test_data_ptr_checks_the_dtype(ext):
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Long$"):
        ext.first(gt.ones(2, dtype=gt.int64))


def test_meta_tensor_has_no_data(ext):
    with pytest.raises(RuntimeError, match="^The tensor has a non-zero number of elements, but "
                                           "its data is not allocated yet"):
        ext.first(gt.ones(2, device="meta"))


def test_glasstorch_errors_inside_cpp_propagate(ext):
    with pytest.raises(RuntimeError) as theirs:
        torch.empty([-1])
    with pytest.raises(RuntimeError) as ours:
        ext.negative_size()                 # torch::empty({-1}) calls back into glasstorch
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def test_wrong_arguments_raise_pybind11s_type_error(ext):
    expected = ("scale(): incompatible function arguments. The following argument types are "
                f"supported:\n    1. (arg0: torch.Tensor, arg1: {FLOAT_PARAM}) -> torch.Tensor"
                "\n\nInvoked with: {}")
    x = gt.ones(2)
    with pytest.raises(TypeError) as info:
        ext.scale(x)
    assert str(info.value) == expected.format(repr(x))
    with pytest.raises(TypeError) as info:
        ext.scale(x, "a")
    assert str(info.value) == expected.format(f"{x!r}, 'a'")
    with pytest.raises(TypeError) as info:
        ext.scale(x=x, s=2.0)
    assert str(info.value) == expected.format(f"kwargs: x={x!r}, s=2.0")
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.add_i64(gt.ones(1, dtype=gt.int64), gt.ones(1, dtype=gt.int64), 1.5)  # float for int


def test_docstring_is_pybind11s(ext):
    assert ext.__name__ == "gt_test_kernels"
    assert ext.scale.__doc__ == (f"scale(arg0: torch.Tensor, arg1: {FLOAT_PARAM}) -> "
                                 "torch.Tensor\n\nscale(x, s) = x * s\n")
    assert ext.add_i64.__doc__.startswith(f"add_i64(arg0: torch.Tensor, arg1: torch.Tensor, "
                                          f"arg2: {INT_PARAM}) -> torch.Tensor")
    assert "-> tuple[list[int], list[int], bool, int]" in ext.layout.__doc__


BINDINGS = r"""
torch::Tensor shift(torch::Tensor x, double by) { return x.add(by); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "pybind11-style bindings";
  m.def("shift", &shift, "x + by", py::arg("x"), py::arg("by") = 1.5);
  m.def("half", [](int64_t k) { return k / 2; });
  m.def("half", [](double k) { return k / 2; });
  m.def("check", [](int64_t k) { TORCH_CHECK_VALUE(k >= 0, "k must be >= 0, got ", k); });
}
"""


@pytest.fixture(scope="module")
def bound(tmp_path_factory):
    return cpp_extension.load_inline("gt_test_bindings", BINDINGS,
                                     build_directory=str(tmp_path_factory.mktemp("bindings")))


def test_pybind11_module_keywords_and_defaults(bound):
    ours, theirs = both([1.0, 2.0])
    assert bound.__doc__ == "pybind11-style bindings"
    assert_same(bound.shift(ours), theirs + 1.5)
    assert_same(bound.shift(by=-1, x=ours), theirs - 1)
    assert bound.shift.__doc__ == (f"shift(x: torch.Tensor, by: {FLOAT_PARAM} = 1.5) -> "
                                   "torch.Tensor\n\nx + by\n")
    with pytest.raises(TypeError, match=r"Invoked with: tensor\(\[1\., 2\.\]\); kwargs: y=2"):
        bound.shift(ours, y=2)


def test_pybind11_overloads_exact_match_first(bound):
    assert (bound.half(3), bound.half(3.0)) == (1, 1.5)
    assert bound.half.__doc__.startswith("half(*args, **kwargs)\nOverloaded function.\n\n1. ")
    with pytest.raises(ValueError, match="^k must be >= 0, got -1$"):
        bound.check(-1)


# -- the dispatcher ----------------------------------------------------------------------

def test_registered_as_the_cpu_kernel_of_an_operator(ext):
    lib = Library("gt_cpp_ext_lib", "DEF")
    try:
        lib.define("scale(Tensor x, float s) -> Tensor")
        lib.impl("scale", ext.scale, "CPU")
        ours, theirs = both([1.0, -2.0, 3.5])
        assert_same(gt.ops.gt_cpp_ext_lib.scale(ours, 2.0), theirs * 2.0)
        assert_same(gt.ops.gt_cpp_ext_lib.scale.default(ours, 0.5), theirs * 0.5)
    finally:
        lib._destroy()


def test_registered_through_custom_op(ext):
    @gt.library.custom_op("gt_cpp_ext_custom::scale", mutates_args=())
    def scale(x: gt.Tensor, s: float) -> gt.Tensor:
        raise AssertionError("the C++ kernel should run on CPU")

    scale.register_kernel("cpu")(ext.scale)
    ours, theirs = both([1.0, 2.0])
    assert_same(gt.ops.gt_cpp_ext_custom.scale(ours, 3.0), theirs * 3.0)


def test_torch_library_blocks_register_operators(ext):
    ours, theirs = both([1.0, 2.0, 4.0])
    assert_same(gt.ops.gt_cpp_ext_test.scale(ours, 1.5), theirs * 1.5)
    assert_same(gt.ops.gt_cpp_ext_test.twice(ours), theirs * 2)
    assert str(gt.ops.gt_cpp_ext_test.twice.default._schema) == \
        "gt_cpp_ext_test::twice(Tensor _0) -> Tensor"     # the schema torch infers from C++


# -- building ----------------------------------------------------------------------------

def test_unchanged_sources_are_not_rebuilt_and_changed_ones_are(tmp_path, capsys, caplog,
                                                                 monkeypatch):
    source = "int64_t answer() { return %d; }"
    build = str(tmp_path)

    def load(value, **options):
        return cpp_extension.load_inline("gt_test_cached", source % value, functions=["answer"],
                                         build_directory=build, **options)

    first = load(41, verbose=True)
    assert first.answer() == 41 and "gt_test_cached.so" in capsys.readouterr().out
    library = os.path.join(build, "gt_test_cached.so")
    built = os.stat(library).st_mtime_ns
    with caplog.at_level(logging.DEBUG, logger="glasstorch.utils.cpp_extension"):
        assert load(41, verbose=True) is first
    assert "No modifications detected" in caplog.text and capsys.readouterr().out == ""
    # A new process (a fresh versioner) finds the library up to date on disk.
    monkeypatch.setattr(cpp_extension, "_versioner", cpp_extension._ExtensionVersioner())
    assert load(41).answer() == 41 and os.stat(library).st_mtime_ns == built
    changed = load(42)
    assert changed.__name__ == "gt_test_cached_v1" and changed.answer() == 42
    assert first.answer() == 41


def test_compile_errors_carry_the_compilers_message(tmp_path):
    with pytest.raises(RuntimeError) as info:
        cpp_extension.load_inline("gt_test_broken", "int broken() { return 1 }",
                                  functions=["broken"], build_directory=str(tmp_path))
    message = str(info.value)
    assert message.startswith("Error building extension 'gt_test_broken': ")
    assert "main.cpp:2:" in message and "error: expected ';'" in message.replace("‘", "'") \
        .replace("’", "'")


def test_cuda_sources_are_refused(tmp_path):
    with pytest.raises(RuntimeError, match="^Error building extension 'gt_test_cuda': .*CPU only"):
        cpp_extension.load_inline("gt_test_cuda", "int f();", cuda_sources="__global__ void k() {}",
                                  functions=["f"], build_directory=str(tmp_path))
    assert not os.path.exists(os.path.join(tmp_path, "main.cpp"))


SEED_BINDING = r"""#include <torch/extension.h>
torch::Tensor scale_cuda(torch::Tensor x, double s);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("scale", &scale_cuda, "scale(x, s) = x * s on CUDA");
}
"""
# The seed's kernel.cu, as the CPU loop it launches on the GPU.
SEED_KERNEL = r"""#include <torch/extension.h>
static void scale_kernel(const float* in, float* out, float s, int N) {
  for (int i = 0; i < N; ++i) out[i] = in[i] * s;
}
torch::Tensor scale_cuda(torch::Tensor x, double s) {
  TORCH_CHECK(x.is_cpu(), "x must be cpu");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  auto y = torch::empty_like(x);
  int N = x.numel();
  scale_kernel(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(s), N);
  return y;
}
"""


def test_seed_pybind11_module_through_load(tmp_path):
    (tmp_path / "binding.cpp").write_text(SEED_BINDING)
    (tmp_path / "kernel.cpp").write_text(SEED_KERNEL)
    my_ext = cpp_extension.load(name="my_ext", sources=[str(tmp_path / "binding.cpp"),
                                                        str(tmp_path / "kernel.cpp")],
                                build_directory=str(tmp_path / "build"))
    ours, theirs = both(np.linspace(-1, 1, 7))
    assert_same(my_ext.scale(ours, 3.0), theirs * 3.0)
    assert my_ext.scale.__doc__.endswith("\n\nscale(x, s) = x * s on CUDA\n")
    with pytest.raises(RuntimeError, match="^x must be float32$"):
        my_ext.scale(gt.ones(3, dtype=gt.float64), 3.0)
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))   # input untouched


def test_include_paths_hold_the_extension_header():
    (path,) = cpp_extension.include_paths()
    assert os.path.exists(os.path.join(path, "torch", "extension.h"))


def test_ops_load_library_registers_torch_library_operators(tmp_path):
    """``torch.ops.load_library(path)`` on a library built with
    ``is_python_module=False``: its TORCH_LIBRARY operators dispatch like built-ins."""
    source = """
#include <torch/extension.h>
torch::Tensor triple(torch::Tensor x) { return x.mul(3.0); }
TORCH_LIBRARY(gt_load_library_test, m) { m.def("triple(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(gt_load_library_test, CPU, m) { m.impl("triple", &triple); }
"""
    path = cpp_extension.load_inline("gt_load_library", source, is_python_module=False,
                                     build_directory=str(tmp_path))
    gt.ops.load_library(path)
    assert os.path.realpath(path) in gt.ops.loaded_libraries
    ours, theirs = both([1.0, -2.0, 0.5])
    assert_same(gt.ops.gt_load_library_test.triple(ours), theirs * 3)
