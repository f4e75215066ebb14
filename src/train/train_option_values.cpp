#include "rnnsearch/train/train_option_values.h"

#include <deque>
#include <stdexcept>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/guided_alignment.h"

namespace rnnsearch {

void TrainOptionValues::set(std::string_view name, TrainOptionValue value, bool given) {
  const TrainOptionSpec* spec = find_train_option(name);
  if (!spec) throw std::logic_error("TrainOptionValues: no option --" + std::string(name));
  if (value.index() != static_cast<size_t>(spec->type))
    throw std::logic_error("TrainOptionValues: --" + std::string(name) + " takes another type");
  values_.insert_or_assign(std::string(name), std::pair{std::move(value), given});
}

const TrainOptionValue* TrainOptionValues::find(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second.first;
}

bool TrainOptionValues::given(std::string_view name) const {
  const auto it = values_.find(name);
  return it != values_.end() && it->second.second;
}

namespace {

struct Preset {
  int emb, hidden, maxout, batch;
};

// docs/design.md §1: the same sizes as the PyTorch reference.
Preset preset_sizes(const std::string& name) {
  if (name == "small") return {128, 256, 256, 64};
  if (name == "base") return {256, 512, 500, 80};
  throw Error("unknown preset '" + name + "' (expected small or base)");
}

}  // namespace

TrainOptions read_train_options(const TrainOptionValues& values) {
  TrainOptions o;
  std::deque<TrainOptionValue> defaults;  // the table's defaults of the options not set (kept in place)
  const auto value = [&](const TrainOptionSpec& spec) -> const TrainOptionValue* {
    if (const TrainOptionValue* set = values.find(spec.name)) return set;
    if (spec.type != TrainOptionType::flag && !spec.default_text) return nullptr;
    return &defaults.emplace_back(spec.default_value());
  };
  const auto text = [&](const char* name) { return std::get<std::string>(*value(*find_train_option(name))); };
  for (const TrainOptionSpec& spec : train_option_specs()) {
    const TrainOptionValue* v = value(spec);
    if (!v) continue;
    spec.check(*v);
    if (spec.apply) spec.apply(o, *v);
    if (values.given(spec.name))
      for (const char* given : std::string_view(spec.name) == "preset" ? std::vector<const char*>{"emb", "hidden", "maxout"}
                                                                       : std::vector<const char*>{spec.name})
        o.options_given.push_back(given);
  }
  const Preset sizes = preset_sizes(text("preset"));
  if (!values.find("emb")) o.model.emb = sizes.emb;
  if (!values.find("hidden")) o.model.hidden = sizes.hidden;
  if (!values.find("maxout")) o.model.maxout = sizes.maxout;
  o.model.output = parse_output_kind(text("output-layer"));
  o.model.enc_type = parse_encoder_type(text("enc-type"));
  check_tied_embeddings(o.model);
  if (!values.find("batch-size")) o.batch_size = sizes.batch;
  o.optimizer.kind = parse_optimizer_kind(text("optimizer"));
  const double dropout = std::get<double>(*value(*find_train_option("dropout")));
  if (!values.find("dropout-embeddings")) o.regularization.embedding_dropout = dropout;
  if (!values.find("dropout-output")) o.regularization.output_dropout = dropout;
  o.regularization.guided_alignment_cost = parse_guided_alignment_cost(text("guided-alignment-cost"));
  if (o.guided_alignment.empty()) {
    for (const char* option : {"guided-alignment-weight", "guided-alignment-cost"})
      if (values.given(option)) throw Error(std::string("--") + option + " needs --guided-alignment FILE");
    o.regularization.guided_alignment = 0;
  }
  if (o.model.alignment_output > 0 && o.guided_alignment.empty())
    throw Error("--alignment-output needs --guided-alignment FILE: the word links it learns from");
  if (o.regularization.alignment_output_backprop && o.model.alignment_output == 0)
    throw Error("--alignment-output-backprop needs --alignment-output N");
  o.subword_type = parse_subword_type(text("subword-type"));
  o.valid_metrics = parse_valid_metrics(text("valid-metrics"));
  o.tokenizer.kind = parse_tokenizer_kind(text("tokenizer"));
  const bool no_lowercase = std::get<bool>(*value(*find_train_option("no-lowercase")));
  o.tokenizer.lowercase = !no_lowercase && o.tokenizer.kind == TokenizerKind::words;
  if (o.tokenizer.kind == TokenizerKind::raw && o.subwords == 0)
    throw Error("--tokenizer raw needs --subwords N: SentencePiece cuts the raw words into pieces");
  o.precision = precision_option(text("precision"), PrecisionUse::training);
  return o;
}

}  // namespace rnnsearch
