#pragma once
// What the CPU can do, read in one place, and how much of it rnnsearch may use.
//
// The precisions (--precision auto, bf16, int8) and oneDNN's kernels depend on the CPU. The
// environment variable RNNSEARCH_CPU caps what rnnsearch uses, so that a machine with a fast
// path can run the fallback a smaller CPU takes (the test suite runs twice this way) and a
// user can get the same, reproducible fp32 results on every machine:
//
//   RNNSEARCH_CPU=native   everything the CPU has (the default)
//   RNNSEARCH_CPU=avx512   AVX-512 without AVX512_BF16, VNNI and AMX
//   RNNSEARCH_CPU=avx2     AVX2 and FMA, no AVX-512, no VNNI
//   RNNSEARCH_CPU=sse41    SSE4.1 only
//
// (docs/building.md, Building for another CPU, names CPUs of each class.)
//
// The cap also caps oneDNN (as its own ONEDNN_MAX_CPU_ISA does, which is honoured too). It
// does not change what the compiler generated: a binary built with -march=native on an
// AVX-512 CPU still runs AVX-512 instructions in Eigen's element-wise code (docs/building.md: build
// with -DRNNSEARCH_MARCH=x86-64-v3 to reproduce an AVX2 machine exactly).
#include <string>

namespace rnnsearch {

struct CpuFeatures {
  std::string cap;            // RNNSEARCH_CPU's value, "native" when unset
  bool x86 = false;           // an x86-64 CPU (the flags below are false elsewhere)
  bool avx2 = false;          // AVX2 and FMA
  bool avx512 = false;        // AVX-512 F, BW, VL, DQ (oneDNN's avx512_core)
  bool avx512_bf16 = false;   // bf16 dot products (kernels/bf16.h)
  bool avx512_vnni = false;   // int8 dot products, AVX-512 encoding (kernels/int8.h)
  bool avx_vnni = false;      // int8 dot products, AVX2 (VEX) encoding
  bool amx = false;           // int8 and bf16 tile products (oneDNN's avx512_core_amx; kernels/int8.h)
};

// The CPU's features less what RNNSEARCH_CPU takes away; read once, on the first call, which
// also applies the cap to oneDNN: call it before any matrix product (the command line does it
// first thing). An unknown RNNSEARCH_CPU value throws rnnsearch::Error.
const CpuFeatures& cpu_features();

// One line for logs and tools: "avx2 fma (RNNSEARCH_CPU=avx2)", "avx512 avx512_bf16 ...".
std::string describe(const CpuFeatures& features);

// --threads N applied to OpenMP in the calling thread; returns the number used. N = 0, every
// command's and Python's default: OpenMP's own default, OMP_NUM_THREADS when it is set to a
// whole number > 0 (its first one), else a thread per core this process may run on. More than kThreadsPerCore × the hardware threads this process may run on only adds
// waiting (each thread decodes or trains its own share), so such an N is capped there, with
// a warning on stderr; above kMaxThreads (the runtime fails to create tens of thousands of
// threads, and each holds its own workspaces) it is refused. Throws rnnsearch::Error if
// N < 0 or N > kMaxThreads, naming the option.
constexpr int kThreadsPerCore = 4;
constexpr int kMaxThreads = 1024;
int set_threads(int requested);

// Lets the calling thread run on every CPU of OpenMP's places. Under OMP_PROC_BIND (with
// OMP_PLACES or its default) each OpenMP worker is bound to its own place, and a thread it
// starts inherits that one place: the overlapped ring's exchange thread, started by the last
// shard's worker (train/weight_partition.h), would do its sums and poll MPI on that
// worker's core alone, taking it from the worker whose backward pass the update waits for.
// Does nothing where OpenMP binds nothing (no places): such a thread may already run
// anywhere the process may.
void run_on_every_openmp_place();

}  // namespace rnnsearch
