// rnnsearch: neural machine translation with Bahdanau attention (RNNsearch).
// One binary with subcommands, as in docs/design.md §4.
#include <cstring>
#include <iostream>
#include <map>

#include "commands.h"
#include "rnnsearch/error.h"

namespace {

const char* kUsage =
    "Usage: rnnsearch COMMAND [OPTIONS]   (rnnsearch COMMAND --help for its options)\n\n"
    "Commands:\n"
    "  vocab      build a vocabulary from tokenized training text\n"
    "  train      train a model on a parallel corpus\n"
    "  translate  translate sentences with beam search; attention alignments and heatmaps\n"
    "  score      force-decode given translations: log-probabilities and alignments\n"
    "  bleu       corpus BLEU of tokenized text, as multi-bleu.perl\n"
    "  tokenize   tokenize text as training does (e.g. references for bleu)\n"
    "  average    average the weights of several checkpoints of one model\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace rnnsearch::cli;
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"vocab", vocab_command}, {"train", train_command}, {"translate", translate_command},
      {"score", score_command}, {"bleu", bleu_command}, {"tokenize", tokenize_command},
      {"average", average_command}};
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 1 : 0;
  }
  auto command = commands.find(argv[1]);
  if (command == commands.end()) {
    std::cerr << "rnnsearch: unknown command '" << argv[1] << "'\n" << kUsage;
    return 2;
  }
  try {
    return command->second(Args(argv + 2, argv + argc));
  } catch (const rnnsearch::Error& e) {
    std::cerr << "rnnsearch " << argv[1] << ": error: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "rnnsearch " << argv[1] << ": error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "rnnsearch " << argv[1] << ": internal error: " << e.what() << "\n";
  }
  return 1;
}
