#include "rnnsearch/decode/sampling.h"

namespace rnnsearch {

namespace {

// SplitMix64's output function: a bijection of 64-bit words whose outputs for consecutive
// inputs pass BigCrush.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

double sampling_uniform(uint64_t seed, uint64_t key, uint64_t sample, uint64_t step) {
  const uint64_t bits = mix(mix(mix(mix(seed) ^ key) ^ sample) ^ step);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // the top 53 bits: [0, 1)
}

}  // namespace rnnsearch
