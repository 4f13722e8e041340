/* glasstorch's C ABI for native extensions (the seam under torch/extension.h).
 *
 * PyTorch binds an extension with pybind11 against libtorch's C++ classes.
 * glasstorch has no C++ runtime to link against, so an extension talks to it
 * through this small C interface instead: the compiled shared object is loaded
 * with ctypes, and every value crosses the boundary as a `gt_value`.
 *
 *   Tensor   a `gt_tensor`: a pointer to element (0, ..., 0) with the storage
 *            offset already applied, the dtype as c10::ScalarType's number,
 *            the device as c10::DeviceType's number, ndim, sizes, and strides
 *            counted in elements (not bytes).  The sizes/strides arrays and
 *            the bytes stay valid until the extension call returns.  `handle`
 *            names the glasstorch tensor within the current call, so a tensor
 *            the extension returns is the very Python object it was given or
 *            made (handle -1: an undefined tensor, returned as None).
 *   int      int64_t          float   double          bool   int32_t 0 or 1
 *   str      NUL-terminated UTF-8      list    items + size (Tensor[], int[] ...)
 *   None     tag GT_NONE (an absent optional)
 *
 * Exports of every extension (defined once per library by torch/extension.h):
 *
 *   int32_t gt_ext_abi_version(void)                 GT_EXT_ABI_VERSION
 *   void    gt_ext_set_host(gt_host_fn host)         installed by the loader before init
 *   int32_t gt_ext_init(void)                        runs PYBIND11_MODULE / TORCH_LIBRARY
 *                                                    bodies once; returns a status
 *   int32_t gt_ext_binding_count(void)               what the bodies declared ...
 *   const gt_binding *gt_ext_binding(int32_t i)      ... one record each
 *   int32_t gt_ext_call(int32_t fn, const gt_value *args, int32_t nargs, gt_value *result)
 *                                                    call bound function `fn`; returns a status
 *   const char *gt_ext_error_message(void)           the message of this thread's last failure
 *
 * Status codes say which Python exception to raise (TORCH_CHECK raises
 * RuntimeError, TORCH_CHECK_VALUE ValueError ...).  GT_ERROR_HOST means a call
 * back into glasstorch raised: the loader re-raises that Python exception.
 *
 * The host callback is how C++ asks glasstorch for work: `op` names a
 * glasstorch operation ("empty", "zeros_like", "contiguous", "add" ...; the
 * list lives in glasstorch/utils/_cpp_abi.py), `args` are its arguments, and
 * the result (a tensor the loader keeps alive for the rest of the call) is
 * written to `*result`.  Every byte an extension allocates therefore comes from
 * glasstorch's allocator and every op goes through its dispatcher.
 */
#ifndef GLASSTORCH_EXTENSION_ABI_H
#define GLASSTORCH_EXTENSION_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GT_EXT_ABI_VERSION 1

/* gt_value tags */
enum {
    GT_MISSING = -1, /* no default value (gt_binding.defaults only) */
    GT_NONE = 0,
    GT_TENSOR = 1,
    GT_INT = 2,
    GT_DOUBLE = 3,
    GT_BOOL = 4,
    GT_STRING = 5,
    GT_LIST = 6
};

/* c10::DeviceType numbers */
enum { GT_DEVICE_CPU = 0, GT_DEVICE_CUDA = 1, GT_DEVICE_META = 14 };

/* status codes of gt_ext_init / gt_ext_call / the host callback */
enum {
    GT_OK = 0,
    GT_ERROR_RUNTIME = 1,         /* RuntimeError (TORCH_CHECK, std::exception) */
    GT_ERROR_VALUE = 2,           /* ValueError (TORCH_CHECK_VALUE) */
    GT_ERROR_TYPE = 3,            /* TypeError (TORCH_CHECK_TYPE) */
    GT_ERROR_INDEX = 4,           /* IndexError (TORCH_CHECK_INDEX) */
    GT_ERROR_NOT_IMPLEMENTED = 5, /* NotImplementedError (TORCH_CHECK_NOT_IMPLEMENTED) */
    GT_ERROR_HOST = 6             /* glasstorch raised inside a host call: re-raised as is */
};

typedef struct gt_tensor {
    void *data;             /* element (0, ..., 0); NULL when the tensor has no bytes here */
    int64_t handle;         /* the tensor's number within the current call; -1: undefined */
    int32_t dtype;          /* c10::ScalarType: 0 uint8 .. 4 int64, 6 float32, 7 float64, 11 bool */
    int32_t device;         /* GT_DEVICE_* */
    int64_t ndim;
    const int64_t *sizes;   /* ndim entries */
    const int64_t *strides; /* ndim entries, in elements */
} gt_tensor;

typedef struct gt_value gt_value;

typedef struct gt_list {
    const gt_value *items;
    int64_t size;
} gt_list;

struct gt_value {
    int32_t tag; /* GT_* tag */
    union {
        gt_tensor tensor;
        int64_t i;
        double d;
        int32_t b;
        const char *s;
        gt_list list;
    } u;
};

/* What the PYBIND11_MODULE and TORCH_LIBRARY bodies declared, in order: a
 * block record (MODULE or LIBRARY) followed by the records made inside it. */
enum {
    GT_BIND_MODULE = 0,  /* PYBIND11_MODULE(ns, m): ns is the module name, doc is m.doc() */
    GT_BIND_PYTHON = 1,  /* m.def(name, fn, doc, py::arg...) inside it */
    GT_BIND_LIBRARY = 2, /* TORCH_LIBRARY[_FRAGMENT|_IMPL](ns[, key], m): name "DEF", "FRAGMENT"
                            or "IMPL" */
    GT_BIND_DEF = 3,     /* m.def(schema) or m.def(name or schema, fn) inside it */
    GT_BIND_IMPL = 4     /* m.impl(name, fn) inside it (dispatch_key: the block's key) */
};

typedef struct gt_binding {
    int32_t kind;               /* GT_BIND_* */
    int32_t function;           /* index for gt_ext_call, or -1 (a schema-only def) */
    const char *ns;             /* the PYBIND11_MODULE name or the TORCH_LIBRARY namespace */
    const char *dispatch_key;   /* "CPU" ... in a TORCH_LIBRARY_IMPL block, else "" */
    const char *name;           /* Python name, op name or schema */
    const char *doc;            /* docstring ("" if none) */
    const char *signature;      /* type codes, e.g. "T,d->T" (see _cpp_abi.py), or "" */
    int32_t nargs_named;        /* py::arg count: 0, or the number of parameters */
    const char *const *arg_names;
    const gt_value *defaults;   /* per named argument; tag GT_MISSING when none */
} gt_binding;

typedef int32_t (*gt_host_fn)(const char *op, const gt_value *args, int32_t nargs,
                              gt_value *result);

#ifdef __cplusplus
}
#endif

#endif /* GLASSTORCH_EXTENSION_ABI_H */
