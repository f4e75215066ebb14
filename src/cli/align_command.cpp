// rnnsearch align: word alignments of a parallel corpus by forced decoding (align/aligner.h),
// with one model or two (--reverse-model), one line of Pharaoh links per pair: 0-based
// "source-target" word positions, sorted, as fast_align and eflomal write them. A pair that
// cannot be scored gets an empty line and a warning on stderr.
#include <iostream>
#include <optional>

#include "commands.h"
#include "rnnsearch/align/aligner.h"
#include "rnnsearch/align/hmm_tables.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/mpi.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int align_command(const Args& args) {
  DecodeArgs decode;
  std::vector<std::string> reverse_dirs;
  std::string src_path, tgt_path, input, output, method, symmetrize, save_hmm, hmm_tables;
  align::AlignerOptions aopts;
  align::HmmOptions hmm;
  bool use_hmm = false;
  ProgressOptions progress_options;
  po::options_description options("align options");
  options.add_options()
      ("reverse-model", po::value(&reverse_dirs)->composing(),
       "a target→source model, scored on the swapped pairs: its links are symmetrized with the model's, or its "
       "attention averaged with it (repeat: an ensemble)")
      ("src", po::value(&src_path), "source sentences, one per line (.gz ok); with --tgt")
      ("tgt", po::value(&tgt_path), "their translations, line by line")
      ("input,i", po::value(&input),
       "instead of --src and --tgt: lines 'SOURCE ||| TARGET', as fast_align reads them (- = stdin, the default)")
      ("output,o", po::value(&output)->default_value("-"), "where to write the links (- = stdout)")
      ("method", po::value(&method)->default_value("argmax"),
       "how links are read off the attention: argmax (each target word to its most attended source word), "
       "threshold:X (every weight >= X), average or average-threshold:X (the two models' matrices averaged first)")
      ("symmetrize", po::value(&symmetrize),
       "intersect, union, grow-diag, grow-diag-final or grow-diag-final-and: with --reverse-model, of the two "
       "models' links (grow-diag-final-and is the default, unless --method average...); with one model or "
       "--method average, of one matrix read both ways (each target word's most weighted source word, and each "
       "source word's most weighted target word at weight >= 0.1; by default only the first)")
      ("raw-attention", po::bool_switch(&aopts.raw_attention),
       "read the links off the models' attention even when they have an alignment output (which is read by default)")
      ("max-length", po::value(&aopts.max_length)->default_value(200)->notifier(at_least("max-length", 1)),
       "pairs with a side longer than this many words are skipped with a warning");
  po::options_description hmm_options("without a model: a statistical aligner trained on the pairs themselves");
  hmm_options.add_options()
      ("hmm", po::bool_switch(&use_hmm),
       "instead of --model: IBM model 1 then an HMM alignment model, each way, trained by EM on the input pairs; "
       "--method and --symmetrize read their posteriors as two models' attention")
      ("ibm1-iterations", po::value(&hmm.ibm1_iterations)->default_value(hmm.ibm1_iterations),
       "EM iterations of IBM model 1")
      ("hmm-iterations", po::value(&hmm.hmm_iterations)->default_value(hmm.hmm_iterations),
       "EM iterations of the HMM after them")
      ("null-probability", po::value(&hmm.null_probability)->default_value(hmm.null_probability, "0.2"),
       "p0: a target word comes from no source word")
      ("prior", po::value(&hmm.prior)->default_value(hmm.prior, "0.1"),
       "α of the translation table's Dirichlet prior (variational Bayes; 0 = maximum likelihood)")
      ("stem", po::value(&hmm.stem)->default_value(hmm.stem),
       "count words by their first N characters (lowercased; 0 = whole words)")
      ("no-agreement", "train the two directions each on its own, not on the product of their posteriors")
      ("save-hmm", po::value(&save_hmm),
       "with --hmm: also write what it learnt (both directions' tables and word lists) to DIR, for --hmm-tables")
      ("hmm-tables", po::value(&hmm_tables),
       "instead of --model or --hmm: align with the tables --save-hmm wrote to DIR, without training (words "
       "never seen in training take their links from their neighbours')");
  options.add(model_option_group(decode, "sentence pairs", false))
      .add(hmm_options)
      .add(progress_option_group(progress_options));
  po::variables_map vm;
  if (parse_options("align",
                    "(--model DIR [--reverse-model DIR] | --hmm | --hmm-tables DIR) (--src FILE --tgt FILE | -i FILE) "
                    "[options]",
                    options, args, vm))
    return 0;
  const bool use_tables = vm.count("hmm-tables") > 0;
  if (int(use_hmm) + int(use_tables) + int(!decode.model_dirs.empty()) != 1)
    throw Error("give --model (and --reverse-model), --hmm or --hmm-tables");
  if ((use_hmm || use_tables) && !reverse_dirs.empty()) throw Error("--hmm aligns without models: no --reverse-model");
  if (vm.count("save-hmm") && !use_hmm) throw Error("--save-hmm writes what --hmm learns: give --hmm");
  // read before any input, so that a bad directory is the first error
  const std::optional<align::HmmTables> tables =
      use_tables ? std::optional<align::HmmTables>(align::HmmTables(hmm_tables)) : std::nullopt;
  if (use_hmm) align::check_hmm_options(hmm);
  aopts.method = align::parse_align_method(method);  // before any file is opened
  if (vm.count("symmetrize")) aopts.symmetrize = align::parse_symmetrization(symmetrize);
  if (vm.count("src") != vm.count("tgt")) throw Error("--src and --tgt go together");
  if (vm.count("src") && vm.count("input")) throw Error("give --src and --tgt, or --input, not both");
  aopts.batch_size = decode.batch_size;
  aopts.threads = set_threads(decode.threads);

  PairChunks pairs = vm.count("src") ? PairChunks(src_path, tgt_path) : PairChunks(input.empty() ? "-" : input);
  std::optional<OutputFile> out;  // rank 0 writes everything; opened before the work, to fail first
  if (mpi::is_root()) out.emplace(output, pairs.inputs());
  // Writes the links of a chunk of pairs (rank 0), each warning naming the file of its line.
  const auto write = [&](const std::vector<align::AlignedPair>& aligned) {
    if (!out) return;
    for (const align::AlignedPair& pair : aligned) {
      if (!pair.warning.empty())
        std::cerr << "rnnsearch align: "
                  << located(pair.target_side ? pairs.target_name() : pairs.source_name(), pair.line + 1,
                             "warning: " + pair.warning)
                  << "\n";
      out->stream() << align::pharaoh_text(pair.links) << "\n";
    }
    out->flush();
  };
  std::vector<std::string> src_lines, tgt_lines;
  ProgressMeter progress("rnnsearch align", progress_options);
  if (use_hmm) {
    // EM trains on every pair: the corpus is read whole (as word ids it is a fraction of the text)
    std::vector<std::string> src_chunk, tgt_chunk;
    while (pairs.next(align::Aligner::kChunk, src_chunk, tgt_chunk)) {
      src_lines.insert(src_lines.end(), src_chunk.begin(), src_chunk.end());
      tgt_lines.insert(tgt_lines.end(), tgt_chunk.begin(), tgt_chunk.end());
    }
    hmm.threads = aopts.threads;
    hmm.agreement = !vm.count("no-agreement");
    hmm.max_length = aopts.max_length;
    const int steps = hmm.ibm1_iterations + hmm.hmm_iterations;
    progress.start("training the HMM aligners", "iterations", static_cast<size_t>(steps));
    align::resolved_symmetrization(true, aopts.method, aopts.symmetrize);  // refused before training
    const align::HmmTables trained(src_lines, tgt_lines, hmm, [&](const char*, int) { progress.add(1); });
    progress.finish();
    if (!save_hmm.empty() && mpi::is_root()) trained.save(save_hmm);
    write(trained.align(src_lines, tgt_lines, aopts.method, aopts.symmetrize, hmm.max_length, hmm.threads));
  } else if (tables) {
    progress.start("aligning", "pairs", pairs.total());
    for (size_t first_line = 0; pairs.next(align::Aligner::kChunk, src_lines, tgt_lines); first_line += src_lines.size()) {
      write(tables->align(src_lines, tgt_lines, aopts.method, aopts.symmetrize, aopts.max_length, aopts.threads,
                          first_line));
      progress.add(src_lines.size());
    }
    progress.finish();
  } else {
    const std::vector<Model> models = load_ensemble(decode.model_dirs);
    const std::vector<Model> reverse = reverse_dirs.empty() ? std::vector<Model>() : load_ensemble(reverse_dirs);
    align::Aligner aligner(models, reverse, aopts);
    // A chunk at a time, written as it is done: memory stays flat in the corpus size. In an MPI
    // job rank 0 shows its own share of the batches.
    progress.start("aligning", "pairs", pairs.total());
    for (size_t first_line = 0; pairs.next(align::Aligner::kChunk, src_lines, tgt_lines); first_line += src_lines.size())
      write(aligner.align(src_lines, tgt_lines, first_line, [&](size_t finished) { progress.add(finished); }));
    progress.finish();
  }
  if (!out) return 0;
  out->close();
  return 0;
}

}  // namespace rnnsearch::cli
