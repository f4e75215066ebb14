#pragma once
// The decoding options, declared once. Every shell builds its surface from this table:
//
//   rnnsearch translate / score      a Boost option per entry (src/cli/options.cpp)
//   Python Translator.translate/score a keyword argument per entry, its docstring from `help`
//   rnnsearch serve /translate /score a JSON field per entry, listed in GET /info "options"
//   the server's page                 a control per entry, built from /info
//
// and hands what the user gave to DecodeOptions::set, whose checks and validate() hold every
// rule, so that an option is spelt, defaulted, bounded and refused alike everywhere, with the
// same one-line error text ("--beam-size must be at least 1, not 0").
//
// Names: the command line spells an option "beam-size", Python and JSON "beam_size" (keyword()).
// Defaults: those of BeamOptions (decode/beam_search.h), for score those of log_prob_ranking()
// (normalize 0: score ranks by log-probability unless asked otherwise).
//
// Adding a decoding option: its field (with its default) in BeamOptions, its use in the beam
// search, and one entry in decode_option_specs() (src/decode/decode_options.cpp).
#include <climits>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "rnnsearch/decode/beam_search.h"

namespace rnnsearch {

// Which commands take an option (bits of DecodeOptionSpec::uses).
enum class DecodeUse : unsigned { translate = 1, score = 2 };

struct DecodeOptionSpec {
  const char* name;           // as the command line spells it: "beam-size"
  char short_name;            // the command line's one-letter form ('b'), or 0
  bool integer;               // a whole number, else any finite number
  double minimum, maximum;    // the range, inclusive (±infinity: unbounded)
  bool optional;              // off unless given: the field holds a negative value then (−1)
  unsigned uses;              // DecodeUse bits
  const char* help;           // one line: --help, docstrings, /info, the page's tooltips
  std::variant<int BeamOptions::*, double BeamOptions::*> field;  // where the value goes

  bool takes(DecodeUse use) const { return (uses & static_cast<unsigned>(use)) != 0; }
  std::string keyword() const;                      // "beam_size": Python's and JSON's spelling
  double value(const BeamOptions& options) const;   // the field's value
  double default_value(DecodeUse use) const;        // translate: BeamOptions{}'s; score: log_prob_ranking()'s
  // Throws rnnsearch::Error when value is outside the option's range, or not whole for an
  // integer option (NaN and ±infinity are refused).
  void check(double value) const;
};

// The table, in the order the shells list the options.
const std::vector<DecodeOptionSpec>& decode_option_specs();
// The entry of a name in either spelling ("beam-size" or "beam_size"), or null.
const DecodeOptionSpec* find_decode_option(std::string_view name);

// What a user asked of one decoding call: the beam's options, and which of them were given.
struct DecodeOptions {
  explicit DecodeOptions(DecodeUse use = DecodeUse::translate);

  DecodeUse use;
  BeamOptions beam;  // the defaults of `use` until set

  // Sets an option (either spelling) and marks it given. Throws rnnsearch::Error for a name
  // `use` does not take ("unknown option") or a value its spec refuses (DecodeOptionSpec::check).
  void set(std::string_view name, double value);
  bool given(std::string_view name) const;
  bool any_given() const { return given_ != 0; }

  // The rules between options, after every set(): --normalize and --length-penalty-alpha are
  // not both given; check_beam_options' rules; the sampling options only with sampling;
  // --beam-size, --n-best and --alternatives ≤ max_beam_size (a server's --max-beam-size).
  // Throws rnnsearch::Error.
  void validate(int max_beam_size = INT_MAX) const;

 private:
  unsigned long given_ = 0;  // bit k: the table's entry k was given
};

// The options `use` takes, from what a shell was given by name: `given(spec)` is the value the
// user gave spec's option (Python's keyword, a request's JSON field, a command-line flag), or
// nullopt when not given (absent, None, null, a flag's default); it throws the shell's own error
// for a value that is not a number. Each set in the table's order (so that the first refused
// is the same in every shell), then validate(max_beam_size). Throws rnnsearch::Error.
DecodeOptions given_decode_options(DecodeUse use, const std::function<std::optional<double>(const DecodeOptionSpec&)>& given,
                                   int max_beam_size = INT_MAX);

// Checks options however they were made (a library caller's BeamOptions too): every field in
// its range (DecodeOptionSpec::check), n_best ≤ beam_size unless sampling, alternatives neither
// with sampling nor with n_best, max_output_length ≥ 0. What
// BeamSearch, Translator and Scorer check on construction. Throws rnnsearch::Error.
void check_beam_options(const BeamOptions& options);

}  // namespace rnnsearch
