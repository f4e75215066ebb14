#include "rnnsearch/model/decoder_step.h"

#include "rnnsearch/model/attention.h"
#include "rnnsearch/model/gru.h"

namespace rnnsearch {

template <class T>
void decoder_step(const Parameters<T>& params, const EncoderWorkspace<T>& encoder, const int* row_sentence,
                  const Eigen::Ref<const Mat<T>>& s_prev, const int* y_prev, DecoderStepWorkspace<T>& ws) {
  const ModelConfig& cfg = params.config();
  const Index R = s_prev.rows(), n = cfg.hidden, e = cfg.emb, S = encoder.max_len;
  // E = tgt_emb[y_prev]
  auto E = rows_of(ws.E, R, e);
  for (Index r = 0; r < R; ++r) E.row(r) = params.mat(tgt_emb).row(y_prev[r]);
  // q = s_prev att_W;  α, c = attention(q)
  auto queries = rows_of(ws.queries, R, n);
  queries.noalias() = s_prev * params.mat(att_W);
  auto alpha = rows_of(ws.alpha, R, S);
  auto X = rows_of(ws.X, R, cfg.output_input());  // [s, E, c]: c is written in place
  auto context = X.rightCols(2 * n);
  const AttentionMemory<T> memory{&encoder.annotations, &encoder.keys, S, encoder.lengths.data()};
  attention_forward<T>(queries, memory, row_sentence, params.vec(att_v), alpha, context, ws.attention_scratch);
  // g = E dec_W + dec_b + c dec_C
  auto g = rows_of(ws.g, R, 3 * n);
  g.noalias() = E * params.mat(dec_W);
  g.noalias() += context * params.mat(dec_C);
  g.rowwise() += params.vec(dec_b);
  // s = GRU(g, s_prev)
  ws.moving.assign(R, T(1));
  auto states = rows_of(ws.states, R, n);
  gru_step_forward<T>(g, s_prev, params.mat(dec_U), ws.moving.data(), {rows_of(ws.gates, R, 3 * n), rows_of(ws.r_h, R, n)},
                      states);
  // log p(y | ...) from [s_prev (maxout) or s (linear), E, c]
  if (cfg.output == OutputKind::maxout)
    X.leftCols(n) = s_prev;
  else
    X.leftCols(n) = states;
  X.middleCols(n, e) = E;
  auto log_probs = rows_of(ws.log_probs, R, cfg.tgt_vocab);
  output_forward<T>(params, X, ws.output, log_probs);
  log_softmax_rows<T>(log_probs);
}

template void decoder_step<float>(const Parameters<float>&, const EncoderWorkspace<float>&, const int*,
                                  const Eigen::Ref<const Mat<float>>&, const int*, DecoderStepWorkspace<float>&);
template void decoder_step<double>(const Parameters<double>&, const EncoderWorkspace<double>&, const int*,
                                   const Eigen::Ref<const Mat<double>>&, const int*, DecoderStepWorkspace<double>&);

}  // namespace rnnsearch
