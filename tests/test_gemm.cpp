// The float matrix products of whichever backend the build chose (kGemmBackend: Eigen's own,
// OpenBLAS, or oneDNN behind sgemm_) against the same products in double precision by
// Eigen's own loops, for every transposition rnnsearch uses and for blocks of larger
// matrices (leading dimension ≠ rows), which is where a row/column-major mix-up would show.
#include <gtest/gtest.h>

#include <iostream>

#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {
namespace {

Mat<float> random_matrix(Index rows, Index cols) { return Mat<float>::Random(rows, cols); }

// Largest |a − b| relative to the size of the terms (k products of values in [−1, 1]).
double error(const Mat<float>& got, const Mat<double>& want, Index k) {
  return (got.cast<double>() - want).cwiseAbs().maxCoeff() / static_cast<double>(k);
}

TEST(Gemm, EveryTranspositionMatchesDoublePrecision) {
  std::cout << "GEMM backend: " << kGemmBackend << "\n";
  const Index m = 37, k = 129, n = 301;  // not multiples of any kernel's block size
  const Mat<float> A = random_matrix(m, k), At = A.transpose(), B = random_matrix(k, n), Bt = B.transpose();
  const Mat<double> want = A.cast<double>() * B.cast<double>();
  Mat<float> C(m, n);
  C.noalias() = A * B;
  EXPECT_LT(error(C, want, k), 1e-6);
  C.noalias() = At.transpose() * B;
  EXPECT_LT(error(C, want, k), 1e-6);
  C.noalias() = A * Bt.transpose();
  EXPECT_LT(error(C, want, k), 1e-6);
  C.noalias() = At.transpose() * Bt.transpose();
  EXPECT_LT(error(C, want, k), 1e-6);
  // C += A B: the product is accumulated, not overwritten.
  Mat<float> D = Mat<float>::Ones(m, n);
  D.noalias() += A * B;
  EXPECT_LT(error(D, want.array() + 1.0, k), 1e-6);
}

TEST(Gemm, BlocksOfLargerMatricesUseTheirStrides) {
  const Mat<float> big_a = random_matrix(80, 200), big_b = random_matrix(150, 90);
  const auto a = big_a.block(3, 7, 41, 60);   // 41×60 inside a row stride of 200
  const auto b = big_b.block(10, 5, 60, 33);  // 60×33 inside a row stride of 90
  const Mat<double> want = Mat<float>(a).cast<double>() * Mat<float>(b).cast<double>();
  Mat<float> big_c = Mat<float>::Zero(50, 70);
  big_c.block(2, 4, 41, 33).noalias() = a * b;
  EXPECT_LT(error(big_c.block(2, 4, 41, 33), want, 60), 1e-6);
  EXPECT_EQ(big_c.block(0, 0, 2, 70).cwiseAbs().maxCoeff(), 0.0f) << "rows outside the block are untouched";
  EXPECT_EQ(big_c.block(2, 37, 41, 33).cwiseAbs().maxCoeff(), 0.0f) << "columns outside the block are untouched";
}

}  // namespace
}  // namespace rnnsearch
