#pragma once
// splitmix64: turns related seeds ((run seed, epoch), (run seed, update, shard)) into
// decorrelated ones, so that every random draw of a run depends only on where it happens
// and a resumed run repeats an uninterrupted one.
#include <cstdint>

namespace rnnsearch {

inline uint64_t mix_seed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace rnnsearch
