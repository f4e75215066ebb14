#pragma once
// int8 matrix products with int32 sums, for the vocabulary projection of decoding under
// translate --precision int8 (docs/design.md §5).
//
// Each row of an operand is quantized on its own, symmetrically: q = round(x / scale) with
// scale = max_k |x_k| / 127, so that x ≈ scale · q with q in [-127, 127]. A product of two
// such rows is then scale_a · scale_b · Σ_k q_a,k q_b,k, the sum exact in int32 (|q| ≤ 127,
// K ≤ 2¹⁷ terms). CPUs with AVX512_VNNI or AVX-VNNI (AMD Zen 4 and 5, Intel Cascade Lake,
// Alder Lake and later) multiply-add four int8 pairs per 32-bit lane in one instruction, four
// times fp32's rate; oneDNN's gemm_s8s8s32 has the kernels. Decoding only: the relative
// error of a rounded value is up to 1/254 of its row's largest, too coarse for gradients.
#include <cstdint>
#include <vector>

#include "rnnsearch/model/tensor.h"

namespace rnnsearch {

// Whether int8 products run natively here: rnnsearch was built with oneDNN and the CPU has
// AVX512_VNNI or AVX-VNNI. (Without them oneDNN's int8 kernels are no faster than fp32.)
bool int8_supported();

// A row-major int8 matrix with one scale per row: value(i, k) ≈ scales[i] · values[i·cols + k].
// Like the workspaces, its buffers only grow.
struct Int8Matrix {
  Index rows = 0, cols = 0;
  std::vector<int8_t> values;
  std::vector<float> scales;

  void assign(const MatCRef<float>& m);
};

// C = A Bᵀ (C is M×N for A M×K and B N×K: B's rows are C's columns), each value
// scales_a[i] · scales_b[j] · Σ_k a(i,k) b(j,k). sums: an M×N int32 workspace. Single-threaded
// inside an OpenMP parallel region, like the fp32 products. Only when int8_supported().
void gemm_int8(const Int8Matrix& A, const Int8Matrix& B, MatRef<float> C, std::vector<int32_t>& sums);

}  // namespace rnnsearch
