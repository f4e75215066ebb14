#pragma once
// Model sizes and the parameter layout of docs/design.md §1-§2: the names, shapes and order of
// every tensor. All parameters live in one contiguous buffer (see parameters.h), in the
// order of the Param enum, so the optimizer, clipping and checkpoints see one flat vector.
#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rnnsearch {

enum class OutputKind { maxout, linear };
// How the encoder's stacked layers run (--enc-type, as Marian's s2s): bidirectional, a stack
// that reads forward and one that reads backward; alternating, the same two stacks with the
// direction flipped at every layer (layer 2 of the forward stack reads backward, …), which
// is Nematus's encoder (with --skip).
enum class EncoderType { bidirectional, alternating };

constexpr int kMaxCellDepth = 16;
constexpr int kMaxDepth = 16;

struct ModelConfig {
  int src_vocab = 0, tgt_vocab = 0;
  int emb = 128;      // e
  int hidden = 256;   // n
  int maxout = 256;   // l (maxout only)
  OutputKind output = OutputKind::maxout;
  // Tied target embeddings (maxout only, needs l = e): the output projection is tgt_embᵀ
  // instead of a separate out_Wo, as in Press & Wolf (2017). Fewer parameters, and each
  // target word's row learns from both its uses.
  bool tied_embeddings = false;
  // Layer normalization of every product into a GRU's gates (docs/design.md §1.2), each with a
  // gain and a bias of its own (the *_lns / *_lnb tensors), as in Nematus.
  bool layer_norm = false;
  // Deep transition in the encoder (--enc-cell-depth, docs/design.md §1.3): GRU transitions
  // per position and direction; 1 is the paper's encoder.
  int enc_cell_depth = 1;  // 1 .. kMaxCellDepth
  // The decoder (--dec-cell-base-depth, §1.4): 1 is the paper's, where the context c_i comes
  // from s_{i-1} and enters all three gates; B ≥ 2 is the conditional GRU of Nematus and
  // Marian's s2s with B cells: s' = GRU_1(E_i, s_{i-1}), c_i from s', then cells 2..B.
  int dec_cell_base_depth = 1;  // 1 .. kMaxCellDepth
  // Stacked encoder layers (--enc-depth, §1.3): each direction is a stack of L GRU layers (of
  // enc_cell_depth transitions each), layer l ≥ 2 reading layer l−1's output of the same
  // direction; with skip (--skip) layer l ≥ 2's output is its state plus its input.
  int enc_depth = 1;  // 1 .. kMaxDepth
  EncoderType enc_type = EncoderType::bidirectional;  // alternating: needs enc_depth ≥ 2
  // Stacked decoder layers (--dec-depth D, §1.4; on the conditional GRU only): layers 2..D,
  // each of dec_cell_high_depth transitions, read the output of the layer below (with skip
  // plus it) and keep a state of their own, started from s_0; the output layer reads layer
  // D's output. The decoder's state is then D·n wide (state_width).
  int dec_depth = 1;            // 1 .. kMaxDepth
  int dec_cell_high_depth = 1;  // 1 .. kMaxCellDepth
  bool skip = false;
  // The alignment output (--alignment-output N, docs/design.md §1.8): an attention of N units
  // over the annotations whose query sees the target word it aligns, trained on word links;
  // 0 = none (the alignment is the decoder's attention).
  int alignment_output = 0;

  bool conditional_decoder() const { return dec_cell_base_depth > 1; }
  // The output layer's state: s_{i-1} for the paper's maxout output, s_i otherwise.
  bool output_reads_previous_state() const { return output == OutputKind::maxout && !conditional_decoder(); }
  // The decoder state a hypothesis carries: [s¹ | … | sᴰ], one n-wide block per layer.
  int state_width() const { return dec_depth * hidden; }

  // Width of the output layer's input [s, E, c]: n + e + 2n.
  int output_input() const { return hidden + emb + 2 * hidden; }
  // Width of the alignment output's query input [s, E, c, E_y, E_next]: the output layer's, the
  // embedding of the word aligned and that of the word after it.
  int alignment_input() const { return output_input() + 2 * emb; }
  // Columns of out_W: 2l pre-maxout units, or the vocabulary for the linear output.
  int output_width() const { return output == OutputKind::maxout ? 2 * maxout : tgt_vocab; }
};


void to_json(nlohmann::json& j, const ModelConfig& c);
void from_json(const nlohmann::json& j, ModelConfig& c);  // throws rnnsearch::Error
std::string output_kind_name(OutputKind kind);
OutputKind parse_output_kind(const std::string& name);     // throws rnnsearch::Error
std::string encoder_type_name(EncoderType type);
EncoderType parse_encoder_type(const std::string& name);   // throws rnnsearch::Error
// Throws rnnsearch::Error when tied_embeddings is set on sizes that cannot be tied.
void check_tied_embeddings(const ModelConfig& config);
// Throws rnnsearch::Error when stacked decoder layers are asked of the paper's decoder, or
// high transitions without them.
void check_decoder_layers(const ModelConfig& config);

// The parameter tensors, in storage order.
enum Param : int {
  src_emb, tgt_emb,
  enc_fw_W, enc_fw_U, enc_fw_b,
  enc_bw_W, enc_bw_U, enc_bw_b,
  init_W, init_b,
  att_U, att_b, att_W, att_v,
  dec_W, dec_b, dec_C, dec_U,
  out_W, out_b, out_Wo, out_bo,
  // --layer-normalization only: a gain (lns) and a bias (lnb) of 3n for each product
  enc_fw_W_lns, enc_fw_W_lnb, enc_fw_U_lns, enc_fw_U_lnb,
  enc_bw_W_lns, enc_bw_W_lnb, enc_bw_U_lns, enc_bw_U_lnb,
  dec_W_lns, dec_W_lnb, dec_C_lns, dec_C_lnb, dec_U_lns, dec_U_lnb,
  kNumParams
};

// The deeper transitions of --enc-cell-depth N follow the fixed tensors above, for the forward
// direction (transitions 2..N) and then the backward one; then the conditional decoder's
// cells 2..B; four tensors each: the recurrent weights U (n×3n), the bias b (3n), and U's
// layer-norm gain and bias (present only with layer normalization).
struct Transition {
  Param U, b;
};
// k = 2 .. config.enc_cell_depth, in layer 1 .. config.enc_depth
Transition enc_transition(const ModelConfig& config, bool backward, int k, int layer = 1);
// k = 2 .. config.dec_cell_base_depth (cell 2 reads c dec_C as its input product, §1.4)
Transition dec_cell(const ModelConfig& config, int k);

// One layer of a stack of GRUs (gru_layer.h): transition 1 reads the layer's input through
// W, U, b, transitions 2..depth only the state; reverse: it runs from the last position to
// the first; residual (--skip, layers ≥ 2): its output is its state plus its input.
struct GruLayerParams {
  Param W, U, b;
  int depth = 1;
  std::array<Transition, kMaxCellDepth> transitions{};  // [k - 2] for k = 2 .. depth
  bool reverse = false, residual = false;
  Transition transition(int k) const { return transitions[k - 2]; }
};
// Encoder layers l = 2 .. L (--enc-depth L) follow the decoder's cells, for each direction
// (forward, then backward) W (n×3n), U (n×3n), b (3n), the gains and biases of W and U, then
// the layer's transitions 2..N. Layer 1 is enc_fw_W, enc_fw_U, enc_fw_b (enc_bw_*).
GruLayerParams enc_layer(const ModelConfig& config, bool backward, int layer);
// Decoder layers l = 2 .. D (--dec-depth D) come last, each as an encoder layer's block with
// dec_cell_high_depth transitions.
GruLayerParams dec_layer(const ModelConfig& config, int layer);
// The alignment output's tensors (aln_W, aln_U, aln_b, aln_v), the last of the layout; the
// model must have one (config.alignment_output > 0).
struct AlignmentOutputParams {
  Param W, U, b, v;
};
AlignmentOutputParams alignment_output_params(const ModelConfig& config);

// The gain and bias that normalise the product of a matrix with --layer-normalization.
struct NormParams {
  Param gain, bias;
};

struct ParamSpec {
  std::string name;   // the .npz array name
  long rows, cols;    // a vector (bias) has rows = 1 and is stored as a 1-D array
  bool is_vector;
  bool present;       // out_Wo / out_bo exist only for the maxout output, out_Wo only untied,
                      // the *_lns / *_lnb tensors only with layer normalization
  size_t offset;      // into the flat buffer
  // The value every entry starts from instead of a uniform draw: 1 for the layer-norm gains,
  // 0 for their biases, NaN (a uniform draw) for everything else.
  double initial_value = std::numeric_limits<double>::quiet_NaN();
  // A product's matrix (enc_fw_W, …, dec_U, enc_fw_cell2_U, …) with layer normalization: the
  // index of its gain (its bias follows); -1 for every other tensor.
  int norm_gain = -1;
  size_t size() const { return present ? static_cast<size_t>(rows * cols) : 0; }
};

// Specs indexed by Param (kNumParams of them, then those of enc_transition, dec_cell,
// enc_layer and dec_layer); offsets are
// cumulative over the present tensors.
std::vector<ParamSpec> parameter_layout(const ModelConfig& config);
size_t parameter_count(const ModelConfig& config);
// The flat range [first, last) of the output layer's tensors out_W, out_b, out_Wo and out_bo,
// which lie together; with tied embeddings the projection's gradient goes to tgt_emb, outside.
struct FlatRange {
  size_t first, last;
};
FlatRange output_layer_span(const ModelConfig& config);

}  // namespace rnnsearch
