#pragma once
// int8 matrix products with int32 sums, for the vocabulary projection of decoding under
// translate --precision int8 (docs/design.md §5).
//
// Each row of an operand is quantized on its own, symmetrically: q = round(x / scale) with
// scale = max_k |x_k| / 127, so that x ≈ scale · q with q in [-127, 127]. A product of two
// such rows is then scale_a · scale_b · Σ_k q_a,k q_b,k, the sum exact in int32 (|q| ≤ 127,
// K ≤ 2¹⁷ terms). CPUs with AVX512_VNNI or AVX-VNNI (which ones: docs/design.md §5)
// multiply-add four int8 pairs per 32-bit lane in one instruction, four times fp32's rate; oneDNN's gemm_s8s8s32 has the kernels. Decoding only: the relative
// error of a rounded value is up to 1/254 of its row's largest, too coarse for gradients.
//
// AVX2 without VNNI multiplies unsigned by signed bytes (vpmaddubsw) and adds each pair of
// products into int16, saturating: oneDNN's gemm there gives 255·127·2 → 32767. So there the
// weights are quantized to [-63, 63] instead (int8_weight_levels) and the activations are
// shifted to unsigned, q + 128 in [1, 255]: a pair stays within 2·255·63 = 32130, and
//   Σ_k (q_a,k + 128) q_b,k = Σ_k q_a,k q_b,k + 128 Σ_k q_b,k,
// so the product subtracts 128 times each weight row's sum (row_sums). gemm_u8s8s32 still
// runs faster than oneDNN's fp32 at the projection's shapes (build/gemm_bench;
// docs/benchmarks.md).
#include <cstdint>
#include <vector>

#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

// Whether int8 products run natively here: rnnsearch was built with oneDNN and the CPU has
// AVX512_VNNI, AVX-VNNI or AVX2 (util/cpu.h, so RNNSEARCH_CPU caps it).
bool int8_supported();

// The largest quantized magnitude of a weight row: 127 with VNNI, 63 on AVX2 without it.
int int8_weight_levels();

// A row-major int8 matrix with one scale per row: value(i, k) ≈ scales[i] · values[i·cols + k].
// Like the workspaces, its buffers only grow.
struct Int8Matrix {
  Index rows = 0, cols = 0;
  int levels = 127;  // values are in [-levels, levels]
  std::vector<int8_t> values;
  std::vector<float> scales;
  std::vector<int32_t> row_sums;  // Σ_k values(i, k), for the products without VNNI

  // Quantizes each row of m to [-levels, levels].
  void assign(const MatCRef<float>& m, int levels = 127);
};

// What gemm_int8 writes between its steps; reused from call to call.
struct Int8Workspace {
  std::vector<int32_t> sums;      // M×N
  std::vector<uint8_t> unsigned_a;  // M×K, A + 128 (without VNNI)
  std::vector<int8_t> padded_a;     // A with rows of zeros up to a multiple of 16 (matmul)
};

// Which oneDNN product computes the int32 sums (both give the same, exact sums): its gemm
// (gemm_s8s8s32 with VNNI, gemm_u8s8s32 without), or its matmul primitive, one per shape,
// made once and cached (kernels/onednn_matmul.h). On CPUs with AMX the matmul runs on its
// tiles, while oneDNN 2.6's gemm_s8s8s32 there falls back to fp32's rate; without AMX the
// gemm leads (build/gemm_bench; docs/benchmarks.md). int8_kernel(): the faster one here,
// the matmul where cpu_features().amx.
enum class Int8Kernel { gemm, matmul };
Int8Kernel int8_kernel();

// C = A Bᵀ (C is M×N for A M×K and B N×K: B's rows are C's columns), each value
// scales_a[i] · scales_b[j] · Σ_k a(i,k) b(j,k). B quantized with int8_weight_levels().
// Single-threaded inside an OpenMP parallel region, like the fp32 products. Only when
// int8_supported().
void gemm_int8(const Int8Matrix& A, const Int8Matrix& B, MatRef<float> C, Int8Workspace& work,
               Int8Kernel kernel = int8_kernel());

}  // namespace rnnsearch
