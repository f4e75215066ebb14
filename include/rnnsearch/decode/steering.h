#pragma once
// What steers one sentence's translation (a target prefix, constraints, phrases to avoid), as
// every shell receives it: the lines of translate's --constraints / --avoid files and of
// --json-input (Sockeye's JSON input lines), the server's JSON fields, Python's lists. Parsing
// and the checks that need no model are here, once, so that each shell refuses the same
// thing with the same text; each throws rnnsearch::Error with the bare problem, and the shell
// says where (translate: FILE:LINE, the server: a 400 naming the sentence, Python: a
// ValueError naming the index). The Translator (translator.h) then maps the phrases to ids.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

// Input lines of --json-input, lines[k] being line first_line + k + 1 of `file` (as errors name
// it): each line replaced by its "text", and the lines' steering returned (empty when no line
// has any). Errors: "FILE:LINE: problem"; constraints are checked against `beam`.
std::vector<LineSteering> json_input_lines(std::vector<std::string>& lines, const std::string& file,
                                           size_t first_line, const BeamOptions& beam);

}  // namespace rnnsearch
