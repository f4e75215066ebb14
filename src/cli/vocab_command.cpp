#include <iostream>

#include "commands.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int vocab_command(const Args& args) {
  po::options_description options("vocab options");
  std::vector<std::string> inputs;
  std::string output;
  int min_count = 2;
  size_t max_size = 0;
  bool no_lowercase = false;
  options.add_options()
      ("input,i", po::value(&inputs)->multitoken()->required(), "training text file(s), plain or .gz")
      ("output,o", po::value(&output)->required(), "vocabulary file to write (one token per line)")
      ("min-count", po::value(&min_count)->default_value(2), "keep tokens seen at least this often")
      ("max-size", po::value(&max_size)->default_value(0), "keep at most this many entries (0 = all)")
      ("no-lowercase", po::bool_switch(&no_lowercase), "keep case when tokenizing");
  po::variables_map vm;
  if (parse_options("vocab", "--input FILE... --output FILE [options]", options, args, vm)) return 0;
  check_not_an_input(output, inputs);
  TokenizerOptions tokenizer;
  tokenizer.lowercase = !no_lowercase;
  TokenCounts counts;
  size_t lines = 0;
  for (const std::string& path : inputs) lines += count_tokens(path, tokenizer, Subwords(), counts);
  const Vocab vocab = Vocab::build(counts, min_count, max_size);
  vocab.save(output);
  std::cerr << "vocab: " << vocab.size() << " entries (" << lines << " lines, min-count " << min_count
            << ") -> " << output << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
