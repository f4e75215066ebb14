#include "rnnsearch/model/rnnsearch.h"

#include <optional>
#include <stdexcept>

#include "rnnsearch/model/decoder_step.h"
#include "rnnsearch/text/vocab.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {
namespace {

// Row b of a batch attends to sentence b.
const int* identity_rows(Index B) {
  thread_local std::vector<int> rows;
  if (static_cast<Index>(rows.size()) < B)
    for (Index b = static_cast<Index>(rows.size()); b < B; ++b) rows.push_back(static_cast<int>(b));
  return rows.data();
}

// The output of decoder layer l over all T*B target rows (row i*B + b: after step i): the
// conditional GRU's states s_1..s_T (l = 1), or stacked layer l's (--dec-depth).
template <class T>
MatCRef<T> decoder_layer_output(const Parameters<T>& params, const ModelWorkspace<T>& ws, int l) {
  const Index B = ws.batch, Tn = ws.tgt_len;
  if (l == 1) return ws.states.middleRows(B, Tn * B);
  return gru_layer_output(dec_layer(params.config(), l), ws.layers[l - 2], Tn, B);
}

// Row r = i*B + b of a time-major T*B block attends to sentence b.
const int* time_major_rows(Index Tn, Index B) {
  thread_local std::vector<int> rows;
  rows.resize(static_cast<size_t>(Tn * B));
  for (Index r = 0; r < Tn * B; ++r) rows[r] = static_cast<int>(r % B);
  return rows.data();
}

template <class T>
AlignmentSource<T> alignment_source(const ModelWorkspace<T>& ws) {
  return {&ws.encoder.annotations, ws.batch, ws.encoder.max_len, ws.encoder.lengths.data()};
}

// Where decoder step i writes (rows i*B … of the workspace); grads: where the layer norms'
// dγ and dβ go in the backward.
template <class T>
DecoderRecurrenceOutputs<T> step_outputs(const Parameters<T>& params, ModelWorkspace<T>& ws, Index i,
                                         Parameters<T>* grads) {
  const Index B = ws.batch;
  return {step_rows(ws.queries, i, B),
          step_rows(ws.alpha, i, B),
          step_rows(ws.contexts, i, B),
          {step_rows(ws.gates, i, B), step_rows(ws.r_h, i, B),
           layer_norm_of<T>(params, dec_U, ws.U_norm, i * B, B, grads), ws.dropout.step(i * B, B)},
          step_rows(ws.states, i + 1, B),
          layer_norm_of<T>(params, dec_C, ws.C_norm, i * B, B, grads),
          &ws.cells,
          i * B};
}

// The encoder and the decoder loop, up to the output layer's input X = [s, E, c] of the N
// non-padding target positions (ws.X, ws.out_rows, ws.targets).
template <class T>
void forward_to_output_input(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
                             ModelWorkspace<T>& ws) {
  const ModelConfig& cfg = params.config();
  const Index B = batch.size, S = batch.src_len, Tn = batch.tgt_len;
  const Index n = cfg.hidden, e = cfg.emb, din = cfg.output_input();
  ws.batch = B;
  ws.tgt_len = Tn;
  const bool target_words = regularization.target_word_dropout > 0;
  ws.embedding_dropout = regularization.embedding_dropout > 0 || target_words;
  ws.output_dropout = regularization.output_dropout > 0 || target_words;
  ws.label_smoothing = static_cast<T>(regularization.label_smoothing);
  {
    profile::ScopedPhase phase(profile::Phase::encoder_forward);
    encoder_forward<T>(params, batch.src.data(), batch.src_lengths.data(), B, S, regularization.embedding_dropout,
                       regularization.source_word_dropout, regularization.rnn_dropout, regularization.seed,
                       ws.encoder);
  }

  // Decoder inputs y_{i-1} and which rows move at step i.
  ws.inputs.resize(Tn * B);
  ws.moving.resize(Tn * B);
  for (Index i = 0; i < Tn; ++i)
    for (Index b = 0; b < B; ++b) {
      ws.inputs[i * B + b] = i == 0 ? Vocab::kBos : batch.tgt[(i - 1) * B + b];
      ws.moving[i * B + b] = i < batch.tgt_lengths[b] ? T(1) : T(0);
    }

  // E_i = tgt_emb[y_{i-1}] (∘ dropout of units, and of whole words: ws.word_keep), and its
  // gate projection for all steps in one GEMM
  auto E = rows_of(ws.E, Tn * B, e);
  const auto tgt_embeddings = params.mat(tgt_emb);
  for (Index r = 0; r < Tn * B; ++r) E.row(r) = tgt_embeddings.row(ws.inputs[r]);
  if (ws.embedding_dropout) {
    auto mask = rows_of(ws.E_mask, Tn * B, e);
    draw_dropout_mask<T>(mask, regularization.embedding_dropout, regularization.seed + 1);
    if (target_words) drop_words<T>(mask, regularization.target_word_dropout, regularization.seed + 4, ws.word_keep);
    E.array() *= mask.array();
  }
  if (cfg.layer_norm)
    for (NormBuffers<T>* norm : {&ws.W_norm, &ws.C_norm, &ws.U_norm}) norm->size(Tn * B, 3 * n);
  auto gates = rows_of(ws.gates, Tn * B, 3 * n);
  gru_input_forward<T>(E, params.mat(dec_W), params.vec(dec_b),
                       layer_norm_of<T>(params, dec_W, ws.W_norm, 0, Tn * B, nullptr), gates);

  auto states = rows_of(ws.states, (Tn + 1) * B, n);
  rows_of(ws.queries, Tn * B, n);  // (step_outputs takes each step's rows)
  rows_of(ws.alpha, Tn * B, S);
  rows_of(ws.contexts, Tn * B, 2 * n);
  rows_of(ws.r_h, Tn * B, n);
  // recurrent dropout: the decoder's masks are the family seed + 6, mask k for dec_U (k = 1)
  // and cell k, mask kMaxCellDepth + l the family of stacked layer l's transitions
  const uint64_t rnn_seed = regularization.seed + 6;
  ws.dropout.draw(regularization.rnn_dropout, mask_seed(rnn_seed, 1), B, Tn * B, n);
  ws.cells.resize(cfg.dec_cell_base_depth - 1);
  for (int k = 2; k <= cfg.dec_cell_base_depth; ++k) {
    TransitionBuffers<T>& cell = ws.cells[k - 2];
    cell.size(Tn * B, n, cfg.layer_norm);
    cell.dropout.draw(regularization.rnn_dropout, mask_seed(rnn_seed, static_cast<uint64_t>(k)), B, Tn * B, n);
  }
  step_rows(states, 0, B) = ws.encoder.s0.topRows(B);
  const AttentionMemory<T> memory = attention_memory(ws.encoder);
  for (Index i = 0; i < Tn; ++i)
    decoder_recurrence<T>(params, memory, identity_rows(B), &ws.moving[i * B], step_rows(states, i, B),
                          ws.gru_scratch, ws.attention_scratch, step_outputs<T>(params, ws, i, nullptr));
  // --dec-depth: layers 2..D over all target positions at once, each reading the output of
  // the layer below and starting from s_0 (§1.4)
  const MatCRef<T> s0 = ws.encoder.s0.topRows(B);
  ws.layers.resize(cfg.dec_depth - 1);
  for (int l = 2; l <= cfg.dec_depth; ++l) {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
    gru_layer_forward<T>(params, dec_layer(cfg, l), decoder_layer_output(params, ws, l - 1), ws.moving.data(), Tn, B,
                         &s0, ws.layers[l - 2], ws.gru_scratch, regularization.rnn_dropout,
                         mask_seed(rnn_seed, static_cast<uint64_t>(kMaxCellDepth + l)));
  }

  // The output layer runs once on the N non-padding positions: X = [s, E, c], where E is
  // the embedding itself: the output layer's input has its own dropout mask, not E_mask too
  // (but a word dropped from E dec_W is dropped here as well).
  ws.out_rows.clear();
  ws.targets.clear();
  for (Index i = 0; i < Tn; ++i)
    for (Index b = 0; b < B; ++b)
      if (ws.moving[i * B + b] != T(0)) {
        ws.out_rows.push_back(static_cast<int>(i * B + b));
        ws.targets.push_back(batch.tgt[i * B + b]);
      }
  const Index N = static_cast<Index>(ws.out_rows.size());
  auto X = rows_of(ws.X, N, din);
  const MatCRef<T> top = decoder_layer_output(params, ws, cfg.dec_depth);
  for (Index k = 0; k < N; ++k) {
    const Index i = ws.out_rows[k] / B, b = ws.out_rows[k] % B;
    if (cfg.output_reads_previous_state())
      X.row(k).head(n) = states.row(i * B + b);  // s_{i-1}
    else
      X.row(k).head(n) = top.row(ws.out_rows[k]);  // s_i, or the top layer's output
    X.row(k).segment(n, e) = tgt_embeddings.row(ws.inputs[ws.out_rows[k]]);
    X.row(k).tail(2 * n) = ws.contexts.row(ws.out_rows[k]);
  }
  if (ws.output_dropout) {
    auto mask = rows_of(ws.X_mask, N, din);
    draw_dropout_mask<T>(mask, regularization.output_dropout, regularization.seed + 2);
    if (target_words)
      for (Index k = 0; k < N; ++k) mask.row(k).segment(n, e) *= ws.word_keep[ws.out_rows[k]];
    X.array() *= mask.array();
  }
  ws.token_nll.resize(N);
}

// The alignment output β of every target row (alignment_output.h): its query's input u_i =
// [x_i, E_{y_i}, E_{y_{i+1}}], x_i the output layer's input before dropout.
template <class T>
void alignment_output_of_decoder(const Parameters<T>& params, const Batch& batch, ModelWorkspace<T>& ws) {
  const ModelConfig& cfg = params.config();
  const Index B = ws.batch, Tn = ws.tgt_len, R = Tn * B, n = cfg.hidden, e = cfg.emb;
  AlignmentOutputWorkspace<T>& aln = ws.aln;
  aln.rows = R;
  aln.words.assign(batch.tgt.begin(), batch.tgt.begin() + R);
  aln.next_words.resize(static_cast<size_t>(R));
  for (Index r = 0; r < R; ++r)  // y_{i+1}: <pad> after </s>
    aln.next_words[r] = r / B + 1 < batch.tgt_lengths[r % B] ? batch.tgt[r + B] : Vocab::kPad;
  auto input = rows_of(aln.input, R, cfg.alignment_input());
  const auto embeddings = params.mat(tgt_emb);
  const MatCRef<T> top = decoder_layer_output(params, ws, cfg.dec_depth);
  for (Index r = 0; r < R; ++r) {
    if (cfg.output_reads_previous_state())
      input.row(r).head(n) = ws.states.row(r);  // s_{i-1}
    else
      input.row(r).head(n) = top.row(r);
    input.row(r).segment(n, e) = embeddings.row(ws.inputs[r]);
    input.row(r).segment(n + e, 2 * n) = ws.contexts.row(r);
    input.row(r).segment(n + e + 2 * n, e) = embeddings.row(aln.words[r]);
    input.row(r).tail(e) = embeddings.row(aln.next_words[r]);
  }
  alignment_output_forward<T>(params, alignment_source(ws), time_major_rows(Tn, B), aln);
}

// Does the batch take guided alignment's cost: it has links, and the cost a weight?
bool guided(const Batch& batch, const Regularization& regularization) {
  return regularization.guided_alignment > 0 && !batch.link_starts.empty();
}

// The guided-alignment cost of the batch's attention when guided, or of its alignment output
// when the model has one (and, with scale, scale × its gradient in ws.dalpha or ws.aln.dalpha);
// 0 otherwise.
template <class T>
T guided_cost(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
              ModelWorkspace<T>& ws, const T* scale) {
  ws.guided_cost = 0;
  if (!guided(batch, regularization)) return 0;
  const bool output = params.config().alignment_output > 0;
  if (output) alignment_output_of_decoder(params, batch, ws);
  const Index R = ws.tgt_len * ws.batch;
  ws.guided_cost = guided_alignment_cost<T>(output ? ws.aln.alpha.topRows(R) : ws.alpha.topRows(R), batch,
                                            regularization.guided_alignment_cost,
                                            static_cast<T>(regularization.guided_alignment), scale ? *scale : T(0),
                                            scale ? (output ? &ws.aln.dalpha : &ws.dalpha) : nullptr, output);
  return ws.guided_cost;
}

// Backward from dX (the gradient of the output layer's input, in ws.X) through the decoder
// loop and the encoder; guided: ws.dalpha holds the guided-alignment cost's dα; alignment_inputs:
// ws.aln holds the alignment output's du and dA (--alignment-output-backprop).
template <class T>
void backward_from_output_input(const Parameters<T>& params, ModelWorkspace<T>& ws, Parameters<T>& grads,
                                bool guided, bool alignment_inputs) {
  const ModelConfig& cfg = params.config();
  const Index B = ws.batch, Tn = ws.tgt_len, S = ws.encoder.max_len;
  const Index n = cfg.hidden, e = cfg.emb;
  const Index N = static_cast<Index>(ws.out_rows.size());
  auto dX = ws.X.topRows(N);

  // X = [s, tgt_emb[y_{i-1}], c]: scatter back to the time-major gradients and the embeddings
  auto dstates = rows_of(ws.dstates, (Tn + 1) * B, n);
  auto dcontexts = rows_of(ws.dcontexts, Tn * B, 2 * n);
  auto demb = grads.mat(tgt_emb);
  dstates.setZero();
  dcontexts.setZero();
  // the output layer's state: s_{i-1} (block i of dstates), s_i (block i+1) or the top layer's output
  const bool stacked = cfg.dec_depth > 1;
  MatRef<T> dtop = stacked ? MatRef<T>(rows_of(ws.layers.back().doutput, Tn * B, n))
                           : MatRef<T>(dstates.middleRows(B, Tn * B));
  if (stacked) dtop.setZero();
  for (Index k = 0; k < N; ++k) {
    const Index i = ws.out_rows[k] / B, b = ws.out_rows[k] % B;
    if (cfg.output_reads_previous_state())
      dstates.row(i * B + b) += dX.row(k).head(n);
    else
      dtop.row(ws.out_rows[k]) += dX.row(k).head(n);
    demb.row(ws.inputs[ws.out_rows[k]]) += dX.row(k).segment(n, e);
    dcontexts.row(ws.out_rows[k]) = dX.row(k).tail(2 * n);
  }
  // the alignment output's u_i = [x_i, E_{y_i}, E_{y_{i+1}}], as X but with the word aligned and
  // the next one too
  if (alignment_inputs) {
    const auto du = ws.aln.dinput.topRows(Tn * B);
    for (Index r = 0; r < Tn * B; ++r) {
      if (ws.moving[r] == T(0)) continue;
      if (cfg.output_reads_previous_state())
        dstates.row(r) += du.row(r).head(n);
      else
        dtop.row(r) += du.row(r).head(n);
      demb.row(ws.inputs[r]) += du.row(r).segment(n, e);
      dcontexts.row(r) += du.row(r).segment(n + e, 2 * n);
      demb.row(ws.aln.words[r]) += du.row(r).segment(n + e + 2 * n, e);
      demb.row(ws.aln.next_words[r]) += du.row(r).tail(e);
    }
  }

  // --dec-depth: layers D..2, each handing its input's gradient to the layer below (layer
  // 1's states s_1..s_T) and its start state's to s_0
  for (int l = cfg.dec_depth; l >= 2; --l) {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_backward);
    const GruLayerParams p = dec_layer(cfg, l);
    MatRef<T> dinput = l == 2 ? MatRef<T>(dstates.middleRows(B, Tn * B))  // d s_1..s_T
                              : MatRef<T>(rows_of(ws.layers[l - 3].doutput, Tn * B, n));
    gru_layer_backward<T>(params, p, decoder_layer_output(params, ws, l - 1), ws.moving.data(), Tn, B, ws.layers[l - 2],
                          grads, dinput, l == 2, ws.gru_scratch);
    step_rows(dstates, 0, B) += gru_layer_dh0(p, ws.layers[l - 2], Tn, B);
  }

  // Decoder steps in reverse
  auto states = ws.states.topRows((Tn + 1) * B);
  auto dg = ws.gates.topRows(Tn * B);  // each step's gates, until the step's backward replaces them by dg
  auto dqueries = rows_of(ws.dqueries, Tn * B, n);
  rows_of(ws.dannotations, B * S, 2 * n).setZero();
  if (alignment_inputs) ws.dannotations.topRows(B * S) += ws.aln.dannotations.topRows(B * S);
  rows_of(ws.dkeys, B * S, n).setZero();
  const AttentionMemory<T> memory = attention_memory(ws.encoder);
  for (Index i = Tn - 1; i >= 0; --i) {
    std::optional<MatCRef<T>> dalpha;  // step i's rows of the guided-alignment cost's dα
    if (guided) dalpha.emplace(step_rows(ws.dalpha, i, B));
    decoder_recurrence_backward<T>(
        params, memory, identity_rows(B), &ws.moving[i * B], step_rows(states, i, B),
        step_outputs<T>(params, ws, i, &grads), step_rows(dstates, i + 1, B),
        {step_rows(dcontexts, i, B), step_rows(dqueries, i, B), step_rows(dstates, i, B), dalpha ? &*dalpha : nullptr},
        ws.dkeys, ws.dannotations, grads, ws.gru_scratch, ws.attention_scratch);
  }
  // The products' gradients: dg (c dec_C's: cell 2's in the conditional decoder), or with
  // layer normalization the dP that replaced each x̂
  const bool layer_norm = cfg.layer_norm, conditional = cfg.conditional_decoder();
  const MatCRef<T> dg_C = conditional ? MatCRef<T>(ws.cells[0].gates.topRows(Tn * B)) : MatCRef<T>(dg);
  const MatCRef<T> query_states = conditional ? MatCRef<T>(ws.cells[0].input.topRows(Tn * B))  // s'
                                               : MatCRef<T>(states.topRows(Tn * B));          // s_prev
  decoder_recurrence_weight_grads<T>(query_states, ws.dropout.products_input(states.topRows(Tn * B), Tn * B),
                                     ws.r_h.topRows(Tn * B), ws.contexts.topRows(Tn * B),
                                     layer_norm ? ws.U_norm.hat.topRows(Tn * B) : dg,
                                     layer_norm ? ws.C_norm.hat.topRows(Tn * B) : dg_C, dqueries, grads);
  std::optional<profile::ScopedPhase> phase(std::in_place, profile::Phase::decoder_weight_grads);
  for (int k = 2; k <= cfg.dec_cell_base_depth; ++k) {
    const Transition cell = dec_cell(cfg, k);
    transition_weight_grads<T>(ws.cells[k - 2], Tn * B, layer_norm, grads.mat(cell.U), grads.vec(cell.b));
  }
  // g = E dec_W + dec_b + ..., or LN_W(E dec_W) + dec_b + ...
  const MatCRef<T> dP = gru_input_backward<T>(ws.E.topRows(Tn * B), dg,
                                              layer_norm_of<T>(params, dec_W, ws.W_norm, 0, Tn * B, &grads),
                                              grads.mat(dec_W), grads.vec(dec_b));
  auto dE = rows_of(ws.dE, Tn * B, e);
  dE.noalias() = dP * params.mat(dec_W).transpose();
  // E_i = tgt_emb[y_{i-1}] (∘ mask)
  if (ws.embedding_dropout) dE.array() *= ws.E_mask.topRows(Tn * B).array();
  for (Index r = 0; r < Tn * B; ++r)
    if (ws.moving[r] != T(0)) demb.row(ws.inputs[r]) += dE.row(r);

  phase.emplace(profile::Phase::encoder_backward);
  encoder_backward<T>(params, ws.encoder, ws.dannotations, ws.dkeys, step_rows(dstates, 0, B), grads);
}

}  // namespace

template <class T>
T rnnsearch_forward(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
                    ModelWorkspace<T>& ws) {
  forward_to_output_input(params, batch, regularization, ws);
  profile::ScopedPhase phase(profile::Phase::output_forward);
  return output_layer_cost<T>(params, ws.X.topRows(ws.targets.size()), ws.targets.data(), ws.label_smoothing,
                              ws.output, ws.token_nll.data()) +
         guided_cost<T>(params, batch, regularization, ws, nullptr);
}

template <class T>
T rnnsearch_forward_backward(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
                             T scale, ModelWorkspace<T>& ws, Parameters<T>& grads,
                             const std::function<void()>& output_done) {
  forward_to_output_input(params, batch, regularization, ws);
  const Index N = static_cast<Index>(ws.targets.size());
  T cost;
  {
    // The output layer's forward and backward, a chunk of rows at a time (see output_layer_cost)
    profile::ScopedPhase phase(profile::Phase::output_layer);
    // dX takes X's storage: each chunk of X is dead once its gradient is written
    cost = output_layer_cost<T>(params, ws.X.topRows(N), ws.targets.data(), ws.label_smoothing, ws.output,
                                ws.token_nll.data(), scale, &grads, &ws.X);
    if (ws.output_dropout) ws.X.topRows(N).array() *= ws.X_mask.topRows(N).array();
  }
  if (output_done) output_done();
  cost += guided_cost<T>(params, batch, regularization, ws, &scale);
  const bool guided_batch = guided(batch, regularization), output = params.config().alignment_output > 0;
  const bool backprop = guided_batch && output && regularization.alignment_output_backprop;
  if (guided_batch && output)
    alignment_output_backward<T>(params, alignment_source(ws), time_major_rows(ws.tgt_len, ws.batch), backprop,
                                 ws.aln, grads);
  backward_from_output_input(params, ws, grads, guided_batch && !output, backprop);
  return cost;
}

template <class T>
MatCRef<T> rnnsearch_alignment_output(const Parameters<T>& params, const Batch& batch, ModelWorkspace<T>& ws,
                                      bool run_model) {
  if (params.config().alignment_output <= 0)
    throw std::logic_error("rnnsearch_alignment_output: the model has no alignment output");
  if (run_model) forward_to_output_input(params, batch, Regularization{}, ws);
  alignment_output_of_decoder(params, batch, ws);
  return ws.aln.alpha.topRows(ws.tgt_len * ws.batch);
}

template MatCRef<float> rnnsearch_alignment_output<float>(const Parameters<float>&, const Batch&,
                                                          ModelWorkspace<float>&, bool);
template MatCRef<double> rnnsearch_alignment_output<double>(const Parameters<double>&, const Batch&,
                                                            ModelWorkspace<double>&, bool);
template float rnnsearch_forward<float>(const Parameters<float>&, const Batch&, const Regularization&,
                                        ModelWorkspace<float>&);
template double rnnsearch_forward<double>(const Parameters<double>&, const Batch&, const Regularization&,
                                          ModelWorkspace<double>&);
template float rnnsearch_forward_backward<float>(const Parameters<float>&, const Batch&, const Regularization&, float,
                                                 ModelWorkspace<float>&, Parameters<float>&,
                                                 const std::function<void()>&);
template double rnnsearch_forward_backward<double>(const Parameters<double>&, const Batch&, const Regularization&,
                                                   double, ModelWorkspace<double>&, Parameters<double>&,
                                                   const std::function<void()>&);

}  // namespace rnnsearch
