#pragma once
// rnnsearch.hmm_align: `rnnsearch align --hmm` (align/hmm_tables.h) from Python, its tables
// saved (save_tables=DIR) or reused (tables=DIR) as --save-hmm and --hmm-tables do.
#include <pybind11/pybind11.h>

namespace rnnsearch::python {

void def_hmm_align(pybind11::module_& m);

}  // namespace rnnsearch::python
