#pragma once
// The training options a user gave, read into TrainOptions by the table's rules
// (train_options.h): what the command line with its --config file hands over, and what a
// library caller (the tests) can build by name.
#include <map>
#include <string>
#include <string_view>

#include "rnnsearch/train/train_options.h"

namespace rnnsearch {

// Values by the table's names. An option set as given counts as the user's (options_given,
// the resume check); one set as not given is its default, as the command line shows it.
class TrainOptionValues {
 public:
  // Throws std::logic_error for a name the table lacks or a value of another type than its entry's.
  void set(std::string_view name, TrainOptionValue value, bool given = true);
  const TrainOptionValue* find(std::string_view name) const;  // null: neither given nor defaulted
  bool given(std::string_view name) const;

 private:
  std::map<std::string, std::pair<TrainOptionValue, bool>, std::less<>> values_;
};

// TrainOptions from values: the entries without a value set take their default; each value is
// checked (TrainOptionSpec::check) and put in place (apply); then the table's rules: --preset's
// sizes under --emb, --hidden, --maxout and --batch-size; --dropout under --dropout-embeddings
// and --dropout-output; the names (--output-layer, --enc-type, --optimizer, ...) parsed; the
// options that need another (--guided-alignment-weight and --guided-alignment-cost need
// --guided-alignment, --alignment-output too, --alignment-output-backprop needs
// --alignment-output, --tokenizer raw needs --subwords); options_given filled (--preset counts
// as the sizes). Throws rnnsearch::Error with the command line's words.
TrainOptions read_train_options(const TrainOptionValues& values);

}  // namespace rnnsearch
