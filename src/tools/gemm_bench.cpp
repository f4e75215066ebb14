// gemm_bench: single-core GFLOP/s of the matrix products rnnsearch spends its time in, for
// Eigen's own kernels and for every BLAS library installed (OpenBLAS builds, BLIS), side by
// side in one run. The build uses OpenBLAS when it is installed (CMakeLists.txt); this shows
// what that choice is worth on the CPU at hand.
//
//   build/gemm_bench [SECONDS_PER_MEASUREMENT]   (default 1; median of the repetitions)
//
// Built without EIGEN_USE_BLAS and without rnnsearch's library, so that "eigen" really is
// Eigen's kernel; each BLAS is dlopen'ed and called through its Fortran sgemm_. With oneDNN
// (libdnnl-dev) installed at build time, its matmul joins in fp32, in bf16 (fp32 sums;
// "dnnl-bf16" with both operands already in bf16, "+convert" including their conversion from
// fp32, which training would pay on every call) and in int8 (int32 sums, translate --precision
// int8: its matmul, and the gemm_s8s8s32 that rnnsearch calls and its u8 × s8 form, in billions
// of integer operations per second). A kernel the CPU cannot run
// (bf16 without AVX-512) shows "-", and the last lines name the oneDNN kernel of each column.
// oneDNN's ONEDNN_MAX_CPU_ISA (e.g. AVX2) shows what a smaller CPU would get.
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#ifdef GEMM_BENCH_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "rnnsearch/kernels/onednn_version.h"
#endif

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

// Debian's BLAS builds, where their packages put them: GEMM_BENCH_LIBDIR is the multiarch
// library directory the build targets (CMakeLists.txt), /usr/lib/x86_64-linux-gnu on amd64,
// /usr/lib/aarch64-linux-gnu on arm64.
#ifndef GEMM_BENCH_LIBDIR
#error "GEMM_BENCH_LIBDIR: the multiarch library directory, e.g. \"/usr/lib/x86_64-linux-gnu\""
#endif
const char* kLibraries[][2] = {
    {"openblas-openmp", GEMM_BENCH_LIBDIR "/openblas-openmp/libopenblas.so.0"},
    {"openblas-serial", GEMM_BENCH_LIBDIR "/openblas-serial/libopenblas.so.0"},
    {"openblas-pthread", GEMM_BENCH_LIBDIR "/openblas-pthread/libopenblas.so.0"},
    {"blis-openmp", GEMM_BENCH_LIBDIR "/blis-openmp/libblis.so.4"},
    {"blis-serial", GEMM_BENCH_LIBDIR "/blis-serial/libblis.so.4"},
    {"blis-pthread", GEMM_BENCH_LIBDIR "/blis-pthread/libblis.so.4"},
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

#ifdef GEMM_BENCH_DNNL
// oneDNN's matmul C = op(A) op(B) for one shape and operand data type (C in fp32, or int32
// for int8 operands); a transposed operand is the same buffer read with swapped strides
// (format tag ba), as rnnsearch's Eigen expressions do. Throws dnnl::error where the CPU has
// no kernel for the type.
class DnnlMatmul {
 public:
  DnnlMatmul(const Shape& s, dnnl::memory::data_type type)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), a_dims_{s.m, s.k}, b_dims_{s.k, s.n},
        a_transposed_(s.transpose_a), b_transposed_(s.transpose_b) {
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc a(a_dims_, type, layout(a_transposed_));
    const dnnl::memory::desc b(b_dims_, type, layout(b_transposed_));
    const dnnl::memory::desc c({s.m, s.n}, type == dt::s8 ? dt::s32 : dt::f32, layout(false));
    const dnnl::matmul::primitive_desc pd = rnnsearch::onednn_matmul_descriptor(engine_, a, b, c);
    kernel_ = pd.impl_info_str();
    matmul_ = dnnl::matmul(pd);
    a_ = dnnl::memory(a, engine_);
    b_ = dnnl::memory(b, engine_);
    c_ = dnnl::memory(c, engine_);
  }
  // Fills the operands from fp32 buffers (converting them when the type is bf16 or int8).
  void load(const float* a, const float* b) {
    convert(a, a_dims_, a_transposed_, a_);
    convert(b, b_dims_, b_transposed_, b_);
  }
  void run() {
    matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    stream_.wait();
  }
  const std::string& kernel() const { return kernel_; }

 private:
  static dnnl::memory::format_tag layout(bool transposed) {
    return transposed ? dnnl::memory::format_tag::ba : dnnl::memory::format_tag::ab;
  }
  // A transposed operand's fp32 buffer is stored as its transpose: read with the same layout.
  void convert(const float* from, const dnnl::memory::dims& dims, bool transposed, dnnl::memory& to) {
    const dnnl::memory::desc desc(dims, dnnl::memory::data_type::f32, layout(transposed));
    dnnl::memory source(desc, engine_, const_cast<float*>(from));
    dnnl::reorder(source, to).execute(stream_, source, to);
    stream_.wait();
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory::dims a_dims_, b_dims_;
  bool a_transposed_, b_transposed_;
  dnnl::memory a_, b_, c_;
  std::string kernel_;
};
#endif

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  // One core: inside training each thread multiplies its own shard.
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("BLIS_NUM_THREADS", "1", 1);
#ifdef GEMM_BENCH_DNNL
  omp_set_num_threads(1);
#endif
  std::vector<std::pair<std::string, Sgemm>> backends;
  for (const auto& [name, path] : kLibraries) {
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) continue;
    if (auto sgemm = reinterpret_cast<Sgemm>(dlsym(library, "sgemm_"))) backends.emplace_back(name, sgemm);
  }
  std::printf("GFLOP/s on one core (median of repetitions over %.1f s each)\n", seconds);
  std::printf("%-48s %9s", "product", "eigen");
  for (const auto& backend : backends) std::printf(" %16s", backend.first.c_str());
#ifdef GEMM_BENCH_DNNL
  std::printf(" %10s %10s %10s %10s %10s %10s", "dnnl-f32", "dnnl-bf16", "+convert", "matmul-s8", "gemm-s8s8",
              "gemm-u8s8");
  std::map<std::string, std::string> kernels;  // the last shape's, by column
#endif
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
#ifdef GEMM_BENCH_DNNL
    // Each oneDNN column: its kernel's name, or "-" and the reason where the CPU has none.
    const auto dnnl_column = [&](const char* column, dnnl::memory::data_type type, bool with_conversion) {
      try {
        DnnlMatmul matmul(s, type);
        matmul.load(A.data(), B.data());
        kernels[column] = matmul.kernel();
        std::printf(" %10.1f", gflops([&] {
                      if (with_conversion) matmul.load(A.data(), B.data());
                      matmul.run();
                    }, flop, seconds));
      } catch (const dnnl::error& e) {
        kernels[column] = std::string("could not run: ") + e.what();
        std::printf(" %10s", "-");
      }
    };
    dnnl_column("dnnl-f32", dnnl::memory::data_type::f32, false);
    dnnl_column("dnnl-bf16", dnnl::memory::data_type::bf16, false);
    dnnl_column("+convert", dnnl::memory::data_type::bf16, true);
    dnnl_column("matmul-s8", dnnl::memory::data_type::s8, false);
    // The int8 product translate --precision int8 calls (kernels/int8.cpp), and its u8 × s8 form.
    const std::vector<int8_t> a8(static_cast<size_t>(A.size()), 5), b8(static_cast<size_t>(B.size()), -3);
    const std::vector<uint8_t> u8(static_cast<size_t>(A.size()), 5);
    std::vector<int32_t> c32(static_cast<size_t>(C.size()));
    const int32_t no_offset = 0;
    std::printf(" %10.1f", gflops([&] {
                  dnnl_gemm_s8s8s32(op_a, op_b, 'F', s.m, s.n, s.k, 1.0f, a8.data(), lda, 0, b8.data(), ldb, 0, 0.0f,
                                    c32.data(), ldc, &no_offset);
                }, flop, seconds));
    std::printf(" %10.1f", gflops([&] {
                  dnnl_gemm_u8s8s32(op_a, op_b, 'F', s.m, s.n, s.k, 1.0f, u8.data(), lda, 0, b8.data(), ldb, 0, 0.0f,
                                    c32.data(), ldc, &no_offset);
                }, flop, seconds));
#endif
    std::printf("\n");
  }
#ifdef GEMM_BENCH_DNNL
  std::printf("oneDNN %d.%d.%d, CPU ISA 0x%x; kernels of the last product:\n", dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch, static_cast<unsigned>(dnnl_get_effective_cpu_isa()));
  for (const auto& [column, kernel] : kernels) std::printf("  %-10s %s\n", column.c_str(), kernel.c_str());
#endif
  return 0;
}
