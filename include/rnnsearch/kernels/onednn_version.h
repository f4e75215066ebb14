#pragma once
// The one place where rnnsearch's code depends on oneDNN's major version. Debian 12 ships
// oneDNN 2.6-2.7, Debian 13 oneDNN 3.7. oneDNN 3.0 removed the operation descriptors
// (dnnl::matmul::desc): a primitive descriptor is made directly from the engine and the
// memory descriptors. Everything else rnnsearch calls (memory descriptors with strides,
// primitive attributes, the user scratchpad, dnnl_sgemm, dnnl_gemm_[us]8s8s32, the CPU ISA
// functions) is the same in both.
#include <oneapi/dnnl/dnnl.hpp>

namespace rnnsearch {

// The matmul C = A B with these operand and result descriptors (and attributes) on engine.
inline dnnl::matmul::primitive_desc onednn_matmul_descriptor(const dnnl::engine& engine, const dnnl::memory::desc& a,
                                                             const dnnl::memory::desc& b, const dnnl::memory::desc& c,
                                                             const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(engine, a, b, c, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine);
#endif
}

}  // namespace rnnsearch
