// rnnsearch score: forced decoding of given sentence pairs (decode/scorer.h). Per pair:
// "logprob perplexity", logprob = Σ_i log p(y_i | y_<i, x) over the target tokens and
// </s>, perplexity = exp(−logprob / (target tokens + 1)); with any of translate's ranking
// options a third number, the score translate ranks by (to rerank n-best lists); optionally
// the attention.
#include <iostream>
#include <optional>

#include "commands.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/mpi.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int score_command(const Args& args) {
  DecodeArgs decode;
  std::string src_path, tgt_path, output;
  ScorerOptions sopts;
  po::options_description options("score options");
  options.add_options()
      ("src", po::value(&src_path)->required(), "source sentences, one per line (.gz ok)")
      ("tgt", po::value(&tgt_path)->required(), "their translations, line by line")
      ("output,o", po::value(&output)->default_value("-"), "where to write the scores (- = stdout)")
      ("max-length", po::value(&sopts.max_length)->default_value(200)->notifier(at_least("max-length", 1)),
       "pairs with a side longer than this many tokens are skipped with a warning");
  ProgressOptions progress_options;
  options.add(decode_option_group(DecodeUse::score))
      .add(model_option_group(decode, "sentence pairs"))
      .add(output_option_group(decode))
      .add(progress_option_group(progress_options));
  po::variables_map vm;
  if (parse_options("score", "--model DIR --src FILE --tgt FILE [options]", options, args, vm)) return 0;
  const DecodeOptions ranking = decode_options(vm, DecodeUse::score);  // checked before any file is opened
  sopts.ranking = ranking.beam;
  OutputOptions oopts = output_options(decode);
  oopts.ranking_score = ranking.any_given();
  sopts.batch_size = decode.batch_size;
  sopts.piece_alignments = piece_alignments(decode);
  sopts.threads = set_threads(decode.threads);
  sopts.alignment = oopts.needs_alignment() || vm.count("heatmaps");

  // Lines are read whole, not UTF-8-checked: a bad line is reported and left unscored.
  const std::vector<std::string> src_lines = all_lines(src_path), tgt_lines = all_lines(tgt_path);
  if (src_lines.size() != tgt_lines.size())
    throw Error(src_path + " and " + tgt_path + " differ in length: " + std::to_string(src_lines.size()) +
                " and " + std::to_string(tgt_lines.size()) + " lines");
  std::optional<OutputFile> out;  // rank 0 writes everything; opened before the work, to fail first
  if (mpi::is_root()) out.emplace(output, std::vector<std::string>{src_path, tgt_path});
  const std::vector<Model> models = load_ensemble(decode.model_dirs);
  Scorer scorer(models.front(), ensemble_weights(models), sopts);
  const OutputPrinter printer(oopts);
  // In an MPI job rank 0 shows its own share of the batches.
  ProgressMeter progress("rnnsearch score", progress_options);
  progress.start("scoring", "pairs", src_lines.size());
  const std::vector<ScoredPair> pairs =
      scorer.score(src_lines, tgt_lines, 0, [&](size_t finished) { progress.add(finished); });
  progress.finish();
  if (!out) return 0;
  HeatmapCollector heatmap_records(vm.count("heatmaps") ? decode.heatmaps_limit : 0);
  for (const ScoredPair& pair : pairs) {
    if (!pair.warning.empty())
      std::cerr << "rnnsearch score: " << located(pair.target_side ? tgt_path : src_path, pair.line + 1,
                                                  "warning: " + pair.warning) << "\n";
    if (pair.scored() && !heatmap_records.full()) heatmap_records.offer(OutputPrinter::record(pair));
    printer.print(out->stream(), pair);
  }
  out->close();
  if (vm.count("heatmaps")) std::cerr << "rnnsearch score: heatmaps: " << heatmap_records.write(decode.heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
