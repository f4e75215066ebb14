#include <iostream>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

// Tokenizes text exactly as training and translation do (docs/design.md §3), one output line per
// input line: what references must go through before `rnnsearch bleu`.
int tokenize_command(const Args& args) {
  std::string input = "-", output = "-";
  bool no_lowercase = false;
  po::options_description options("tokenize options");
  options.add_options()
      ("input,i", po::value(&input)->default_value("-"), "text to tokenize, plain or .gz (- = stdin)")
      ("output,o", po::value(&output)->default_value("-"), "where to write (- = stdout)")
      ("no-lowercase", po::bool_switch(&no_lowercase), "keep case");
  po::variables_map vm;
  if (parse_options("tokenize", "[--input F] [--output F]", options, args, vm)) return 0;
  TokenizerOptions tokenizer;
  tokenizer.lowercase = !no_lowercase;
  LineReader reader(input);
  OutputFile out(output, {input});
  std::string line;
  while (next_valid_line(reader, line)) out.stream() << join_tokens(tokenize(line, tokenizer)) << '\n';
  out.close();
  return 0;
}

}  // namespace rnnsearch::cli
