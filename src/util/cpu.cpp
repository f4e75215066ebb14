#include "rnnsearch/util/cpu.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/util/checks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define RNNSEARCH_X86 1
#endif
#ifdef RNNSEARCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace rnnsearch {

namespace {

// The CPU as it is, uncapped.
CpuFeatures detect() {
  CpuFeatures f;
#ifdef RNNSEARCH_X86
  f.x86 = true;
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
  f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni");
  // AVX-VNNI: CPUID leaf 7, subleaf 1, EAX bit 4 (Clang 14's __builtin_cpu_supports does not know it)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  f.avx_vnni = f.avx2 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && ((eax >> 4) & 1u) != 0;
#endif
  return f;
}

// Takes away what the cap excludes, and tells oneDNN the same.
void apply_cap(CpuFeatures& f) {
  if (f.cap == "native") {
  } else if (f.cap == "avx512") {
    f.avx512_bf16 = f.avx512_vnni = f.avx_vnni = false;
  } else if (f.cap == "avx2") {
    f.avx512 = f.avx512_bf16 = f.avx512_vnni = f.avx_vnni = false;
  } else if (f.cap == "sse41") {
    f.avx2 = f.avx512 = f.avx512_bf16 = f.avx512_vnni = f.avx_vnni = false;
  } else {
    throw Error("RNNSEARCH_CPU must be native, avx512, avx2 or sse41, not '" + f.cap + "'");
  }
#ifdef RNNSEARCH_HAVE_ONEDNN
  if (f.cap == "avx512") dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core);
  if (f.cap == "avx2") dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2);
  if (f.cap == "sse41") dnnl_set_max_cpu_isa(dnnl_cpu_isa_sse41);
  // What oneDNN will use (its ONEDNN_MAX_CPU_ISA may cap it further): a feature whose
  // kernels it will not run is not there for rnnsearch either.
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto has = [isa](dnnl_cpu_isa_t needed) { return (isa & needed) == static_cast<unsigned>(needed); };
  if (!has(dnnl_cpu_isa_avx2)) f.avx2 = f.avx_vnni = false;
  if (!has(dnnl_cpu_isa_avx2_vnni)) f.avx_vnni = false;
  if (!has(dnnl_cpu_isa_avx512_core)) f.avx512 = f.avx512_bf16 = f.avx512_vnni = false;
  if (!has(dnnl_cpu_isa_avx512_core_vnni)) f.avx512_vnni = false;
  if (!has(dnnl_cpu_isa_avx512_core_bf16)) f.avx512_bf16 = false;
  // (oneDNN also asks the kernel for the tiles.) Cleared with the other AVX-512 features too,
  // should oneDNN have been used before the cap could reach it.
  f.amx = f.avx512_bf16 && f.avx512_vnni && has(dnnl_cpu_isa_avx512_core_amx);
#endif
}

CpuFeatures read_features() {
  CpuFeatures f = detect();
  const char* cap = std::getenv("RNNSEARCH_CPU");
  f.cap = cap && *cap ? cap : "native";
  apply_cap(f);
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = read_features();
  return features;
}

std::string describe(const CpuFeatures& f) {
  std::string text;
  const auto add = [&text](bool present, const char* name) {
    if (present) text += (text.empty() ? "" : " ") + std::string(name);
  };
  add(f.avx2, "avx2");
  add(f.avx512, "avx512");
  add(f.avx512_bf16, "avx512_bf16");
  add(f.avx512_vnni, "avx512_vnni");
  add(f.avx_vnni, "avx_vnni");
  add(f.amx, "amx");
  if (text.empty()) text = f.x86 ? "sse" : "not x86";
  if (f.cap != "native") text += " (RNNSEARCH_CPU=" + f.cap + ")";
  return text;
}

int set_threads(int requested) {
  check_at_least("threads", requested, 0);
  const int hardware = omp_get_num_procs();
  if (requested > kMaxThreads)
    throw Error("--threads must be at most " + std::to_string(kMaxThreads) + ", not " + std::to_string(requested) +
                " (this machine runs " + std::to_string(hardware) + " threads at once)");
  int threads = requested > 0 ? requested : hardware;
  std::string source = "--threads " + std::to_string(requested);  // where the count came from
  if (requested == 0)
    if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);  // "4" or "4,2" (nested levels: the first)
      if (end != env && (*end == '\0' || *end == ',') && n > 0) {
        threads = static_cast<int>(std::min<long>(n, kMaxThreads));
        source = "OMP_NUM_THREADS=" + std::string(env);
      } else {
        std::cerr << "rnnsearch: warning: OMP_NUM_THREADS='" << env
                  << "' is not a whole number > 0: using a thread per core (" << hardware << ")\n";
      }
    }
  if (threads > kThreadsPerCore * hardware) {
    threads = kThreadsPerCore * hardware;
    std::cerr << "rnnsearch: " << source << " is more than " << kThreadsPerCore << " times the hardware threads here ("
              << hardware << "): using " << threads << "\n";
  }
  omp_set_num_threads(threads);
  return threads;
}

void run_on_every_openmp_place() {
  // The union of the places, fixed when OpenMP starts: read once, on the first call (the
  // exchange thread calls this every update). Empty where OpenMP binds nothing.
  static const std::optional<cpu_set_t> every = []() -> std::optional<cpu_set_t> {
    const int places = omp_get_num_places();
    if (places == 0) return std::nullopt;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    std::vector<int> ids;
    for (int place = 0; place < places; ++place) {
      ids.resize(omp_get_place_num_procs(place));
      omp_get_place_proc_ids(place, ids.data());
      for (const int id : ids)
        if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &cpus);
    }
    return cpus;
  }();
  if (every) sched_setaffinity(0, sizeof *every, &*every);  // 0: this thread. Refused, it stays where it was
}

}  // namespace rnnsearch
