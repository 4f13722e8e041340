// torch/extension.h for glasstorch: the small C++ surface simple extensions use.
//
// PyTorch's header brings in ATen, the autograd API and pybind11.  This one
// gives ordinary extension sources the same spelling over glasstorch's C ABI
// (glasstorch/extension_abi.h), so they compile unchanged with `c++ -std=c++17`
// in about a second.  What is not a template is defined once, in
// glasstorch/csrc/extension_runtime.cpp (our libtorch: compiled once, linked into
// every extension).  Supported:
//
//   at::Tensor / torch::Tensor     data_ptr<T>(), const_data_ptr<T>(), mutable_data_ptr<T>(),
//                                  numel(), dim(), size(i), sizes(), stride(i), strides(),
//                                  is_contiguous(), scalar_type(), dtype(), element_size(),
//                                  nbytes(), device(), is_cpu(), is_cuda(), is_meta(),
//                                  defined(), options(), accessor<T, N>(), item<T>(),
//                                  and, through glasstorch's ops (each one a dispatcher
//                                  call): contiguous(), clone(), to(dtype), copy_, fill_,
//                                  zero_, add/sub/mul/div (+ - * /), add_, mul_, neg,
//                                  sum, matmul, reshape, view, transpose, t, sin, cos,
//                                  exp, log, sqrt, tanh, sigmoid, relu, abs
//   factories                      torch::empty / zeros / ones (sizes, options),
//                                  torch::full (sizes, value, options),
//                                  torch::empty_like / zeros_like / ones_like (x[, options])
//   dtypes                         torch::kFloat32 (kFloat), kFloat64 (kDouble), kInt64 (kLong),
//                                  kInt32 (kInt), kInt16, kInt8, kUInt8 (kByte), kBool, kHalf,
//                                  kBFloat16; c10::ScalarType prints as "Float" ...
//   errors                         TORCH_CHECK (RuntimeError), TORCH_CHECK_VALUE, _TYPE, _INDEX,
//                                  _NOT_IMPLEMENTED, TORCH_INTERNAL_ASSERT, TORCH_WARN
//   dispatch                       AT_DISPATCH_FLOATING_TYPES, AT_DISPATCH_INTEGRAL_TYPES,
//                                  AT_DISPATCH_ALL_TYPES
//   bindings                       PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(name, fn,
//                                  "doc", py::arg("x"), py::arg("s") = 2.0); m.doc() = ...; }
//                                  TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL
//                                  with m.def(schema), m.def(name_or_schema, fn), m.impl(name, fn)
//   bound parameter types          Tensor (by value or reference), double, float, int64_t, int,
//                                  bool, std::string, std::vector<...> of those, IntArrayRef,
//                                  std::optional<...> / c10::optional<...>
//   bound return types             void, Tensor, double, float, integers, bool, std::string,
//                                  std::vector<...>, std::tuple<...>
//
// Not supported: autograd in C++, views created in C++ beyond reshape/view/transpose,
// Half/BFloat16/complex element access, CUDA.  A tensor made in C++ lives until the
// extension call returns (or as the Python object it returns).  Tensors can be made
// only on the thread glasstorch called the extension from.
//
// Include guards as well as #pragma once: with the precompiled header, a second
// include in the same file (load_inline adds one) must be a no-op.
#pragma once
#ifndef GLASSTORCH_TORCH_EXTENSION_H
#define GLASSTORCH_TORCH_EXTENSION_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "glasstorch/extension_abi.h"

// Everything below is private to the extension's library: with default
// visibility, function-local statics (the registry) would be merged across all
// loaded extensions as GNU unique symbols.  Only the gt_ext_* exports are public.
#pragma GCC visibility push(hidden)

// ---------------------------------------------------------------------------
// c10: scalar types, devices, ArrayRef, errors
// ---------------------------------------------------------------------------
namespace c10 {

enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11, BFloat16 = 15,
  Undefined = 44,
};

inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::ComplexHalf: return "ComplexHalf";
    case ScalarType::ComplexFloat: return "ComplexFloat";
    case ScalarType::ComplexDouble: return "ComplexDouble";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    default: return "UNKNOWN_SCALAR";
  }
}

inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

inline size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::ComplexHalf: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
    case ScalarType::ComplexDouble: return 16;
    default: return 0;
  }
}

// The ScalarType of a C++ element type (data_ptr<T>'s check).
template <class T> struct CppTypeToScalarType;
#define GT_SCALAR_TYPE_OF(cpp, st) \
  template <>                                 \
  struct CppTypeToScalarType<cpp> {           \
    static constexpr ScalarType value = ScalarType::st; \
  };
GT_SCALAR_TYPE_OF(uint8_t, Byte)
GT_SCALAR_TYPE_OF(int8_t, Char)
GT_SCALAR_TYPE_OF(int16_t, Short)
GT_SCALAR_TYPE_OF(int32_t, Int)
GT_SCALAR_TYPE_OF(int64_t, Long)
GT_SCALAR_TYPE_OF(float, Float)
GT_SCALAR_TYPE_OF(double, Double)
GT_SCALAR_TYPE_OF(bool, Bool)
#undef GT_SCALAR_TYPE_OF

enum class DeviceType : int8_t {
  CPU = GT_DEVICE_CPU, CUDA = GT_DEVICE_CUDA, Meta = GT_DEVICE_META
};

class Device {
 public:
  Device(DeviceType type, int8_t index = -1) : type_(type), index_(index) {}
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const {
    std::string name = is_cpu() ? "cpu" : is_cuda() ? "cuda" : "meta";
    return has_index() ? name + ":" + std::to_string(index_) : name;
  }

 private:
  DeviceType type_;
  int8_t index_;
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

// A non-owning view of a contiguous run of T (sizes, strides, shapes).
template <class T>
class ArrayRef {
 public:
  ArrayRef() : data_(nullptr), size_(0) {}
  ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  ArrayRef(const T& one) : data_(&one), size_(1) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  // Like c10's: valid for the full expression, e.g. torch::empty({2, 3}).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }
  bool operator==(ArrayRef other) const { return equals(other); }
  bool operator!=(ArrayRef other) const { return !equals(other); }

 private:
  const T* data_;
  size_t size_;
};

using IntArrayRef = ArrayRef<int64_t>;

template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}

template <class T> using optional = std::optional<T>;
using std::nullopt;
using std::make_optional;

// Errors: the Python exception each one becomes is its status (extension_abi.h).
class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }
  virtual int32_t status() const { return GT_ERROR_RUNTIME; }

 private:
  std::string msg_;
};

#define GT_ERROR_CLASS(name, code)                         \
  class name : public Error {                              \
   public:                                                 \
    using Error::Error;                                    \
    int32_t status() const override { return code; }       \
  };
GT_ERROR_CLASS(ValueError, GT_ERROR_VALUE)
GT_ERROR_CLASS(TypeError, GT_ERROR_TYPE)
GT_ERROR_CLASS(IndexError, GT_ERROR_INDEX)
GT_ERROR_CLASS(NotImplementedError, GT_ERROR_NOT_IMPLEMENTED)
#undef GT_ERROR_CLASS

namespace detail {
inline void stream_all(std::ostringstream&) {}
template <class T, class... Rest>
void stream_all(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  stream_all(os, rest...);
}
}  // namespace detail

// c10::str: the arguments streamed one after another (never inlined: it only
// builds error messages, and one copy per argument-type list keeps builds fast).
template <class... Args>
__attribute__((noinline)) std::string str(const Args&... args) {
  std::ostringstream os;
  detail::stream_all(os, args...);
  return os.str();
}

namespace detail {
template <class E>
[[noreturn]] void check_failed(const char* condition, const std::string& msg) {
  if (msg.empty()) {
    throw E(str("Expected ", condition, " to be true, but got false.  (Could this error message "
                "be improved?  If so, please report an enhancement request to PyTorch.)"));
  }
  throw E(msg);
}
}  // namespace detail

}  // namespace c10

#define GT_CHECK_IMPL(error, cond, ...)                                                   \
  do {                                                                                    \
    if (!(cond)) ::c10::detail::check_failed<error>(#cond, ::c10::str(__VA_ARGS__));      \
  } while (0)
#define TORCH_CHECK(cond, ...) GT_CHECK_IMPL(::c10::Error, cond, ##__VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) GT_CHECK_IMPL(::c10::ValueError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) GT_CHECK_IMPL(::c10::TypeError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) GT_CHECK_IMPL(::c10::IndexError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) \
  GT_CHECK_IMPL(::c10::NotImplementedError, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                  \
  do {                                                                                    \
    if (!(cond))                                                                          \
      throw ::c10::Error(::c10::str(#cond, " INTERNAL ASSERT FAILED at \"", __FILE__,     \
                                    "\":", __LINE__, ", please report a bug to PyTorch. ",\
                                    ##__VA_ARGS__));                                      \
  } while (0)
#define TORCH_WARN(...)                                                                   \
  ::gt::detail::warn(::c10::str(__VA_ARGS__, " (Triggered internally at ", __FILE__, ":", \
                                __LINE__, ".)"))

// ---------------------------------------------------------------------------
// gt::detail: the host callback (glasstorch's side of the ABI)
// ---------------------------------------------------------------------------
namespace at { class Tensor; }

namespace gt {
namespace detail {

extern gt_host_fn host;  // installed by the loader (gt_ext_set_host)

// glasstorch raised inside a host call; the loader re-raises its Python exception.
struct HostError : std::exception {
  const char* what() const noexcept override { return "glasstorch raised an exception"; }
};

inline gt_value none_value() { gt_value v; v.tag = GT_NONE; v.u.i = 0; return v; }
inline gt_value int_value(int64_t i) { gt_value v; v.tag = GT_INT; v.u.i = i; return v; }
inline gt_value double_value(double d) { gt_value v; v.tag = GT_DOUBLE; v.u.d = d; return v; }
inline gt_value bool_value(bool b) { gt_value v; v.tag = GT_BOOL; v.u.b = b; return v; }
inline gt_value string_value(const char* s) { gt_value v; v.tag = GT_STRING; v.u.s = s; return v; }
inline gt_value list_value(const std::vector<gt_value>& items) {
  gt_value v;
  v.tag = GT_LIST;
  v.u.list.items = items.data();
  v.u.list.size = static_cast<int64_t>(items.size());
  return v;
}

// Ask glasstorch to run `op` (see extension_abi.h); throws HostError if it raised.
gt_value host_call(const char* op, std::initializer_list<gt_value> args);
void warn(const std::string& msg);

}  // namespace detail
}  // namespace gt

// ---------------------------------------------------------------------------
// at: Tensor, TensorOptions, factories
// ---------------------------------------------------------------------------
namespace at {

using c10::ScalarType;
using c10::Device;
using c10::DeviceType;
using c10::IntArrayRef;
using c10::ArrayRef;
using c10::optional;
using c10::nullopt;

constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char, kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short, kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int, kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long, kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half, kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double, kFloat64 = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA, kMeta = DeviceType::Meta;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(DeviceType device) : device_(Device(device)) {}
  TensorOptions dtype(ScalarType d) const { TensorOptions o = *this; o.dtype_ = d; return o; }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; return o; }
  optional<ScalarType> dtype_opt() const { return dtype_; }
  optional<Device> device_opt() const { return device_; }

  gt_value dtype_value() const {
    return dtype_ ? gt::detail::int_value(static_cast<int64_t>(*dtype_)) : gt::detail::none_value();
  }
  gt_value device_value() const {
    return device_ ? gt::detail::int_value(static_cast<int64_t>(device_->type()))
                   : gt::detail::none_value();
  }

 private:
  optional<ScalarType> dtype_;
  optional<Device> device_;
};

inline TensorOptions dtype(ScalarType d) { return TensorOptions(d); }
inline TensorOptions device(Device d) { return TensorOptions(d); }

template <class T, size_t N>
class TensorAccessor;

class Tensor {
 public:
  Tensor() { std::memset(&impl_, 0, sizeof impl_); impl_.handle = -1; }
  explicit Tensor(const gt_tensor& impl) : impl_(impl) {}

  bool defined() const { return impl_.handle >= 0; }
  const gt_tensor& gt() const { return impl_; }

  int64_t dim() const { return impl_.ndim; }
  int64_t ndimension() const { return impl_.ndim; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t i = 0; i < impl_.ndim; ++i) n *= impl_.sizes[i];
    return n;
  }
  IntArrayRef sizes() const { return IntArrayRef(impl_.sizes, impl_.ndim); }
  IntArrayRef strides() const { return IntArrayRef(impl_.strides, impl_.ndim); }
  int64_t size(int64_t d) const { return impl_.sizes[wrap_dim(d)]; }
  int64_t stride(int64_t d) const { return impl_.strides[wrap_dim(d)]; }
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int64_t i = impl_.ndim - 1; i >= 0; --i) {
      if (impl_.sizes[i] == 0) return true;
      if (impl_.sizes[i] != 1 && impl_.strides[i] != expected) return false;
      expected *= impl_.sizes[i];
    }
    return true;
  }

  ScalarType scalar_type() const { return static_cast<ScalarType>(impl_.dtype); }
  ScalarType dtype() const { return scalar_type(); }
  int64_t element_size() const { return static_cast<int64_t>(c10::elementSize(scalar_type())); }
  size_t nbytes() const { return static_cast<size_t>(numel() * element_size()); }
  Device device() const { return Device(static_cast<DeviceType>(impl_.device)); }
  bool is_cpu() const { return impl_.device == GT_DEVICE_CPU; }
  bool is_cuda() const { return impl_.device == GT_DEVICE_CUDA; }
  bool is_meta() const { return impl_.device == GT_DEVICE_META; }
  TensorOptions options() const { return TensorOptions(scalar_type()).device(device()); }

  void* data_ptr() const {
    check_has_data();
    return impl_.data;
  }
  template <class T>
  T* data_ptr() const {
    constexpr ScalarType expected = c10::CppTypeToScalarType<std::remove_cv_t<T>>::value;
    if (scalar_type() != expected) wrong_scalar_type(expected);
    return static_cast<T*>(data_ptr());
  }
  template <class T>
  const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T>
  T* mutable_data_ptr() const { return data_ptr<T>(); }

  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
    TORCH_CHECK(dim() == static_cast<int64_t>(N), "TensorAccessor expected ", N,
                " dims but tensor has ", dim());
    return TensorAccessor<T, N>(data_ptr<T>(), impl_.sizes, impl_.strides);
  }

  template <class T>
  T item() const {
    TORCH_CHECK(numel() == 1, "a Tensor with ", numel(),
                " elements cannot be converted to Scalar");
    const void* p = data_ptr();
    switch (scalar_type()) {
      case ScalarType::Byte: return static_cast<T>(*static_cast<const uint8_t*>(p));
      case ScalarType::Char: return static_cast<T>(*static_cast<const int8_t*>(p));
      case ScalarType::Short: return static_cast<T>(*static_cast<const int16_t*>(p));
      case ScalarType::Int: return static_cast<T>(*static_cast<const int32_t*>(p));
      case ScalarType::Long: return static_cast<T>(*static_cast<const int64_t*>(p));
      case ScalarType::Float: return static_cast<T>(*static_cast<const float*>(p));
      case ScalarType::Double: return static_cast<T>(*static_cast<const double*>(p));
      case ScalarType::Bool: return static_cast<T>(*static_cast<const bool*>(p));
      default: TORCH_CHECK(false, "item<T>() is not supported for ", scalar_type());
    }
    return T{};
  }

  // Through glasstorch's ops (see the file comment); defined in extension_runtime.cpp.
  Tensor contiguous() const { return is_contiguous() ? *this : op("contiguous", {value()}); }
  Tensor clone() const;
  Tensor to(ScalarType d) const;
  Tensor& copy_(const Tensor& src);
  Tensor& fill_(double v);
  Tensor& zero_();
  Tensor& add_(const Tensor& o);
  Tensor& add_(double o);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(double o);
  Tensor add(const Tensor& o) const;
  Tensor add(double o) const;
  Tensor sub(const Tensor& o) const;
  Tensor sub(double o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(double o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(double o) const;
  Tensor matmul(const Tensor& o) const;
  Tensor sum() const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor view(IntArrayRef shape) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor neg() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor abs() const;

  gt_value value() const {
    gt_value v;
    v.tag = GT_TENSOR;
    v.u.tensor = impl_;
    return v;
  }

  // The tensor glasstorch's `name` op returns for `args`.
  static Tensor op(const char* name, std::initializer_list<gt_value> args);

 private:
  int64_t wrap_dim(int64_t d) const {
    int64_t n = std::max<int64_t>(impl_.ndim, 1);
    if (d < -n || d >= n) dim_out_of_range(d, n);
    return d < 0 ? d + n : d;
  }
  void check_has_data() const {
    if (impl_.data == nullptr && numel() != 0) no_data();
  }
  // The failure paths, out of line.
  [[noreturn]] static void dim_out_of_range(int64_t d, int64_t n);
  [[noreturn]] void wrong_scalar_type(ScalarType expected) const;
  [[noreturn]] void no_data() const;

  gt_tensor impl_;
};

inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor operator+(const Tensor& a, double b) { return a.add(b); }
inline Tensor operator-(const Tensor& a, double b) { return a.sub(b); }
inline Tensor operator*(const Tensor& a, double b) { return a.mul(b); }
inline Tensor operator/(const Tensor& a, double b) { return a.div(b); }
inline Tensor operator*(double a, const Tensor& b) { return b.mul(a); }
inline Tensor operator+(double a, const Tensor& b) { return b.add(a); }
inline Tensor operator-(const Tensor& a) { return a.neg(); }

// Element access by index along each dimension, with the tensor's strides.
template <class T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <class T>
class TensorAccessor<T, 1> {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  T& operator[](int64_t i) const { return data_[strides_[0] * i]; }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

Tensor empty(IntArrayRef sizes, const TensorOptions& options = {});
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
Tensor full(IntArrayRef sizes, double fill_value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& x, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& x, const TensorOptions& options = {});
Tensor ones_like(const Tensor& x, const TensorOptions& options = {});
inline Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
#define GT_UNARY_FUNCTION(name) \
  inline Tensor name(const Tensor& x) { return x.name(); }
GT_UNARY_FUNCTION(neg)
GT_UNARY_FUNCTION(sin)
GT_UNARY_FUNCTION(cos)
GT_UNARY_FUNCTION(exp)
GT_UNARY_FUNCTION(log)
GT_UNARY_FUNCTION(sqrt)
GT_UNARY_FUNCTION(tanh)
GT_UNARY_FUNCTION(sigmoid)
GT_UNARY_FUNCTION(relu)
GT_UNARY_FUNCTION(abs)
#undef GT_UNARY_FUNCTION

}  // namespace at

namespace torch {
using namespace at;  // torch::Tensor, torch::empty, torch::kFloat32 ...
using Dtype = at::ScalarType;
}  // namespace torch

// AT_DISPATCH_*: run the lambda with `scalar_t` bound to the tensor's element type.
#define GT_DISPATCH_CASE(enum_type, cpp_type, ...) \
  case ::at::ScalarType::enum_type: {              \
    using scalar_t = cpp_type;                     \
    return __VA_ARGS__();                          \
  }
#define GT_DISPATCH_FLOATING_CASES(...)           \
  GT_DISPATCH_CASE(Double, double, __VA_ARGS__)   \
  GT_DISPATCH_CASE(Float, float, __VA_ARGS__)
#define GT_DISPATCH_INTEGRAL_CASES(...)           \
  GT_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)    \
  GT_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)     \
  GT_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)     \
  GT_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)    \
  GT_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)
#define GT_DISPATCH_SWITCH(TYPE, NAME, CASES)                                              \
  [&] {                                                                                    \
    const ::at::ScalarType gt_dispatch_type = TYPE;                                        \
    switch (gt_dispatch_type) {                                                            \
      CASES                                                                                \
      default:                                                                             \
        TORCH_CHECK_NOT_IMPLEMENTED(false, '"', NAME, "\" not implemented for '",          \
                                    ::c10::toString(gt_dispatch_type), "'");               \
    }                                                                                      \
  }()
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  GT_DISPATCH_SWITCH(TYPE, NAME, GT_DISPATCH_FLOATING_CASES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  GT_DISPATCH_SWITCH(TYPE, NAME, GT_DISPATCH_INTEGRAL_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                                        \
  GT_DISPATCH_SWITCH(TYPE, NAME, GT_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)             \
                                     GT_DISPATCH_FLOATING_CASES(__VA_ARGS__))

// ---------------------------------------------------------------------------
// Binding: C++ callables as boxed functions over gt_value (pybind11's job in PyTorch)
// ---------------------------------------------------------------------------
namespace gt {
namespace detail {

// Storage for the parts of a result that live outside its gt_value (list items,
// strings): valid until this thread's next call, read by the loader before that.
std::vector<gt_value>& result_list(size_t size);
const char* result_string(const std::string& s);

// Per parameter/return type: its signature code, how to read it from a
// gt_value and how to write it to one.  Codes: T Tensor, d float, l int64,
// i int32, b bool, s str, v void, [X] list of X, ?X optional X, (X,Y) tuple.
template <class T, class = void>
struct Type {
  static_assert(sizeof(T) == 0,
                "glasstorch extensions bind Tensor, double, float, int64_t, int, bool, "
                "std::string, std::vector, std::optional and std::tuple of those");
};

template <>
struct Type<at::Tensor> {
  using Held = at::Tensor;
  static std::string code() { return "T"; }
  static Held read(const gt_value& v) {
    return v.tag == GT_TENSOR ? at::Tensor(v.u.tensor) : at::Tensor();
  }
  static void write(const at::Tensor& t, gt_value* out) { *out = t.value(); }
};

template <class T>
struct Type<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  using Held = T;
  static std::string code() { return "d"; }
  static Held read(const gt_value& v) { return static_cast<T>(v.u.d); }
  static void write(T x, gt_value* out) { *out = double_value(x); }
};

template <>
struct Type<bool> {
  using Held = bool;
  static std::string code() { return "b"; }
  static Held read(const gt_value& v) { return v.u.b != 0; }
  static void write(bool x, gt_value* out) { *out = bool_value(x); }
};

template <class T>
struct Type<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static_assert(std::is_signed_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "bind integers as int64_t or int");
  using Held = T;
  static std::string code() { return sizeof(T) == 8 ? "l" : "i"; }
  static Held read(const gt_value& v) { return static_cast<T>(v.u.i); }
  static void write(T x, gt_value* out) { *out = int_value(x); }
};

template <>
struct Type<std::string> {
  using Held = std::string;
  static std::string code() { return "s"; }
  static Held read(const gt_value& v) { return v.u.s; }
  static void write(const std::string& x, gt_value* out) { *out = string_value(result_string(x)); }
};

template <class T>
struct Type<std::vector<T>> {
  using Held = std::vector<typename Type<T>::Held>;
  static std::string code() { return "[" + Type<T>::code() + "]"; }
  static Held read(const gt_value& v) {
    Held out;
    for (int64_t i = 0; i < v.u.list.size; ++i) out.push_back(Type<T>::read(v.u.list.items[i]));
    return out;
  }
  static void write(const std::vector<T>& xs, gt_value* out) {
    std::vector<gt_value>& items = result_list(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) Type<T>::write(xs[i], &items[i]);
    *out = list_value(items);
  }
};

template <>
struct Type<c10::IntArrayRef> {
  using Held = std::vector<int64_t>;  // owns the values for the call; converts to IntArrayRef
  static std::string code() { return "[l]"; }
  static Held read(const gt_value& v) { return Type<std::vector<int64_t>>::read(v); }
};

template <class T>
struct Type<std::optional<T>> {
  using Held = std::optional<typename Type<T>::Held>;
  static std::string code() { return "?" + Type<T>::code(); }
  static Held read(const gt_value& v) {
    if (v.tag == GT_NONE) return std::nullopt;
    return Type<T>::read(v);
  }
  static void write(const std::optional<T>& x, gt_value* out) {
    if (x) Type<T>::write(*x, out); else *out = none_value();
  }
};

template <class... Ts>
struct Type<std::tuple<Ts...>> {
  static std::string code() {
    std::string inner;
    ((inner += (inner.empty() ? "" : ",") + Type<Ts>::code()), ...);
    return "(" + inner + ")";
  }
  static void write(const std::tuple<Ts...>& xs, gt_value* out) {
    std::vector<gt_value>& items = result_list(sizeof...(Ts));
    write_items(xs, items, std::index_sequence_for<Ts...>{});
    *out = list_value(items);
  }
  template <size_t... I>
  static void write_items(const std::tuple<Ts...>& xs, std::vector<gt_value>& items,
                          std::index_sequence<I...>) {
    (Type<Ts>::write(std::get<I>(xs), &items[I]), ...);
  }
};

template <class T>
using Bare = std::remove_cv_t<std::remove_reference_t<T>>;

// The parameter and return types of a function pointer or (non-generic) lambda.
template <class F>
struct Signature : Signature<decltype(&F::operator())> {};
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
};
template <class R, class... A>
struct Signature<R(A...)> : Signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct Signature<R (C::*)(A...) const> : Signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct Signature<R (C::*)(A...)> : Signature<R (*)(A...)> {};

template <class R>
std::string return_code() {
  if constexpr (std::is_void_v<R>) return "v";
  else return Type<Bare<R>>::code();
}

template <class R, class... A>
std::string signature_code(std::tuple<A...>*) {
  std::string params;
  ((params += (params.empty() ? "" : ",") + Type<Bare<A>>::code()), ...);
  return params + "->" + return_code<R>();
}

// A bound callable, boxed: `call(target, args, result)` unpacks the arguments,
// calls `target` (a copy of the function pointer or lambda) and packs the result.
struct Boxed {
  void (*call)(void* target, const gt_value* args, gt_value* result);
  void* target;
};

template <class F, class R, class... A, size_t... I>
void call_boxed(void* target, const gt_value* args, gt_value* result,
                std::tuple<A...>*, std::index_sequence<I...>) {
  F& f = *static_cast<F*>(target);
  std::tuple<typename Type<Bare<A>>::Held...> held{Type<Bare<A>>::read(args[I])...};
  (void)args;
  if constexpr (std::is_void_v<R>) {
    f(std::get<I>(held)...);
    *result = none_value();
  } else {
    Type<Bare<R>>::write(f(std::get<I>(held)...), result);
  }
}

template <class F>
Boxed box(F f) {
  using S = Signature<F>;
  using Args = typename S::Args;
  auto call = [](void* target, const gt_value* args, gt_value* result) {
    call_boxed<F, typename S::Return>(target, args, result, static_cast<Args*>(nullptr),
                                      std::make_index_sequence<std::tuple_size_v<Args>>{});
  };
  return Boxed{call, new F(f)};  // lives as long as the library
}

template <class F>
std::string signature_of() {
  using S = Signature<std::decay_t<F>>;
  return signature_code<typename S::Return>(static_cast<typename S::Args*>(nullptr));
}

// What the PYBIND11_MODULE / TORCH_LIBRARY bodies declared (gt_binding's owners).
struct Record {
  int32_t kind = GT_BIND_MODULE;
  int32_t function = -1;
  std::string ns, dispatch_key, name, doc, signature;
  std::vector<std::string> arg_names;
  std::vector<gt_value> defaults;
  std::deque<std::string> default_strings;
  std::vector<const char*> arg_name_ptrs;
  gt_binding view{};

  const gt_binding* finish();  // `view`, pointing into this record
};

int register_init(void (*init)());  // a PYBIND11_MODULE / TORCH_LIBRARY body
Record& add_record(int32_t kind, std::string ns, std::string name);
int32_t add_function(Boxed boxed);  // its number for gt_ext_call

template <class F>
void bind_function(Record& r, F&& f) {
  r.signature = signature_of<F>();
  r.function = add_function(box<std::decay_t<F>>(std::forward<F>(f)));
}

}  // namespace detail
}  // namespace gt

// ---------------------------------------------------------------------------
// pybind11 (the subset PYBIND11_MODULE bodies use)
// ---------------------------------------------------------------------------
namespace pybind11 {

struct none {};

struct arg_v {
  const char* name;
  gt_value value;
  std::string text;
};

struct arg {
  explicit arg(const char* n) : name(n) {}
  const char* name;
  template <class T>
  arg_v operator=(const T& value) const {
    namespace d = gt::detail;
    if constexpr (std::is_same_v<T, none>) return {name, d::none_value(), ""};
    else if constexpr (std::is_same_v<T, bool>) return {name, d::bool_value(value), ""};
    else if constexpr (std::is_integral_v<T>) return {name, d::int_value(value), ""};
    else if constexpr (std::is_floating_point_v<T>) return {name, d::double_value(value), ""};
    else return {name, d::string_value(nullptr), std::string(value)};
  }
};

class module_ {
 public:
  explicit module_(const char* name)
      : record_(&gt::detail::add_record(GT_BIND_MODULE, name, name)) {}

  // m.def(name, function, extras...): extras are a docstring and py::arg names
  // (with defaults); others (call guards, return policies) don't apply here.
  template <class F, class... Extra>
  module_& def(const char* name, F&& f, const Extra&... extra) {
    gt::detail::Record& r = gt::detail::add_record(GT_BIND_PYTHON, record_->ns, name);
    gt::detail::bind_function(r, std::forward<F>(f));
    (apply(r, extra), ...);
    return *this;
  }

  // m.doc() = "...": the module's docstring.
  std::string& doc() { return record_->doc; }

 private:
  template <class T>
  static void apply(gt::detail::Record& r, const T& extra) {
    if constexpr (std::is_same_v<T, arg>) {
      r.arg_names.push_back(extra.name);
      r.defaults.push_back(gt_value{GT_MISSING, {}});
    } else if constexpr (std::is_same_v<T, arg_v>) {
      r.arg_names.push_back(extra.name);
      gt_value v = extra.value;
      if (v.tag == GT_STRING) v.u.s = r.default_strings.emplace_back(extra.text).c_str();
      r.defaults.push_back(v);
    } else if constexpr (std::is_convertible_v<const T&, const char*>) {
      r.doc = extra;
    } else if constexpr (std::is_same_v<T, std::string>) {
      r.doc = extra;
    }
  }

  gt::detail::Record* record_;
};

using module = module_;

}  // namespace pybind11

namespace py = pybind11;

namespace torch {
// load_inline's generated bindings wrap each function (error translation is always on here).
template <class F>
F&& wrap_pybind_function(F&& f) { return std::forward<F>(f); }
}  // namespace torch

#define GT_CONCAT_(a, b) a##b
#define GT_CONCAT(a, b) GT_CONCAT_(a, b)

#define PYBIND11_MODULE(name, variable, ...) GT_PYBIND11_MODULE_(name, variable)
#define GT_PYBIND11_MODULE_(name, variable)                                              \
  static void gt_pybind11_init_##name(::pybind11::module_&);                              \
  [[maybe_unused]] static const int gt_pybind11_registered_##name =                      \
      ::gt::detail::register_init([] {                                                    \
        ::pybind11::module_ gt_module(#name);                                            \
        gt_pybind11_init_##name(gt_module);                                               \
      });                                                                                 \
  static void gt_pybind11_init_##name(::pybind11::module_& variable)

// ---------------------------------------------------------------------------
// TORCH_LIBRARY: operators registered with glasstorch's dispatcher
// ---------------------------------------------------------------------------
namespace torch {

class Library {
 public:
  Library(const char* kind, const char* ns, const char* dispatch_key)
      : ns_(ns), key_(dispatch_key) {
    gt::detail::add_record(GT_BIND_LIBRARY, ns, kind).dispatch_key = dispatch_key;
  }
  // m.def("name(Tensor x) -> Tensor"): declare an operator.
  Library& def(const char* schema) {
    gt::detail::add_record(GT_BIND_DEF, ns_, schema);
    return *this;
  }
  // m.def("name" or schema, fn): declare it with fn as its catch-all kernel
  // (the schema is inferred from fn's C++ types when only a name is given).
  template <class F>
  Library& def(const char* name_or_schema, F&& f) {
    gt::detail::bind_function(gt::detail::add_record(GT_BIND_DEF, ns_, name_or_schema),
                              std::forward<F>(f));
    return *this;
  }
  // m.impl("name", fn): fn as the kernel for this block's dispatch key.
  template <class F>
  Library& impl(const char* name, F&& f) {
    gt::detail::Record& r = gt::detail::add_record(GT_BIND_IMPL, ns_, name);
    r.dispatch_key = key_;
    gt::detail::bind_function(r, std::forward<F>(f));
    return *this;
  }

 private:
  std::string ns_, key_;
};

}  // namespace torch

#define TORCH_FN(f) (f)

#define GT_TORCH_LIBRARY_(kind, ns, key, m, uid)                                         \
  static void uid(::torch::Library&);                                                    \
  [[maybe_unused]] static const int GT_CONCAT(uid, _registered) =                        \
      ::gt::detail::register_init([] {                                                   \
        ::torch::Library gt_library(kind, #ns, key);                                     \
        uid(gt_library);                                                                 \
      });                                                                                \
  static void uid(::torch::Library& m)
#define TORCH_LIBRARY(ns, m) GT_TORCH_LIBRARY_("DEF", ns, "", m, gt_torch_library_##ns)
#define TORCH_LIBRARY_FRAGMENT(ns, m) \
  GT_TORCH_LIBRARY_("FRAGMENT", ns, "", m, GT_CONCAT(gt_torch_library_fragment_, __COUNTER__))
#define TORCH_LIBRARY_IMPL(ns, k, m) \
  GT_TORCH_LIBRARY_("IMPL", ns, #k, m, GT_CONCAT(gt_torch_library_impl_, __COUNTER__))

#pragma GCC visibility pop

#endif  // GLASSTORCH_TORCH_EXTENSION_H
