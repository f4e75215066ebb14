#include "rnnsearch/train/resume_checks.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/train/train_options.h"

namespace rnnsearch {
void check_resumed_model(const TrainOptions& options, const ModelConfig& run, const std::string& config_path) {
  const std::vector<std::string>& given = options.options_given;
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.on_resume != OnResume::model || !spec.recorded) continue;  // (--preset: its sizes are checked)
    if (std::find(given.begin(), given.end(), spec.name) == given.end()) continue;
    const std::string asked = model_option_text(spec, options.model), had = model_option_text(spec, run);
    if (asked != had)
      throw Error(located(config_path, 0,
                          std::string("the run to resume has --") + spec.name + " " + had + ", not " + asked +
                              ": give another --model, or leave the option out to go on with the run's"));
  }
}

void check_resumed_text(const TrainOptions& o, const ModelDefinition& model, const std::string& dir) {
  const std::string config_path = model_file(dir, model_files::kConfig);
  const auto refuse = [&](const std::string& had, const std::string& asked, const std::string& fix) {
    throw Error(located(config_path, 0, "the run to resume " + had + ", not " + asked + ": give another --model or " + fix));
  };
  if (model.tokenizer.kind != o.tokenizer.kind)
    refuse(std::string("reads --tokenizer ") + tokenizer_kind_name(model.tokenizer.kind) + " text",
           tokenizer_kind_name(o.tokenizer.kind), "the same --tokenizer");
  const std::vector<std::string>& given = o.options_given;
  const auto was_given = [&](const char* name) { return std::find(given.begin(), given.end(), name) != given.end(); };
  if (was_given("no-lowercase") && model.tokenizer.lowercase && !o.tokenizer.lowercase)
    refuse("lowercases its text", "--no-lowercase", "leave --no-lowercase out");
  // The options that made the vocabularies, against config.json's record of them ("training";
  // a key missing in models from before it is not checked; an option that made nothing in
  // this run, --min-count of a subword run or --subword-type of a word-level one, neither).
  const nlohmann::json had = read_json_file(config_path).value("training", nlohmann::json::object());
  const OnResume run_kind = had.value("subwords", 0) > 0 ? OnResume::subwords : OnResume::words;
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.on_resume != OnResume::words_or_subwords && spec.on_resume != run_kind) continue;
    if (!was_given(spec.name) || !had.contains(spec.key)) continue;
    const nlohmann::json asked = spec.recorded(o);
    if (had[spec.key] == asked) continue;
    refuse(std::string("has --") + spec.name + " " + spec.text(had[spec.key]), spec.text(asked),
           std::string("leave --") + spec.name + " out to go on with the run's");
  }
  // Given vocabularies must be the run's (vocab.src/vocab.tgt are what it trains with).
  for (const auto& [name, path, vocab, file] :
       {std::tuple{"vocab-src", &o.vocab_src, &model.src_vocab, model_files::kSrcVocab},
        std::tuple{"vocab-tgt", &o.vocab_tgt, &model.tgt_vocab, model_files::kTgtVocab}}) {
    if (path->empty()) continue;
    if (!(Vocab::load(*path) == *vocab))
      throw Error(located(*path, 0, std::string("is not the vocabulary of the run to resume (") +
                                        model_file(dir, file) + "): give another --model, or leave --" + name + " out"));
  }
}

}  // namespace rnnsearch
