#pragma once
// Guided alignment (Chen et al. 2016; Marian's --guided-alignment; docs/design.md §1.6): a
// cost that pulls the attention α of training towards given links between the pieces of
// each pair (Batch::links). Target position i of sentence b with links gets the distribution
// A_i uniform over the source positions it is linked to (A_ij = 1 / links of i); positions
// without links add nothing:
//
//   ce:   cost = w Σ_{b, i linked} Σ_j −A_ij log(α_ij + ε)     ∂cost/∂α_ij = −w A_ij / (α_ij + ε)
//   mse:  cost = w Σ_{b, i linked} Σ_j ½ (α_ij − A_ij)²         ∂cost/∂α_ij = w (α_ij − A_ij)
//
// (j over the sentence's source positions, </s> included; ε = 1e-6 as Marian, so that the
// log stays finite where a float softmax underflows). With unlinked_to_end (the alignment
// output, alignment_output.h), a target position without links in a pair that has some is
// linked to the source's </s> alone (A_i = onehot(</s>)): </s> is the empty word, and the
// output learns to leave unaligned what the links leave unaligned (argmax on </s>: no link). Training adds it to the translation
// cost, so that it is divided by the update's target tokens like the rest.
#include <string>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/text/batcher.h"

namespace rnnsearch {

enum class GuidedAlignmentCost { ce, mse };
// "ce" or "mse"; throws rnnsearch::Error naming --guided-alignment-cost and the choices.
GuidedAlignmentCost parse_guided_alignment_cost(const std::string& name);
const char* guided_alignment_cost_name(GuidedAlignmentCost cost);

// alpha: T*B × S, row i*B + b (time-major, as ModelWorkspace::alpha). Returns the cost;
// with dalpha, also writes scale × ∂cost/∂α into it (resized to alpha's shape, zero where
// nothing is linked).
template <class T>
T guided_alignment_cost(const MatCRef<T>& alpha, const Batch& batch, GuidedAlignmentCost kind, T weight, T scale,
                        Mat<T>* dalpha, bool unlinked_to_end = false);

}  // namespace rnnsearch
