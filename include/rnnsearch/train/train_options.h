#pragma once
// The model and training options of `rnnsearch train`, declared once. Every use is built from
// this table:
//
//   the command line and --config FILE  a Boost option per entry, with its help and default
//                                        (src/cli/train_command.cpp), its range checked by check()
//   TrainOptions                         read_train_options (train_option_values.h) puts each
//                                        value where it goes (apply) and applies the rules between options
//   config.json                          the "training" record written from the entries' keys
//                                        (training_json); the "model" keys are ModelConfig's JSON
//                                        (model/config.cpp), which a test holds to the table's
//   a resumed run                        what it may change (on_resume; resume_checks.h)
//
// so that an option is spelt, defaulted, bounded, recorded and refused alike everywhere, with
// the same one-line error text ("--emb must be at least 1, not 0").
//
// Adding a training option: its field (with its default) in TrainOptions (or ModelConfig, and
// then its key in model/config.cpp's to_json/from_json), its use, and one entry in
// train_option_specs() (src/train/train_options.cpp).
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

// An option's value, of the type the command line parses it as (TrainOptionType, in this order).
using TrainOptionValue = std::variant<bool, int, long, unsigned long, double, std::string>;
enum class TrainOptionType { flag, integer, long_integer, unsigned_integer, real, text };

// The range of a numeric option, and the words check() refuses a value outside it with.
enum class TrainCheck {
  none,
  at_least,          // >= minimum: "--OPTION must be at least MIN, not V"
  between,           // in [minimum, maximum]: "--OPTION must be between MIN and MAX, not V"
  non_negative,      // finite, >= 0: "--OPTION must be a number >= 0, not V"
  below_one,         // in [0, 1): "--OPTION must be in [0, 1), not V"
  zero_or_above_100  // SentencePiece refuses samples of 1 to 100 sentences
};

// Where config.json records an option: "model" (ModelConfig's keys), "training" (training_json),
// or nowhere.
enum class ConfigSection { none, model, training };

// What a resumed run (resume_checks.h) does when the command line gives the option.
enum class OnResume {
  may_change,     // takes the new value (the rate, the budget, the data, dropout, ...)
  model,          // must equal the model of config.json (check_resumed_model)
  words,          // must equal config.json's "training" record in a word-level run (check_resumed_text)
  subwords,       // the same in a subword run
  words_or_subwords,  // the same in either
  text            // the tokenizer, its case and the vocabularies: check_resumed_text, each in its own words
};

struct TrainOptionSpec {
  const char* name;             // as the command line spells it: "enc-depth"
  char short_name;              // the one-letter form ('m'), or 0
  TrainOptionType type;
  const char* default_text;     // the default as --help shows it; null: none (flags: off)
  bool required;                // the command line must give it
  TrainCheck check_kind;
  long minimum, maximum;        // of at_least and between
  const char* help;             // --help's text
  ConfigSection section;
  const char* key;              // its key in config.json's section, or null
  bool negated;                 // the key records the opposite of the flag (no-shuffle: "shuffle")
  OnResume on_resume;
  // Puts a value into TrainOptions; null for the options read_train_options reads by its rules
  // (the preset, names that are parsed, the options that need another one).
  void (*apply)(TrainOptions& options, const TrainOptionValue& value);
  // The value config.json records, or the model option's value (section model); null: none.
  nlohmann::json (*recorded)(const TrainOptions& options);

  // default_text as a value of the option's type (a flag: false). Throws std::logic_error
  // when the option has no default.
  TrainOptionValue default_value() const;
  // Throws rnnsearch::Error when value is outside the option's range (check_kind).
  void check(const TrainOptionValue& value) const;
  // A recorded value as the resume errors show it: "256", "maxout", "on" / "off" (the flag's,
  // not the key's, when negated).
  std::string text(const nlohmann::json& recorded_value) const;
};

// The table, in --help's order.
const std::vector<TrainOptionSpec>& train_option_specs();
// The entry of a name as the command line spells it, or null.
const TrainOptionSpec* find_train_option(std::string_view name);

// A model option's value (section model) in config as the errors show it: "256", "maxout", "on".
std::string model_option_text(const TrainOptionSpec& spec, const ModelConfig& config);

// config.json's "training": what the run was started with, for the record (every entry of
// section training).
nlohmann::json training_json(const TrainOptions& options);

}  // namespace rnnsearch
