// rnnsearch score: forced decoding of given sentence pairs (decode/scorer.h). Per pair:
// "logprob perplexity", logprob = Σ_i log p(y_i | y_<i, x) over the target tokens and
// </s>, perplexity = exp(−logprob / (target tokens + 1)); with any of translate's ranking
// options a third number, the score translate ranks by (to rerank n-best lists); optionally
// the attention.
#include <iostream>
#include <optional>

#include "commands.h"
#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/mpi.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

// Pairs read and scored together: the scorer sorts them by length into batches (less
// padding the more it sorts), and memory holds this many, whatever the corpus size.
constexpr size_t kChunk = size_t{1} << 14;

}  // namespace

int score_command(const Args& args) {
  DecodeArgs decode;
  std::string src_path, tgt_path, output;
  CallOptions call;
  po::options_description options("score options");
  options.add_options()
      ("src", po::value(&src_path)->required(), "source sentences, one per line (.gz ok)")
      ("tgt", po::value(&tgt_path)->required(), "their translations, line by line")
      ("output,o", po::value(&output)->default_value("-"), "where to write the scores (- = stdout)")
      ("max-length", po::value(&call.max_length)->default_value(200)->notifier(at_least("max-length", 1)),
       "pairs with a side longer than this many tokens are skipped with a warning");
  ProgressOptions progress_options;
  options.add(decode_option_group(DecodeUse::score))
      .add(model_option_group(decode, "sentence pairs"))
      .add(output_option_group(decode))
      .add(progress_option_group(progress_options));
  po::variables_map vm;
  if (parse_options("score", "--model DIR --src FILE --tgt FILE [options]", options, args, vm)) return 0;
  const DecodeOptions ranking = decode_options(vm, DecodeUse::score);  // checked before any file is opened
  OutputOptions oopts = output_options(decode);
  oopts.ranking_score = ranking.any_given();
  call.batch_size = decode.batch_size;
  call.piece_alignments = piece_alignments(decode);
  call.threads = set_threads(decode.threads);
  call.shows_attention = oopts.needs_alignment() || vm.count("heatmaps");
  const ScorerOptions sopts = scorer_options(ranking.beam, call);

  PairChunks pairs(src_path, tgt_path);
  std::optional<OutputFile> out;  // rank 0 writes everything; opened before the work, to fail first
  if (mpi::is_root()) out.emplace(output, pairs.inputs());
  const std::vector<Model> models = load_ensemble(decode.model_dirs);
  Scorer scorer(models.front(), ensemble_weights(models), sopts);
  const OutputPrinter printer(oopts);
  HeatmapCollector heatmap_records(vm.count("heatmaps") ? decode.heatmaps_limit : 0);
  // A chunk at a time, written as it is done: memory stays flat in the corpus size. In an MPI
  // job rank 0 shows its own share of the batches.
  ProgressMeter progress("rnnsearch score", progress_options);
  progress.start("scoring", "pairs", pairs.total());
  std::vector<std::string> src_lines, tgt_lines;
  for (size_t first_line = 0; pairs.next(kChunk, src_lines, tgt_lines); first_line += src_lines.size()) {
    const std::vector<ScoredPair> scored =
        scorer.score(src_lines, tgt_lines, first_line, [&](size_t finished) { progress.add(finished); });
    if (!out) continue;
    for (const ScoredPair& pair : scored) {
      if (!pair.warning.empty())
        std::cerr << "rnnsearch score: " << located(pair.target_side ? tgt_path : src_path, pair.line + 1,
                                                    "warning: " + pair.warning) << "\n";
      if (pair.scored() && !heatmap_records.full()) heatmap_records.offer(OutputPrinter::record(pair));
      printer.print(out->stream(), pair);
    }
    out->flush();
  }
  progress.finish();
  if (!out) return 0;
  out->close();
  if (vm.count("heatmaps")) std::cerr << "rnnsearch score: heatmaps: " << heatmap_records.write(decode.heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
