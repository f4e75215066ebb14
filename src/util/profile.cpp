#include "rnnsearch/util/profile.h"

#include <omp.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <iterator>

namespace rnnsearch::profile {
namespace {

constexpr int kMaxThreads = 64;
constexpr const char* kNames[] = {
    "batching",         "encoder forward",      "attention forward",  "decoder GRU forward",
    "output + softmax", "output layer fwd+bwd",      "decoder GRU backward", "attention backward",
    "decoder weight gradients", "encoder backward", "gradient sum",     "clip + optimizer",
    "MPI gradients + weights", "MPI waiting for ranks", "MPI optimizer state"};
static_assert(std::size(kNames) == kNumPhases, "one name per profile::Phase");

bool g_enabled = false;
// [thread][phase] seconds; padded rows so threads do not share cache lines.
struct alignas(64) ThreadTimes {
  std::array<double, kNumPhases> seconds{};
};
std::array<ThreadTimes, kMaxThreads> g_times;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void enable(bool on) { g_enabled = on; }
bool enabled() { return g_enabled; }

void add(Phase phase, double seconds) { g_times[omp_get_thread_num() % kMaxThreads].seconds[static_cast<int>(phase)] += seconds; }

void reset() {
  for (ThreadTimes& t : g_times) t.seconds.fill(0);
}

std::string report(long updates) {
  std::array<double, kNumPhases> total{};
  double sum = 0;
  for (const ThreadTimes& t : g_times)
    for (int p = 0; p < kNumPhases; ++p) total[p] += t.seconds[p];
  for (double s : total) sum += s;
  std::string out = "time by phase (CPU seconds summed over threads, " + std::to_string(updates) + " updates):\n";
  char line[160];
  for (int p = 0; p < kNumPhases; ++p) {
    std::snprintf(line, sizeof line, "  %-26s %8.2f s %5.1f%% %8.2f ms/update\n", kNames[p], total[p],
                  sum > 0 ? 100 * total[p] / sum : 0.0, updates > 0 ? 1000 * total[p] / updates : 0.0);
    out += line;
  }
  return out;
}

ScopedPhase::ScopedPhase(Phase phase) : phase_(phase), start_ns_(g_enabled ? now_ns() : 0) {}

ScopedPhase::~ScopedPhase() {
  if (start_ns_) add(phase_, 1e-9 * static_cast<double>(now_ns() - start_ns_));
}

}  // namespace rnnsearch::profile
