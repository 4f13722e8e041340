"""Samples for the last batch of issue 16's ops: gradient (kernels/shape.py),
nonzero_static (kernels/indexing.py), set_ (kernels/view.py) and the weight-norm
ops (kernels/norm.py).  Exempt: unique_consecutive (data-dependent, no Meta kernel in
PyTorch either), from_file, and the histograms, which have no Meta kernel here yet
(PyTorch's fake computes their shapes from the bins: a known gap)."""
from ..opinfo import EXEMPT, sample

_DATA_DEPENDENT = ("data-dependent result: no Meta kernel in PyTorch either (tested in "
                   "tests/test_toplevel_rest.py)")
_NO_META_YET = ("no Meta kernel here yet; PyTorch's fake computes the shapes from the bins "
                "(values tested in tests/test_toplevel_rest.py)")
for _name in ("aten::histogram.bins_tensor", "aten::histogram.bin_ct",
              "aten::histogram.bins_tensor_out", "aten::histogram.bin_ct_out",
              "aten::_histogramdd_bin_edges", "aten::_histogramdd_bin_edges.out",
              "aten::_histogramdd_from_bin_cts", "aten::_histogramdd_from_bin_cts.out",
              "aten::_histogramdd_from_bin_tensors", "aten::_histogramdd_from_bin_tensors.out",
              "aten::histogramdd", "aten::histogramdd.int_bins", "aten::histogramdd.TensorList_bins"):
    EXEMPT[_name] = _NO_META_YET
EXEMPT["aten::unique_consecutive"] = _DATA_DEPENDENT
EXEMPT["aten::unique_consecutive.out"] = (
    "no Meta kernel here yet: PyTorch's fake gives this out= overload unbacked sizes "
    "(values tested in tests/test_toplevel_rest.py)")
EXEMPT["aten::from_file"] = ("reads a file: no Meta kernel in PyTorch either (tested in "
                             "tests/test_toplevel_rest.py)")
for _name in ("aten::set_.source_Storage", "aten::set_.source_Storage_storage_offset",
              "aten::set_.source_Tensor_storage_offset", "aten::set_.source_Tensor",
              "aten::set_"):
    EXEMPT[_name] = ("makes its input alias a storage: compared with torch's, version counter "
                     "and storage sharing included, in tests/test_toplevel_rest.py")


def _s(name, fn, **kwargs):
    fn.__name__ = name.split("::")[1].replace(".", "_")
    sample(name, **kwargs)(fn)


# -- gradient ----------------------------------------------------------------------------------

_s("aten::gradient.scalarint", lambda make, lib: ((make(3, 4),), {}))
_s("aten::gradient.scalarint", lambda make, lib: ((make(4, 5, dtype="float64", noncontiguous=True),),
                                                  {"spacing": 2.0, "dim": 1, "edge_order": 2}))
_s("aten::gradient.scalararray", lambda make, lib: ((make(3, 4),), {"spacing": 0.5, "dim": [1, 0]}))
_s("aten::gradient.array", lambda make, lib: ((make(3, 4, dtype="int64"),), {"dim": [-1]}))
_s("aten::gradient.scalarrayint", lambda make, lib: ((make(3, 4),), {"spacing": [2.0, 3]}))
_s("aten::gradient.scalarrayarray", lambda make, lib: ((make(3, 4, 5),),
                                                       {"spacing": [2.0], "dim": [2],
                                                        "edge_order": 2}))
_s("aten::gradient.tensorarrayint", lambda make, lib: (
    (make(3, 4, dtype="float64"),),
    {"spacing": [lib.tensor([0.0, 1, 3], dtype=lib.float64, device=make.device),
                 lib.tensor([0.0, 2, 3, 7], dtype=lib.float64, device=make.device)]}))
_s("aten::gradient.tensorarray", lambda make, lib: (
    (make(3, 4),), {"spacing": [lib.tensor([0.0, 2, 3, 7], device=make.device)], "dim": [1],
                    "edge_order": 2}))

# -- nonzero_static ----------------------------------------------------------------------------

_s("aten::nonzero_static", lambda make, lib: ((make(3, 4, dtype="int64", low=0, high=2),),
                                              {"size": 5}))
_s("aten::nonzero_static", lambda make, lib: ((make(2, 3, dtype="bool", noncontiguous=True),),
                                              {"size": 8, "fill_value": 7}))

# -- weight normalization ----------------------------------------------------------------------

_s("aten::norm_except_dim", lambda make, lib: ((make(2, 3, 4),), {"pow": 2, "dim": 1}))
_s("aten::norm_except_dim", lambda make, lib: ((make(2, 3, 4, dtype="float64"),), {"pow": 3, "dim": -1}))
_s("aten::_weight_norm", lambda make, lib: ((make(3, 4), make(3, 1)), {}))
_s("aten::_weight_norm", lambda make, lib: ((make(2, 3, 4, dtype="float64"), make(1, 3, 1, dtype="float64")),
                                            {"dim": 1}))
_s("aten::_weight_norm_interface", lambda make, lib: ((make(3, 4), make(3, 1)), {}))
_s("aten::_weight_norm_interface", lambda make, lib: ((make(3, 4, dtype="float64"),
                                                       make(1, 4, dtype="float64")), {"dim": 1}))
_s("aten::_weight_norm_interface_backward", lambda make, lib: (
    (make(3, 4), make(3, 4), make(3, 1), make(3, 1, low=1, high=2), 0), {}))
_s("aten::_weight_norm_interface_backward", lambda make, lib: (
    (make(3, 4, dtype="float64"), make(3, 4, dtype="float64"), make(1, 4, dtype="float64"),
     make(1, 4, dtype="float64", low=1, high=2), 1), {}))
_s("aten::_weight_norm_differentiable_backward", lambda make, lib: (
    (make(3, 4), make(3, 4), make(3, 1), make(3, 1, low=1, high=2), 0), {}))
