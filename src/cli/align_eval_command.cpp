// rnnsearch align-eval: AER, precision and recall of Pharaoh links against a gold alignment
// with sure and possible links (align/aer.h), one line for the corpus:
//   AER 27.40  precision 77.60  recall 68.00  (200 sentences, 3000 links, 2500 sure, 3300 possible)
#include <iostream>

#include "commands.h"
#include "rnnsearch/align/aer.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int align_eval_command(const Args& args) {
  std::string gold_path, links_path;
  bool zero_based = false, tail = false;
  po::options_description options("align-eval options");
  options.add_options()
      ("gold", po::value(&gold_path)->required(),
       "gold alignment, a line per sentence pair: i-j sure, ipj possible links, 1-based (as the RWTH and Hansards "
       "gold sets)")
      ("links", po::value(&links_path)->default_value("-"),
       "the links to score: Pharaoh i-j, 0-based source-target, a line per pair (as align writes; - = stdin)")
      ("gold-zero-based", po::bool_switch(&zero_based), "the gold file's positions are 0-based")
      ("tail", po::bool_switch(&tail),
       "LINKS may have more lines than GOLD: score its last ones (an aligner run on training text with the gold "
       "sentences appended)");
  po::variables_map vm;
  if (parse_options("align-eval", "--gold FILE [--links FILE] [options]", options, args, vm)) return 0;
  if (gold_path == "-" && links_path == "-") throw Error("--gold and --links cannot both be stdin");
  const std::vector<std::string> gold = read_lines(gold_path), links = read_lines(links_path);
  std::cout << align::evaluate_alignments(gold, links, zero_based, tail, gold_path,
                                          links_path == "-" ? "stdin" : links_path)
                   .summary()
            << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
