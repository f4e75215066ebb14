// rnnsearch: neural machine translation with Bahdanau attention (RNNsearch).
// One binary with subcommands, as in docs/design.md §4.
#include <cstring>
#include <iostream>
#include <map>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/build_info.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/util/mpi.h"
#ifdef RNNSEARCH_HAVE_HTTP
#include "rnnsearch/serve/http_server.h"
#endif

namespace {

const char* kUsage =
    "Usage: rnnsearch COMMAND [OPTIONS]   (rnnsearch COMMAND --help for its options;\n"
    "                                      rnnsearch --version: the version and what the build has)\n\n"
    "Commands:\n"
    "  vocab      build a vocabulary from tokenized training text\n"
    "  train      train a model on a parallel corpus\n"
    "  translate  translate sentences with beam search; attention alignments and heatmaps\n"
    "  score      force-decode given translations: log-probabilities and alignments\n"
    "  align      word alignments of a parallel corpus, Pharaoh links: by forced decoding with a model, or\n"
    "             without one by the built-in HMM aligner (--hmm, --hmm-tables; docs/aligning.md)\n"
    "  align-eval AER, precision and recall of links against gold sure/possible links\n"
    "  bleu       corpus BLEU, chrF and TER as sacreBLEU 2.x (--tokenize multi30k: multi-bleu.perl's)\n"
    "  tokenize   tokenize text as training does (e.g. references for bleu)\n"
    "  average    average the weights of several checkpoints of one model\n"
    "  shortlist  learn a lexical table for translate --shortlist (faster decoding)\n"
    "  serve      an HTTP API and page: /translate (n-best, alignments), /score, /align (docs/serve.md)\n";

// "rnnsearch train", or "rnnsearch train (rank 1 of 2)" in an MPI job.
std::string who(const char* command) {
  std::string name = std::string("rnnsearch ") + command;
  if (rnnsearch::mpi::size() > 1)
    name += " (rank " + std::to_string(rnnsearch::mpi::rank()) + " of " + std::to_string(rnnsearch::mpi::size()) + ")";
  return name;
}

// One line to stderr in one write, so that ranks of an MPI job do not interleave theirs.
void report(const std::string& line) { std::cerr << line + "\n" << std::flush; }

// Runs a command; a failure prints one line and, in an MPI job, ends every rank (the others
// would otherwise wait forever for this one).
int run(int (*command)(const rnnsearch::cli::Args&), const char* name, const rnnsearch::cli::Args& args) {
  try {
    rnnsearch::cpu_features();  // reads RNNSEARCH_CPU and caps oneDNN before any product
    // The ranks of a job build the same batches from the same options: they must agree.
    std::vector<std::string> roots_args = args;
    rnnsearch::mpi::broadcast(roots_args);
    if (roots_args != args)
      throw rnnsearch::Error("the command line differs from rank 0's (every rank must run the same command)");
    return command(args);
  } catch (const rnnsearch::Error& e) {
    report(who(name) + ": error: " + e.what());
  } catch (const std::bad_alloc&) {
    report(who(name) + ": error: out of memory");
  } catch (const std::exception& e) {
    report(who(name) + ": internal error: " + e.what());
  }
  if (rnnsearch::mpi::size() > 1) rnnsearch::mpi::abort(1);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rnnsearch::cli;
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"vocab", vocab_command}, {"train", train_command}, {"translate", translate_command},
      {"score", score_command}, {"align", align_command}, {"align-eval", align_eval_command},
      {"bleu", bleu_command}, {"tokenize", tokenize_command},
      {"average", average_command}, {"shortlist", shortlist_command}, {"serve", serve_command}};
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 1 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {  // and what the build contains (util/build_info.h)
    std::cout << "rnnsearch " << rnnsearch::build_info().version << "\n" << rnnsearch::build_info().features << "\n";
    return 0;
  }
  auto command = commands.find(argv[1]);
  if (command == commands.end()) {
    std::cerr << "rnnsearch: unknown command '" << argv[1] << "'\n" << kUsage;
    return 2;
  }
  // serve takes SIGINT/SIGTERM in a thread of its own: blocked before MPI or OpenMP start any.
#ifdef RNNSEARCH_HAVE_HTTP
  if (!std::strcmp(argv[1], "serve")) rnnsearch::serve::block_stop_signals();
#endif
  rnnsearch::mpi::init(&argc, &argv);
  const std::string name = argv[1];
  if (rnnsearch::mpi::size() > 1 && name != "train" && name != "translate" && name != "score" && name != "align") {
    // Every rank would write the same files at once.
    if (rnnsearch::mpi::is_root())
      std::cerr << who(argv[1])
                << ": error: runs as one process; only train, translate, score and align run under mpirun\n";
    rnnsearch::mpi::finalize();
    return 2;
  }
  const int status = run(command->second, argv[1], Args(argv + 2, argv + argc));
  rnnsearch::mpi::finalize();
  return status;
}
