#pragma once
// Inverted dropout (docs/design.md §1): while training, an activation x becomes x ∘ m with
// m_k = 0 with probability rate, else 1/(1-rate), so its expectation is unchanged and
// translation needs no rescaling. The backward multiplies the gradient by the same mask.
//
// Masks are drawn from a seed, not from a global generator: the same seed gives the same
// mask, so a resumed run repeats the masks of an uninterrupted one and the gradient checks
// can evaluate the cost twice with identical masks.
#include <cstdint>
#include <vector>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/util/seed.h"

namespace rnnsearch {

// Fills mask (any shape) with 0 (probability rate) or 1/(1-rate); with rate 0, with 1.
template <class T>
void draw_dropout_mask(MatRef<T> mask, double rate, uint64_t seed);

// Word dropout (--dropout-src / --dropout-trg, named as Marian's; Gal and Ghahramani 2016):
// row r of mask, one token of one sentence, is multiplied by keep_r = 0 (probability rate)
// or 1/(1-rate), so a dropped token's whole embedding is zero rather than single units of
// it. keep (resized to mask.rows()) receives each row's factor, for the token's other uses.
template <class T>
void drop_words(MatRef<T> mask, double rate, uint64_t seed, std::vector<T>& keep);

// Recurrent dropout (--dropout-rnn) draws one mask for each GRU transition: the k-th of a
// family seeded by seed is drawn from mask_seed(seed, k), a decorrelated seed of its own.
inline uint64_t mask_seed(uint64_t seed, uint64_t k) { return mix_seed(seed ^ mix_seed(k)); }

}  // namespace rnnsearch
