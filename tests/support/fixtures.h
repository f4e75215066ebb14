#pragma once
// Shared test fixtures: the tiny model configurations the model, decoding and CLI tests
// build their random models from.
#include "rnnsearch/model/config.h"

namespace rnnsearch::test {

// Built with AddressSanitizer (scripts/sanitize.sh)? It reserves terabytes of address space,
// so tests that run under an address-space limit (ulimit -v) cannot run then.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// A model small enough to check by brute force or finite differences: e=4, n=5, l=3 unless
// a test needs other sizes (e.g. distinct ones, so that a shape names its dimension).
inline ModelConfig tiny_config(int src_vocab, int tgt_vocab, OutputKind output = OutputKind::maxout,
                               int emb = 4, int hidden = 5, int maxout = 3) {
  ModelConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.emb = emb;
  c.hidden = hidden;
  c.maxout = maxout;
  c.output = output;
  return c;
}

}  // namespace rnnsearch::test
