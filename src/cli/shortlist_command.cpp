// rnnsearch shortlist: learns the lexical table p(target | source) of a model's vocabularies
// on its training corpus (IBM Model 1) and writes it as MODEL/lex.s2t, for
// `translate --shortlist MODEL/lex.s2t FIRST BEST`.
#include <chrono>
#include <iostream>

#include "commands.h"
#include "rnnsearch/decode/shortlist.h"
#include "rnnsearch/model/model_io.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int shortlist_command(const Args& args) {
  std::string model_dir, train_src, train_tgt, output;
  int iterations = 5, keep = 100;
  double min_prob = 1e-4;
  po::options_description options("shortlist options");
  options.add_options()
      ("model,m", po::value(&model_dir)->required(), "model directory (its vocabularies, tokenizer and subwords)")
      ("train-src", po::value(&train_src)->required(), "training source text (may be gzipped)")
      ("train-tgt", po::value(&train_tgt)->required(), "training target text (may be gzipped)")
      ("output,o", po::value(&output), "the lexical table (default MODEL/lex.s2t)")
      ("iterations", po::value(&iterations)->default_value(5)->notifier(at_least("iterations", 1)),
       "EM iterations of IBM Model 1")
      ("keep", po::value(&keep)->default_value(100)->notifier(at_least("keep", 1)),
       "translations kept per source token (the largest BEST translate can use)")
      ("min-prob", po::value(&min_prob)->default_value(1e-4)->notifier(below_one("min-prob")),
       "translations less probable than this are dropped");
  po::variables_map vm;
  if (parse_options("shortlist", "--model DIR --train-src FILE --train-tgt FILE [options]", options, args, vm))
    return 0;
  if (output.empty()) output = model_file(model_dir, "lex.s2t");
  const auto start = std::chrono::steady_clock::now();
  const ModelDefinition model = load_model_definition(model_dir);
  const ParallelCorpus corpus = read_parallel_corpus(train_src, train_tgt, model.src_subwords, model.tgt_subwords,
                                                     model.src_vocab, model.tgt_vocab, model.tokenizer, 0);
  const LexicalTable table =
      learn_lexical_table(corpus, static_cast<int>(model.src_vocab.size()), static_cast<int>(model.tgt_vocab.size()),
                          iterations, keep, static_cast<float>(min_prob));
  write_lexical_table(output, table, model.src_vocab, model.tgt_vocab);
  size_t entries = 0;
  for (const auto& translations : table) entries += translations.size();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "rnnsearch shortlist: " << entries << " entries learned on " << corpus.size() << " sentence pairs ("
            << iterations << " EM iterations, " << seconds << " s) written to " << output << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
