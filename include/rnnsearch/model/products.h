#pragma once
// Decoding's numerics: a sentence's translation bitwise independent of its batch
// (docs/design.md, "Decoding numerics"; --batch-invariant, on by default).
//
// While an InvariantProducts lives on a thread, the model's fp32 forward products on that
// thread go through gemm_invariant (kernels/invariant_gemm.h), whose every output element
// is summed in one fixed order whatever the batch's size, and its row-wise softmaxes and
// sums run on an aligned copy of the row, so that where a row starts in memory (which
// depends on the batch's shape) no longer decides which of its elements Eigen computes with
// vector or scalar code. Without one (training, gradient checks) everything is as Eigen
// evaluates it. The translator and the scorer hold one for each batch they decode.
#include <stdexcept>
#include <type_traits>

#include "rnnsearch/kernels/invariant_gemm.h"
#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

class InvariantProducts {
 public:
  explicit InvariantProducts(bool on = true);  // off: nothing changes (--batch-invariant 0)
  ~InvariantProducts();
  InvariantProducts(const InvariantProducts&) = delete;
  InvariantProducts& operator=(const InvariantProducts&) = delete;

 private:
  bool on_;
};

// Whether an InvariantProducts lives on the calling thread.
bool invariant_products();

namespace products_detail {

template <class X>
struct is_transpose : std::false_type {};
template <class X>
struct is_transpose<Eigen::Transpose<X>> : std::true_type {};

// A row-major operand with direct access, or the transpose of one: what gemm_invariant reads
struct Operand {
  const float* data;
  Index stride;
  bool transposed;
};

template <class X>
Operand operand(const Eigen::MatrixBase<X>& x) {
  if constexpr (is_transpose<X>::value) {
    const Operand inner = operand(x.derived().nestedExpression());
    return {inner.data, inner.stride, !inner.transposed};
  } else {
    static_assert(X::IsRowMajor || X::RowsAtCompileTime == 1, "multiply: row-major operands only");
    return {x.derived().data(), x.derived().outerStride(), false};
  }
}

}  // namespace products_detail

// C = A B, or C += A B when accumulate: Eigen's product as written, or under InvariantProducts
// (float only) gemm_invariant's. A and C are row-major blocks; B is one or the transpose of one.
template <class C, class A, class B>
void multiply(C&& c, const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b, bool accumulate = false) {
  using Scalar = typename std::decay_t<C>::Scalar;
  if constexpr (std::is_same_v<Scalar, float>) {
    if (invariant_products()) {
      const products_detail::Operand lhs = products_detail::operand(a), rhs = products_detail::operand(b);
      if (lhs.transposed || a.cols() != b.rows() || c.rows() != a.rows() || c.cols() != b.cols())
        throw std::logic_error("multiply: operand shapes do not match");
      gemm_invariant(c.rows(), c.cols(), a.cols(), lhs.data, lhs.stride, rhs.data, rhs.stride, rhs.transposed,
                     c.data(), c.rows() == 1 ? c.cols() : c.outerStride(), accumulate);
      return;
    }
  }
  if (accumulate)
    c.noalias() += a * b;
  else
    c.noalias() = a * b;
}

// f(row) on the row itself, or, under InvariantProducts, on a copy that starts on a vector
// boundary (written back after): for the row-wise reductions and exp/tanh, whose bits
// depend on where the row starts.
template <class T, class F>
void on_aligned_row(RowVecRef<T> row, F&& f) {
  if (!invariant_products()) {
    f(row);
    return;
  }
  thread_local RowVec<T> copy;
  copy = row;
  f(RowVecRef<T>(copy));
  row = copy;
}

}  // namespace rnnsearch
