#pragma once
// The alignment output (docs/design.md §1.8): where each target word comes from, computed once
// the word is known. The decoder's attention α_i is computed before y_i is chosen (it is
// where the model looks to predict the next word); this output sees the word it aligns
// (target foresight, Peter et al. 2017) and is trained on word links of the training pairs
// (--guided-alignment), as Garg et al. (2019) train theirs. For target position i of sentence
// b (a row of R = T*B, time-major) with the output layer's input x_i = [s, E_{i-1}, c_i]:
//
//   u_i  = [x_i, E_{y_i}, E_{y_{i+1}}]    R × (n+e+2n+2e)  the query's input: what predicted
//                                                            y_i, y_i itself and the word after
//                                                            it (<pad> after </s>)
//   q_i  = u_i aln_W                      R × N
//   K_j  = a_j aln_U + aln_b              Bs*S × N          over the encoder's annotations
//   β_ij = softmax_j(aln_v · tanh(q_i + K_j))   R × S       (padding gets 0)
//
// β is what translations, scores, `align -m` and the heatmaps show as their alignment when
// the model has this output. It is trained by guided alignment's cost on β
// (guided_alignment.h). Its gradient reaches u and the annotations only when asked
// (--alignment-output-backprop): by default the translation model is left as it would be
// without it, and only aln_* learn from the links.
#include <vector>

#include "rnnsearch/model/attention.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

// Matrices are kept at their largest size and used through their top rows (rows_of).
template <class T>
struct AlignmentOutputWorkspace {
  Index rows = 0;       // R
  std::vector<int> words;       // R  the word y_i each row aligns
  std::vector<int> next_words;  // R  the word after it, y_{i+1} (<pad> after </s>)
  Mat<T> input;         // R × (n+e+2n+2e)  u (the caller fills it: rows_of(input, R, …))
  Mat<T> queries;       // R × N
  Mat<T> keys;          // Bs*S × N
  Mat<T> alpha;         // R × S  β
  Mat<T> context;       // R × 2n  Σ_j β_ij a_j (attention_forward's; not used)
  Mat<T> scratch;
  // backward
  Mat<T> dalpha;        // R × S  the cost's gradient on β (the caller's)
  Mat<T> dcontext;      // R × 2n  zero: nothing reads the context
  Mat<T> dqueries;      // R × N
  Mat<T> dkeys;         // Bs*S × N
  Mat<T> dinput;        // R × (n+e+2n+2e)  with backprop
  Mat<T> dannotations;  // Bs*S × 2n        with backprop
};

// The source side: the annotations of Bs sentences of S positions (batch-major, rows b*S + j,
// as EncoderWorkspace; the matrix may have more rows) and each sentence's length (</s> included).
template <class T>
struct AlignmentSource {
  const Mat<T>* annotations;
  Index sentences, max_len;  // Bs, S
  const int* lengths;
};

// row_sentence: the sentence of each of the ws.rows rows of ws.input. Writes ws.alpha (R × S).
template <class T>
void alignment_output_forward(const Parameters<T>& params, const AlignmentSource<T>& source, const int* row_sentence,
                              AlignmentOutputWorkspace<T>& ws);

// From ws.dalpha (R × S): accumulates into grads' aln_W, aln_U, aln_b, aln_v; with
// to_inputs, also writes ws.dinput and ws.dannotations (Bs*S × 2n).
template <class T>
void alignment_output_backward(const Parameters<T>& params, const AlignmentSource<T>& source, const int* row_sentence,
                               bool to_inputs, AlignmentOutputWorkspace<T>& ws, Parameters<T>& grads);

}  // namespace rnnsearch
