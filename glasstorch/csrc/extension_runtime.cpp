// The non-template half of torch/extension.h: glasstorch's "libtorch" for
// extensions.  Compiled once (and cached) for the default flags, or with an
// extension's own flags, and linked into every extension library.  It holds the
// registry of what PYBIND11_MODULE / TORCH_LIBRARY bodies declare, the
// at::Tensor operations that call back into glasstorch, and the gt_ext_*
// exports of glasstorch/extension_abi.h.
#include <torch/extension.h>

#pragma GCC visibility push(hidden)

namespace gt {
namespace detail {

gt_host_fn host = nullptr;

gt_value host_call(const char* op, std::initializer_list<gt_value> args) {
  if (host == nullptr) throw c10::Error("glasstorch extension: the host is not installed");
  gt_value result = none_value();
  if (host(op, args.begin(), static_cast<int32_t>(args.size()), &result) != GT_OK)
    throw HostError();
  return result;
}

void warn(const std::string& msg) { host_call("warn", {string_value(msg.c_str())}); }

namespace {

struct ResultStore {
  std::deque<std::vector<gt_value>> lists;
  std::deque<std::string> strings;
};
thread_local ResultStore results;
thread_local std::string error_message;

struct Registry {
  std::vector<void (*)()> inits;
  std::deque<Record> records;
  std::vector<Boxed> functions;
  bool initialized = false;
  int32_t init_status = GT_OK;
};

Registry& registry() {
  static Registry r;
  return r;
}

// Run `body`; a C++ exception becomes a status (and this thread's error message).
template <class Body>
int32_t guarded(Body&& body) {
  try {
    body();
    return GT_OK;
  } catch (const HostError&) {
    return GT_ERROR_HOST;
  } catch (const c10::Error& e) {
    error_message = e.what();
    return e.status();
  } catch (const std::exception& e) {
    error_message = e.what();
    return GT_ERROR_RUNTIME;
  } catch (...) {
    error_message = "Caught an unknown exception!";
    return GT_ERROR_RUNTIME;
  }
}

std::vector<gt_value> int_items(c10::IntArrayRef values) {
  std::vector<gt_value> items;
  for (int64_t x : values) items.push_back(int_value(x));
  return items;
}

}  // namespace

std::vector<gt_value>& result_list(size_t size) { return results.lists.emplace_back(size); }

const char* result_string(const std::string& s) { return results.strings.emplace_back(s).c_str(); }

const gt_binding* Record::finish() {
  arg_name_ptrs.clear();
  for (const std::string& n : arg_names) arg_name_ptrs.push_back(n.c_str());
  view = gt_binding{kind, function, ns.c_str(), dispatch_key.c_str(), name.c_str(),
                    doc.c_str(), signature.c_str(), static_cast<int32_t>(arg_names.size()),
                    arg_name_ptrs.data(), defaults.data()};
  return &view;
}

int register_init(void (*init)()) {
  registry().inits.push_back(init);
  return 0;
}

Record& add_record(int32_t kind, std::string ns, std::string name) {
  Record& r = registry().records.emplace_back();
  r.kind = kind;
  r.ns = std::move(ns);
  r.name = std::move(name);
  return r;
}

int32_t add_function(Boxed boxed) {
  registry().functions.push_back(boxed);
  return static_cast<int32_t>(registry().functions.size() - 1);
}

}  // namespace detail
}  // namespace gt

namespace at {

using gt::detail::double_value;
using gt::detail::int_value;

Tensor Tensor::op(const char* name, std::initializer_list<gt_value> args) {
  return Tensor(gt::detail::host_call(name, args).u.tensor);
}

void Tensor::dim_out_of_range(int64_t d, int64_t n) {
  TORCH_CHECK_INDEX(false, "Dimension out of range (expected to be in range of [", -n, ", ",
                    n - 1, "], but got ", d, ")");
  std::abort();
}

void Tensor::wrong_scalar_type(ScalarType expected) const {
  TORCH_CHECK(false, "expected scalar type ", expected, " but found ", scalar_type());
  std::abort();
}

void Tensor::no_data() const {
  TORCH_CHECK(!is_meta(),
              "The tensor has a non-zero number of elements, but its data is not allocated yet.\n"
              "If you're using torch.compile/export/fx, it is likely that we are erroneously "
              "tracing into a custom kernel. To fix this, please wrap the custom kernel into an "
              "opaque custom op. Please see the following for details: "
              "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html\n"
              "If you're using Caffe2, Caffe2 uses a lazy allocation, so you will need to call "
              "mutable_data() or raw_mutable_data() to actually allocate memory.");
  TORCH_CHECK(false, "glasstorch C++ extensions read tensor data on the CPU only, but this "
              "tensor is on ", device());
  std::abort();
}

Tensor Tensor::clone() const { return op("clone", {value()}); }
Tensor Tensor::to(ScalarType d) const {
  return op("to", {value(), int_value(static_cast<int64_t>(d))});
}
Tensor& Tensor::copy_(const Tensor& src) { op("copy_", {value(), src.value()}); return *this; }
Tensor& Tensor::fill_(double v) { op("fill_", {value(), double_value(v)}); return *this; }
Tensor& Tensor::zero_() { op("zero_", {value()}); return *this; }
Tensor& Tensor::add_(const Tensor& o) { op("add_", {value(), o.value()}); return *this; }
Tensor& Tensor::add_(double o) { op("add_", {value(), double_value(o)}); return *this; }
Tensor& Tensor::mul_(const Tensor& o) { op("mul_", {value(), o.value()}); return *this; }
Tensor& Tensor::mul_(double o) { op("mul_", {value(), double_value(o)}); return *this; }
Tensor Tensor::add(const Tensor& o) const { return op("add", {value(), o.value()}); }
Tensor Tensor::add(double o) const { return op("add", {value(), double_value(o)}); }
Tensor Tensor::sub(const Tensor& o) const { return op("sub", {value(), o.value()}); }
Tensor Tensor::sub(double o) const { return op("sub", {value(), double_value(o)}); }
Tensor Tensor::mul(const Tensor& o) const { return op("mul", {value(), o.value()}); }
Tensor Tensor::mul(double o) const { return op("mul", {value(), double_value(o)}); }
Tensor Tensor::div(const Tensor& o) const { return op("div", {value(), o.value()}); }
Tensor Tensor::div(double o) const { return op("div", {value(), double_value(o)}); }
Tensor Tensor::matmul(const Tensor& o) const { return op("matmul", {value(), o.value()}); }
Tensor Tensor::sum() const { return op("sum", {value()}); }
Tensor Tensor::reshape(IntArrayRef shape) const {
  std::vector<gt_value> items = gt::detail::int_items(shape);
  return op("reshape", {value(), gt::detail::list_value(items)});
}
Tensor Tensor::view(IntArrayRef shape) const {
  std::vector<gt_value> items = gt::detail::int_items(shape);
  return op("view", {value(), gt::detail::list_value(items)});
}
Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  return op("transpose", {value(), int_value(d0), int_value(d1)});
}
Tensor Tensor::t() const { return op("t", {value()}); }
#define GT_UNARY_METHOD(name) \
  Tensor Tensor::name() const { return op(#name, {value()}); }
GT_UNARY_METHOD(neg)
GT_UNARY_METHOD(sin)
GT_UNARY_METHOD(cos)
GT_UNARY_METHOD(exp)
GT_UNARY_METHOD(log)
GT_UNARY_METHOD(sqrt)
GT_UNARY_METHOD(tanh)
GT_UNARY_METHOD(sigmoid)
GT_UNARY_METHOD(relu)
GT_UNARY_METHOD(abs)
#undef GT_UNARY_METHOD

namespace {
Tensor factory(const char* name, IntArrayRef sizes, const TensorOptions& options) {
  std::vector<gt_value> items = gt::detail::int_items(sizes);
  return Tensor::op(name, {gt::detail::list_value(items), options.dtype_value(),
                           options.device_value()});
}
}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& options) {
  return factory("empty", sizes, options);
}
Tensor zeros(IntArrayRef sizes, const TensorOptions& options) {
  return factory("zeros", sizes, options);
}
Tensor ones(IntArrayRef sizes, const TensorOptions& options) {
  return factory("ones", sizes, options);
}
Tensor full(IntArrayRef sizes, double fill_value, const TensorOptions& options) {
  std::vector<gt_value> items = gt::detail::int_items(sizes);
  return Tensor::op("full", {gt::detail::list_value(items), double_value(fill_value),
                             options.dtype_value(), options.device_value()});
}
Tensor empty_like(const Tensor& x, const TensorOptions& options) {
  return Tensor::op("empty_like", {x.value(), options.dtype_value()});
}
Tensor zeros_like(const Tensor& x, const TensorOptions& options) {
  return Tensor::op("zeros_like", {x.value(), options.dtype_value()});
}
Tensor ones_like(const Tensor& x, const TensorOptions& options) {
  return Tensor::op("ones_like", {x.value(), options.dtype_value()});
}

}  // namespace at

#pragma GCC visibility pop

// ---------------------------------------------------------------------------
// The exports (extension_abi.h)
// ---------------------------------------------------------------------------
#define GT_EXPORT extern "C" __attribute__((visibility("default")))

GT_EXPORT int32_t gt_ext_abi_version(void) { return GT_EXT_ABI_VERSION; }

GT_EXPORT void gt_ext_set_host(gt_host_fn host) { gt::detail::host = host; }

GT_EXPORT int32_t gt_ext_init(void) {
  auto& r = gt::detail::registry();
  if (!r.initialized) {
    r.initialized = true;
    r.init_status = gt::detail::guarded([&] {
      for (void (*init)() : r.inits) init();
    });
  }
  return r.init_status;
}

GT_EXPORT int32_t gt_ext_binding_count(void) {
  return static_cast<int32_t>(gt::detail::registry().records.size());
}

GT_EXPORT const gt_binding* gt_ext_binding(int32_t i) {
  return gt::detail::registry().records[i].finish();
}

GT_EXPORT int32_t gt_ext_call(int32_t fn, const gt_value* args, int32_t nargs, gt_value* result) {
  (void)nargs;  // the loader checked the count against the signature
  gt::detail::results.lists.clear();
  gt::detail::results.strings.clear();
  const gt::detail::Boxed& f = gt::detail::registry().functions[fn];
  return gt::detail::guarded([&] { f.call(f.target, args, result); });
}

GT_EXPORT const char* gt_ext_error_message(void) { return gt::detail::error_message.c_str(); }
