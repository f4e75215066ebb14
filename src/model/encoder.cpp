#include "rnnsearch/model/encoder.h"

#include "rnnsearch/model/dropout.h"
#include "rnnsearch/model/products.h"

namespace rnnsearch {

template <class T>
void encoder_forward(const Parameters<T>& params, const int* src, const int* lengths, Index B, Index S,
                     double dropout_rate, double word_dropout_rate, double rnn_dropout_rate, uint64_t dropout_seed,
                     EncoderWorkspace<T>& ws) {
  const Index n = params.config().hidden, e = params.config().emb;
  ws.batch = B;
  ws.max_len = S;
  ws.lengths.assign(lengths, lengths + B);
  ws.tokens.assign(src, src + S * B);
  ws.moving.resize(S * B);
  for (Index j = 0; j < S; ++j)
    for (Index b = 0; b < B; ++b) ws.moving[j * B + b] = j < lengths[b] ? T(1) : T(0);

  // x_j = src_emb[w_j], with inverted dropout (of units, and of whole words) when training
  auto x = rows_of(ws.x, S * B, e);
  const auto embeddings = params.mat(src_emb);
  for (Index r = 0; r < S * B; ++r) x.row(r) = embeddings.row(src[r]);
  ws.dropout = dropout_rate > 0 || word_dropout_rate > 0;
  if (ws.dropout) {
    auto mask = rows_of(ws.dropout_mask, S * B, e);
    draw_dropout_mask<T>(mask, dropout_rate, dropout_seed);
    if (word_dropout_rate > 0) drop_words<T>(mask, word_dropout_rate, dropout_seed + 3, ws.word_keep);
    x.array() *= mask.array();
  }

  // Each stack (forward, backward): layer 1 reads x, layer l the output of layer l−1; each
  // layer's direction is enc_layer's (--enc-type alternating flips layers 2, 4, …). Layer l
  // of the forward (backward) stack draws its recurrent dropout masks from seed 2l (2l + 1)
  // of the family dropout_seed + 5.
  const ModelConfig& c = params.config();
  const int L = c.enc_depth;
  for (auto* layers : {&ws.fw, &ws.bw}) {
    const bool backward = layers == &ws.bw;
    layers->resize(L);
    for (int l = 1; l <= L; ++l)
      gru_layer_forward<T>(params, enc_layer(c, backward, l),
                           l == 1 ? MatCRef<T>(x) : gru_layer_output(enc_layer(c, backward, l - 1), (*layers)[l - 2], S, B),
                           ws.moving.data(), S, B, nullptr, (*layers)[l - 1], ws.gru_scratch, rnn_dropout_rate,
                           mask_seed(dropout_seed + 5, static_cast<uint64_t>(2 * l + backward)));
  }

  // a_j = [h→_j ; h←_j] of the top layers (the forward stack's, the backward stack's), batch-major
  const MatCRef<T> top_fw = gru_layer_output(enc_layer(c, false, L), ws.fw[L - 1], S, B);
  const MatCRef<T> top_bw = gru_layer_output(enc_layer(c, true, L), ws.bw[L - 1], S, B);
  auto annotations = rows_of(ws.annotations, B * S, 2 * n);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < S; ++j) {
      annotations.row(b * S + j).head(n) = top_fw.row(j * B + b);
      annotations.row(b * S + j).tail(n) = top_bw.row(j * B + b);
    }
  // K_j = a_j att_U + att_b
  auto keys = rows_of(ws.keys, B * S, n);
  multiply(keys, annotations, params.mat(att_U));
  keys.rowwise() += params.vec(att_b);
  // s_0 = tanh(mean_j a_j init_W + init_b)
  auto mean = rows_of(ws.mean, B, 2 * n);
  for (Index b = 0; b < B; ++b) {
    if (invariant_products()) {  // summed position by position: Eigen's order depends on where the row starts
      mean.row(b).setZero();
      for (Index j = 0; j < lengths[b]; ++j) mean.row(b) += annotations.row(b * S + j);
      mean.row(b) /= T(lengths[b]);
    } else {
      mean.row(b) = annotations.middleRows(b * S, lengths[b]).colwise().sum() / T(lengths[b]);
    }
  }
  auto s0 = rows_of(ws.s0, B, n);
  multiply(s0, mean, params.mat(init_W));
  s0.rowwise() += params.vec(init_b);
  s0 = s0.array().tanh().matrix();
}

template <class T>
void encoder_backward(const Parameters<T>& params, EncoderWorkspace<T>& ws, Mat<T>& dannotations,
                      const Mat<T>& dkeys, const MatCRef<T>& ds0, Parameters<T>& grads) {
  const Index B = ws.batch, S = ws.max_len, n = params.config().hidden, e = params.config().emb;
  auto annotations = ws.annotations.topRows(B * S);
  auto dann = dannotations.topRows(B * S);

  // s_0 = tanh(pre):  dpre = ds_0 ∘ (1 - s_0²)
  auto dpre = rows_of(ws.dmean_pre, B, n);
  dpre = (ds0.array() * (1 - ws.s0.topRows(B).array().square())).matrix();
  // pre = mean init_W + init_b
  auto mean = ws.mean.topRows(B);
  grads.mat(init_W).noalias() += mean.transpose() * dpre;
  grads.vec(init_b) += dpre.colwise().sum();
  auto dmean = mean;  // the mean is no longer needed: its storage takes its gradient
  dmean.noalias() = dpre * params.mat(init_W).transpose();
  // mean = Σ_{j<len} a_j / len
  for (Index b = 0; b < B; ++b)
    dann.middleRows(b * S, ws.lengths[b]).rowwise() += dmean.row(b) / T(ws.lengths[b]);

  // K = a att_U + att_b
  const auto dk = dkeys.topRows(B * S);
  grads.mat(att_U).noalias() += annotations.transpose() * dk;
  grads.vec(att_b) += dk.colwise().sum();
  dann.noalias() += dk * params.mat(att_U).transpose();

  // a_j = [h→_j ; h←_j] (forward stack, backward stack): each half to its top layer's output gradient
  const ModelConfig& c = params.config();
  const int L = c.enc_depth;
  auto dfw = rows_of(ws.fw[L - 1].doutput, S * B, n);
  auto dbw = rows_of(ws.bw[L - 1].doutput, S * B, n);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < S; ++j) {
      dfw.row(j * B + b) = dann.row(b * S + j).head(n);
      dbw.row(j * B + b) = dann.row(b * S + j).tail(n);
    }

  // Down each stack: layer l's input gradient is layer l−1's output gradient, layer 1's is dx
  auto dx = rows_of(ws.dx, S * B, e);
  dx.setZero();
  for (auto* layers : {&ws.fw, &ws.bw}) {
    const bool backward = layers == &ws.bw;
    for (int l = L; l >= 1; --l) {
      const MatCRef<T> X = l == 1 ? MatCRef<T>(ws.x.topRows(S * B))
                                  : gru_layer_output(enc_layer(c, backward, l - 1), (*layers)[l - 2], S, B);
      MatRef<T> dX = l == 1 ? MatRef<T>(dx) : MatRef<T>(rows_of((*layers)[l - 2].doutput, S * B, n));
      gru_layer_backward<T>(params, enc_layer(c, backward, l), X, ws.moving.data(), S, B, (*layers)[l - 1], grads, dX,
                            l == 1, ws.gru_scratch);
    }
  }

  // x_j = src_emb[w_j] (∘ dropout mask): scatter-add into the used embedding rows only
  if (ws.dropout) dx.array() *= ws.dropout_mask.topRows(S * B).array();
  auto demb = grads.mat(src_emb);
  for (Index j = 0; j < S; ++j)
    for (Index b = 0; b < B; ++b)
      if (ws.moving[j * B + b] != T(0)) demb.row(ws.tokens[j * B + b]) += dx.row(j * B + b);
}

#define RNNSEARCH_INSTANTIATE_ENCODER(T)                                                          \
  template void encoder_forward<T>(const Parameters<T>&, const int*, const int*, Index, Index, double, double, \
                                   double, uint64_t, EncoderWorkspace<T>&);                       \
  template void encoder_backward<T>(const Parameters<T>&, EncoderWorkspace<T>&, Mat<T>&, const Mat<T>&, \
                                    const MatCRef<T>&, Parameters<T>&);
RNNSEARCH_INSTANTIATE_ENCODER(float)
RNNSEARCH_INSTANTIATE_ENCODER(double)

}  // namespace rnnsearch
