#pragma once
// What steers one sentence's translation (a target prefix, constraints, phrases to avoid), as
// every shell receives it: the lines of translate's --constraints / --avoid files and of
// --json-input (Sockeye's JSON input lines), the server's JSON fields, Python's lists. Parsing
// and the checks that need no model are here, once, so that each shell refuses the same
// thing with the same text; each throws rnnsearch::Error with the bare problem, and the shell
// says where (translate: FILE:LINE, the server: a 400 naming the sentence, Python: a
// ValueError naming the index). The Translator (translator.h) then maps the phrases to ids.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rnnsearch/error.h"

namespace rnnsearch {

struct BeamOptions;
struct SentenceSteering;

// What steers one line's translation (each part optional), as text in the target language,
// tokenized as its translation is: the words it starts with (--target-prefix), phrases it must
// contain (--constraints) and phrases it must not (--avoid) (BeamSearch::Steering).
struct LineSteering {
  std::string prefix;
  std::vector<std::string> constraints, avoid;
  bool empty() const { return prefix.empty() && constraints.empty() && avoid.empty(); }
};

// The most constraints of one sentence (the search marks those met in 64 bits).
constexpr size_t kMaxConstraints = 64;

// `value` as a list of phrases: true and the strings if it is a JSON list of strings.
bool phrase_list(const nlohmann::json& value, std::vector<std::string>& phrases);

// A line of --constraints or --avoid (`option`, without "--"): a JSON list of strings, or a
// blank line (none). Errors: "invalid UTF-8", "--constraints wants a JSON list of strings ...".
std::vector<std::string> parse_phrase_line(const std::string& line, const std::string& option);

// A line of --json-input, Sockeye's JSON input: an object with "text" (required), and
// optionally "constraints" and "avoid" (lists of strings) and "target_prefix" (a string);
// another key is an error naming it. A blank line is an empty sentence with no steering.
struct JsonInputLine {
  std::string text;
  LineSteering steering;
};
JsonInputLine parse_json_input_line(const std::string& line);

// The checks of one sentence's steering that need no model: phrases of valid UTF-8 (a
// prefix that is not gets the Translator's warning, as an input line does), at most
// kMaxConstraints constraints, and no constraint that is, or holds as whole words, one of the
// phrases to avoid (it could never be met: "\"Hund\" is both a constraint and a phrase to avoid").
void check_steering(const LineSteering& steering);

// The checks of one sentence's steering as target ids (beam_search.h SentenceSteering), before
// the search: no </s>, <s> or <pad>, no empty phrase, at most kMaxConstraints constraints.
void check_sentence_steering(const SentenceSteering& steering);

// Constraints need beam search: an error with sampling or alternatives.
void check_constraints_allowed(const BeamOptions& beam);

// What every shell checks of one sentence's steering before it is translated with `beam`:
// check_steering, and check_constraints_allowed when it has constraints.
void check_steering(const LineSteering& steering, const BeamOptions& beam);

// A call's steering as lists, one item per sentence, each list optional (not given): what Python's
// target_prefix, constraints and avoid and a server request's fields of those names hold, once
// their shape is read (a prefix per sentence; a list of phrases per sentence).
struct SteeringLists {
  std::optional<std::vector<std::string>> target_prefix;
  std::optional<std::vector<std::vector<std::string>>> constraints, avoid;
};

// A sentence's steering refused by sentence_steering: its message names the sentence (Python
// raises it as ValueError, the rest as rnnsearch.Error).
struct SteeringRefused : Error {
  using Error::Error;
};

// The steering of `sentences` sentences from their lists: empty when none is given, else one
// LineSteering per sentence, each checked (check_steering with `beam`). `name` is what the
// shell calls its list of sentences ("sentences" in Python, "q" in a server request): a list of
// another length is an Error "NAME and avoid differ in length: 2 and 1 sentences", a sentence
// refused a SteeringRefused "NAME[1]: problem"; an empty name (one sentence given alone) gives
// the bare problem.
std::vector<LineSteering> sentence_steering(size_t sentences, SteeringLists lists, const BeamOptions& beam,
                                            const std::string& name);

// Input lines of --json-input, lines[k] being line first_line + k + 1 of `file` (as errors name
// it): each line replaced by its "text", and the lines' steering returned (empty when no line
// has any). Errors: "FILE:LINE: problem"; constraints are checked against `beam`.
std::vector<LineSteering> json_input_lines(std::vector<std::string>& lines, const std::string& file,
                                           size_t first_line, const BeamOptions& beam);

}  // namespace rnnsearch
