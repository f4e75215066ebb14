// rnnsearch bleu: corpus BLEU-4 of tokenized hypotheses against one reference, exactly as
// multi-bleu.perl: lines are split on whitespace, nothing is re-tokenized or lowercased.
#include <iostream>
#include <iterator>
#include <sstream>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/eval/bleu.h"
#include "rnnsearch/text/line_reader.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

std::vector<std::vector<std::string>> whitespace_tokens(const std::string& path) {
  std::vector<std::vector<std::string>> sentences;
  for (const std::string& line : read_lines(path)) {
    std::istringstream words(line);
    sentences.emplace_back(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>());
  }
  return sentences;
}

}  // namespace

int bleu_command(const Args& args) {
  po::options_description options("bleu options");
  std::string ref, hyp;
  options.add_options()
      ("ref,r", po::value(&ref)->required(), "reference translations, tokenized, one per line (.gz ok)")
      ("hyp", po::value(&hyp)->default_value("-"), "hypotheses, tokenized, one per line (- = stdin)");
  po::variables_map vm;
  if (parse_options("bleu", "--ref FILE [--hyp FILE]", options, args, vm)) return 0;
  const auto references = whitespace_tokens(ref);
  const auto hypotheses = whitespace_tokens(hyp);
  if (references.size() != hypotheses.size())
    throw Error((hyp == "-" ? std::string("stdin") : hyp) + " and " + ref + " differ in length: " +
                std::to_string(hypotheses.size()) + " and " + std::to_string(references.size()) + " lines");
  OutputFile out("-", {});
  out.stream() << format_bleu(corpus_bleu(hypotheses, references)) << "\n";
  out.flush();
  return 0;
}

}  // namespace rnnsearch::cli
