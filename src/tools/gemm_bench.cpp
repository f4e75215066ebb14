// gemm_bench: single-core GFLOP/s of the matrix products rnnsearch spends its time in, for
// Eigen's own kernels and for every BLAS library installed (OpenBLAS builds, BLIS), side by
// side in one run. The build uses OpenBLAS when it is installed (CMakeLists.txt); this shows
// what that choice is worth on the CPU at hand.
//
//   build/gemm_bench [SECONDS_PER_MEASUREMENT]   (default 1; median of the repetitions)
//
// Built without EIGEN_USE_BLAS and without rnnsearch's library, so that "eigen" really is
// Eigen's kernel; each BLAS is dlopen'ed and called through its Fortran sgemm_.
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                       const int*, const float*, const int*, const float*, float*, const int*);

// C (m×n) = op(A) op(B) with inner dimension k, row-major as in rnnsearch.
struct Shape {
  const char* what;
  int m, k, n;
  bool transpose_a, transpose_b;
};

// Preset small (e=128, n=256, l=256, Vt=7,882), batch 64 split over 2 threads.
const Shape kShapes[] = {
    {"output fwd   t·out_Wo        256×256·256×7882", 256, 256, 7882, false, false},
    {"output bwd   tᵀ·dlogits      256×256·256×7882", 256, 256, 7882, true, false},
    {"output bwd   dlogits·out_Woᵀ 256×7882·7882×256", 256, 7882, 256, false, true},
    {"output fwd   tied, l=e=128   256×128·128×7882", 256, 128, 7882, false, false},
    {"decoder step s·dec_U         32×256·256×768", 32, 256, 768, false, false},
    {"input proj.  E·dec_W         448×128·128×768", 448, 128, 768, false, false},
    {"weight grad  sᵀ·dg           256×448·448×768", 256, 448, 768, true, false},
    {"beam 5 × 32  t·out_Wo        160×256·256×7882", 160, 256, 7882, false, false},
    {"square                       2048³", 2048, 2048, 2048, false, false},
};

// Debian's BLAS builds, where their packages put them.
const char* kLibraries[][2] = {
    {"openblas-openmp", "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"},
    {"openblas-serial", "/usr/lib/x86_64-linux-gnu/openblas-serial/libopenblas.so.0"},
    {"openblas-pthread", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"},
    {"blis-openmp", "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4"},
    {"blis-serial", "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4"},
    {"blis-pthread", "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4"},
};

// GFLOP/s of the median repetition of f, repeated for at least `seconds` (5 at least).
template <class F>
double gflops(F f, double flop, double seconds) {
  using Clock = std::chrono::steady_clock;
  f();  // warm-up: first-touch of C, the library's buffers
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const auto t0 = Clock::now();
    f();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return flop / times[times.size() / 2] / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  // One core: inside training each thread multiplies its own shard.
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("BLIS_NUM_THREADS", "1", 1);
  std::vector<std::pair<std::string, Sgemm>> backends;
  for (const auto& [name, path] : kLibraries) {
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) continue;
    if (auto sgemm = reinterpret_cast<Sgemm>(dlsym(library, "sgemm_"))) backends.emplace_back(name, sgemm);
  }
  std::printf("GFLOP/s on one core (median of repetitions over %.1f s each)\n", seconds);
  std::printf("%-48s %9s", "product", "eigen");
  for (const auto& backend : backends) std::printf(" %16s", backend.first.c_str());
  std::printf("\n");
  for (const Shape& s : kShapes) {
    const Mat A = Mat::Random(s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k);
    const Mat B = Mat::Random(s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n);
    Mat C(s.m, s.n);
    const double flop = 2.0 * s.m * s.k * s.n;
    std::printf("%-48s %9.1f", s.what, gflops([&] {
                  if (s.transpose_a)
                    C.noalias() = A.transpose() * B;
                  else if (s.transpose_b)
                    C.noalias() = A * B.transpose();
                  else
                    C.noalias() = A * B;
                }, flop, seconds));
    // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: B's buffer comes first.
    const char op_a = s.transpose_a ? 'T' : 'N', op_b = s.transpose_b ? 'T' : 'N';
    const int lda = static_cast<int>(A.cols()), ldb = static_cast<int>(B.cols()), ldc = s.n;
    const float one = 1, zero = 0;
    for (const auto& backend : backends)
      std::printf(" %16.1f", gflops([&] {
                    backend.second(&op_b, &op_a, &s.n, &s.m, &s.k, &one, B.data(), &ldb, A.data(), &lda, &zero,
                                   C.data(), &ldc);
                  }, flop, seconds));
    std::printf("\n");
  }
  return 0;
}
