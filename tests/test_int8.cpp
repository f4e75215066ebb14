// translate --precision int8 (kernels/int8.h): the per-row quantization, the int8 products
// against the same products of the quantized operands in double precision, and the output
// layer and beam search in int8 against fp32. The products need a CPU with AVX2 and a build
// with oneDNN; elsewhere those tests are skipped (and --precision int8 computes in fp32). A
// CPU with VNNI runs the s8 × s8 products, and under RNNSEARCH_CPU=avx2 (scripts/test.sh's
// second pass) the u8 × s8 products of AVX2 alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>

#include "support/low_precision.h"
#include "rnnsearch/kernels/int8.h"

namespace rnnsearch {
namespace {

// The matrix an Int8Matrix stands for, in double: scale_i · q_ik.
Mat<double> dequantized(const Int8Matrix& m) {
  Mat<double> out(m.rows, m.cols);
  for (Index i = 0; i < m.rows; ++i)
    for (Index k = 0; k < m.cols; ++k)
      out(i, k) = double(m.scales[static_cast<size_t>(i)]) * m.values[static_cast<size_t>(i * m.cols + k)];
  return out;
}

// C = A Bᵀ as gemm_int8 gives it when its int32 sums are exact: each sum computed here in
// int64, scaled in gemm_int8's order, scale_a · scale_b · sum.
Mat<float> exact_product(const Int8Matrix& A, const Int8Matrix& B) {
  Mat<float> out(A.rows, B.rows);
  for (Index i = 0; i < A.rows; ++i)
    for (Index j = 0; j < B.rows; ++j) {
      int64_t sum = 0;
      for (Index k = 0; k < A.cols; ++k)
        sum += int64_t{A.values[static_cast<size_t>(i * A.cols + k)]} * B.values[static_cast<size_t>(j * B.cols + k)];
      out(i, j) = A.scales[static_cast<size_t>(i)] * B.scales[static_cast<size_t>(j)] * static_cast<float>(sum);
    }
  return out;
}

// Each row on its own scale: its largest magnitude becomes ±127, every value is within half a
// step of where it was, and a row of zeros stays zeros.
TEST(Int8, QuantizesEachRowOnItsOwnScale) {
  Mat<float> big = Mat<float>::Random(9, 20);
  big.row(3) *= 1000.0f;  // a row far larger than the others keeps them from coarsening
  big.row(5).setZero();
  const auto block = big.block(1, 3, 6, 11);  // row stride 20
  Int8Matrix m;
  m.assign(block);
  ASSERT_EQ(m.rows, 6);
  ASSERT_EQ(m.cols, 11);
  const Mat<double> back = dequantized(m);
  for (Index i = 0; i < 6; ++i) {
    const double largest = block.row(i).cwiseAbs().maxCoeff();
    EXPECT_NEAR(m.scales[static_cast<size_t>(i)], largest / 127, 1e-6 * largest) << "row " << i;
    for (Index k = 0; k < 11; ++k)
      EXPECT_LE(std::abs(back(i, k) - block(i, k)), 0.5 * m.scales[static_cast<size_t>(i)] * (1 + 1e-6) + 1e-30)
          << i << "," << k;
    int extreme = 0;
    for (Index k = 0; k < 11; ++k) extreme = std::max(extreme, std::abs(int(m.values[static_cast<size_t>(i * 11 + k)])));
    EXPECT_EQ(extreme, i == 4 ? 0 : 127) << "row " << i;
  }
}

// Both kernels, whichever this CPU runs by default (int8_kernel()).
const std::vector<std::pair<Int8Kernel, const char*>> kKernels = {{Int8Kernel::gemm, "gemm"},
                                                                   {Int8Kernel::matmul, "matmul"}};

// The int32 sums are exact: only the final scaling rounds.
TEST(Int8, ProductsMatchDoublePrecisionOfTheQuantizedOperands) {
  if (!int8_supported()) GTEST_SKIP() << "no AVX2 or no oneDNN: int8 computes in fp32";
  Int8Workspace work;
  for (const auto& [kernel, name] : kKernels)
  for (Index m : {1, 5, 37}) {
    const Index k = 129, n = 301;
    Int8Matrix A, B;
    A.assign(Mat<float>(Mat<float>::Random(m, k)));
    B.assign(Mat<float>(Mat<float>::Random(n, k) * 3.0f), int8_weight_levels());
    Mat<float> big_c = Mat<float>::Constant(m + 3, n + 5, 0.5f);
    gemm_int8(A, B, big_c.block(1, 2, m, n), work, kernel);
    const Mat<double> want = dequantized(A) * dequantized(B).transpose();
    const double error = (big_c.block(1, 2, m, n).cast<double>() - want).cwiseAbs().maxCoeff();
    EXPECT_LT(error, 1e-5 * want.cwiseAbs().maxCoeff()) << name << ", " << m << " rows";
    EXPECT_EQ(big_c.row(0).cwiseAbs().maxCoeff(), 0.5f) << name << ": rows outside the block are untouched";
    EXPECT_EQ(big_c.col(1).cwiseAbs().maxCoeff(), 0.5f) << name << ": columns outside the block are untouched";
  }
}

// Each kernel's sums are exact: its floats are those of the sums computed in int64 (each
// kernel with a workspace of its own and an output of NaNs, so that neither can pass on what
// the other left).
TEST(Int8, BothKernelsSumExactly) {
  if (!int8_supported()) GTEST_SKIP() << "no AVX2 or no oneDNN: int8 computes in fp32";
  for (Index m : {1, 16, 160}) {
    Int8Matrix A, B;
    A.assign(Mat<float>(Mat<float>::Random(m, 256)));
    B.assign(Mat<float>(Mat<float>::Random(1000, 256)), int8_weight_levels());
    const Mat<float> want = exact_product(A, B);
    for (const auto& [kernel, name] : kKernels) {
      Int8Workspace work;
      Mat<float> c = Mat<float>::Constant(m, 1000, std::nanf(""));
      gemm_int8(A, B, c, work, kernel);
      EXPECT_TRUE(c == want) << name << ", " << m << " rows: largest difference "
                             << (c - want).cwiseAbs().maxCoeff();
    }
  }
}

// The largest values the quantization makes, in every sign combination, over a long inner
// dimension: without VNNI a pair of products of 127 and 127 would saturate the int16 sums
// (255·127·2 > 32767; oneDNN's gemm then gives half the sum), which the weights' 63 levels
// avoid. And weights quantized to more levels than the CPU adds exactly are refused.
TEST(Int8, ExtremeValuesSumExactly) {
  if (!int8_supported()) GTEST_SKIP() << "no AVX2 or no oneDNN: int8 computes in fp32";
  const Index m = 4, k = 512, n = 6;
  Mat<float> a(m, k), b(n, k);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < k; ++j) a(i, j) = (i % 2 ? -1.0f : 1.0f) * (i < 2 ? 1.0f : (j % 3 ? 1.0f : -1.0f));
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j) b(i, j) = (i % 3 == 0 ? 1.0f : i % 3 == 1 ? -1.0f : (j % 2 ? 1.0f : -1.0f));
  Int8Matrix A, B;
  A.assign(a);
  B.assign(b, int8_weight_levels());
  const Mat<float> want = exact_product(A, B);
  Mat<float> c(m, n);
  for (const auto& [kernel, name] : kKernels) {
    Int8Workspace work;
    c.setConstant(std::nanf(""));
    gemm_int8(A, B, c, work, kernel);
    EXPECT_TRUE(c == want) << name << ": got\n" << c << "\nwant\n" << want;
  }
  Int8Workspace work;
  if (int8_weight_levels() < 127) {
    B.assign(b, 127);
    EXPECT_THROW(gemm_int8(A, B, c, work), std::logic_error);
  }
}

// The logits of the int8 projection stay within the quantization's error (about 1% of a
// row's largest value per operand) of fp32, for maxout, linear and tied outputs; the
// backward refuses it.
TEST(Int8, OutputLayerAgreesWithFp32) {
  if (!int8_supported()) GTEST_SKIP() << "no AVX2 or no oneDNN: int8 computes in fp32";
  for (const auto& [name, config] : test::output_layer_variants()) {
    Parameters<float> params(config);
    params.init_uniform(0.5, 5);
    const Index N = 40;
    const Mat<float> X = Mat<float>::Random(N, config.output_input());
    Int8Projection projection;
    convert_projection(params, projection);
    OutputCache<float> cache32, cache8;
    cache8.int8 = &projection;
    Mat<float> logits32(N, config.tgt_vocab), logits8(N, config.tgt_vocab);
    output_forward<float>(params, X, cache32, logits32);
    output_forward<float>(params, X, cache8, logits8);
    EXPECT_LT(test::relative_difference(logits8, logits32), 2e-2) << name;
    EXPECT_GT(test::relative_difference(logits8, logits32), 0) << name << ": the int8 path was not taken";

    std::vector<int> targets(N, 7);
    Parameters<float> grads(config);
    Mat<float> dX(N, config.output_input());
    EXPECT_THROW(output_layer_cost<float>(params, X, targets.data(), 0.0f, cache8, nullptr, 1.0f, &grads, &dX),
                 std::logic_error)
        << name;
  }
}

// Decoding (translate --precision int8) with each ensemble member's int8 projection.
TEST(Int8, BeamSearchDecodesWithTheInt8Projection) {
  if (!int8_supported()) GTEST_SKIP() << "no AVX2 or no oneDNN: int8 computes in fp32";
  test::expect_ensemble_decodes_near_fp32<Int8Projection>(5e-2);
}

}  // namespace
}  // namespace rnnsearch
