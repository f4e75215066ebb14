#pragma once
// Matrix types. Everything is row-major so that (1) a batch of B vectors is B contiguous
// rows, (2) the time steps of a time-major sequence are contiguous row blocks
// (rows t*B .. t*B+B-1), and (3) the .npz arrays (C order) map onto parameters without a copy.
#include <Eigen/Dense>
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace rnnsearch {

// Who multiplies the matrices: "onednn" (float products; OpenBLAS for the rest) or "openblas"
// when CMake found them (EIGEN_USE_BLAS), else "eigen".
#ifndef RNNSEARCH_GEMM
#define RNNSEARCH_GEMM "eigen"
#endif
constexpr const char* kGemmBackend = RNNSEARCH_GEMM;

using Index = Eigen::Index;
template <class T> using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T> using RowVec = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <class T> using MatMap = Eigen::Map<Mat<T>>;
template <class T> using ConstMatMap = Eigen::Map<const Mat<T>>;
// References to blocks of the above, with the stride Eigen would choose spelled out: clang
// mangles the default (a dependent conditional<...>::type) differently in an explicit
// instantiation and at its call sites, so the math instantiated in the .cpp files would not
// link (clang 14; GCC is consistent).
template <class T> using MatRef = Eigen::Ref<Mat<T>, 0, Eigen::OuterStride<>>;
template <class T> using MatCRef = Eigen::Ref<const Mat<T>, 0, Eigen::OuterStride<>>;
template <class T> using RowVecRef = Eigen::Ref<RowVec<T>, 0, Eigen::InnerStride<1>>;
template <class T> using RowVecCRef = Eigen::Ref<const RowVec<T>, 0, Eigen::InnerStride<1>>;
template <class T> using RowVecMap = Eigen::Map<RowVec<T>>;
template <class T> using ConstRowVecMap = Eigen::Map<const RowVec<T>>;

// Flat buffers (parameters, gradients, optimizer moments) start on a vector-register
// boundary: then how a vectorised loop splits them into a scalar head, packets and a scalar
// tail is the same in every process, which keeps a resumed run bit-identical to an
// uninterrupted one (a malloc'ed buffer's address mod 64 varies from run to run).
template <class T> using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

// A flat buffer someone else owns: an AlignedVector's, or memory the MPI ranks of one host
// share (train/weight_partition.h). FlatSpan<const T> is made from either, and from a
// FlatSpan<T>.
template <class T>
class FlatSpan {
 public:
  using value_type = std::remove_const_t<T>;
  using iterator = T*;
  using const_iterator = T*;
  FlatSpan() = default;
  FlatSpan(T* data, size_t size) : data_(data), size_(size) {}
  // (lvalues only: a span of a temporary vector would dangle)
  template <class C, class = std::enable_if_t<std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>>
  FlatSpan(C& buffer) : data_(buffer.data()), size_(buffer.size()) {}  // NOLINT: as std::span's
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  FlatSpan(FlatSpan<U> other) : data_(other.data()), size_(other.size()) {}  // NOLINT: T* to const T*
  T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t k) const { return data_[k]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

template <class T, class U>
bool operator==(FlatSpan<T> a, FlatSpan<U> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Workspace matrices grow to the largest batch seen and are then reused: callers take
// m.topRows(rows). Only a larger batch than any before allocates.
//
// The old buffer is released before the new one is allocated: Eigen's resize frees it and
// then allocates, and when that allocation throws (std::bad_alloc), the matrix would keep
// the freed pointer and free it again in its destructor.
template <class T>
auto rows_of(Mat<T>& m, Index rows, Index cols) {
  if (m.cols() != cols || m.rows() < rows) {
    m = Mat<T>();
    m.resize(rows, cols);
  }
  return m.topRows(rows);
}

// Rows t*B .. t*B+B-1 of a time-major (or batch-major, with the roles swapped) matrix.
template <class M>
auto step_rows(M&& m, Index t, Index B) {
  return m.middleRows(t * B, B);
}

}  // namespace rnnsearch
