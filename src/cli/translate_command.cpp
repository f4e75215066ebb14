// rnnsearch translate: beam search over a stream of lines, one output line per input line
// (K with --n-best K), written and flushed chunk by chunk so a pipeline sees output while
// the input is still being read.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

struct OutputOptions {
  int n_best = 0;  // 0: the 1-best only, as plain text
  AlignmentFormat alignment = AlignmentFormat::none;
  bool json = false;
  bool detokenize = false;
};

// text:    "translation[ ||| alignment]"
// n-best:  "i ||| translation[ ||| alignment] ||| score"   (Moses/Marian style)
// json:    record_json
std::string hypothesis_line(const LineTranslation& t, const Hypothesis& h, const OutputOptions& o,
                            const Vocab& target_vocab) {
  if (o.json) return record_json(make_record(t, h, target_vocab));
  const std::vector<std::string> tokens = target_vocab.decode(h.tokens);
  std::string line = o.detokenize ? detokenize(tokens) : join_tokens(tokens);
  if (o.alignment != AlignmentFormat::none && h.alignment.rows > 0)
    line += " ||| " + alignment_text(h.alignment, o.alignment);
  if (o.n_best > 0) {
    std::ostringstream score;
    score << h.score;
    line = std::to_string(t.line) + " ||| " + line + " ||| " + score.str();
  }
  return line;
}

// A line that was not translated (empty or not UTF-8) stands as one empty hypothesis of
// score 0, so every format keeps one entry per input line.
void write_translation(std::ostream& out, const LineTranslation& t, const OutputOptions& o,
                       const Vocab& target_vocab) {
  static const std::vector<Hypothesis> kUntranslated(1);
  for (const Hypothesis& h : t.hypotheses.empty() ? kUntranslated : t.hypotheses)
    out << hypothesis_line(t, h, o, target_vocab) << '\n';
}

bool read_chunk(LineReader& input, size_t count, std::vector<std::string>& lines) {
  lines.clear();
  std::string line;
  while (lines.size() < count && input.next(line)) lines.push_back(line);
  return !lines.empty();
}

}  // namespace

int translate_command(const Args& args) {
  po::options_description options("translate options");
  std::string model_dir, input, output, alignment, format, heatmaps;
  TranslatorOptions topts;
  OutputOptions oopts;
  int maxi_batch = 10, threads = 1;
  size_t heatmaps_limit = 100;
  options.add_options()
      ("model,m", po::value(&model_dir)->required(), "model directory (uses model.best.npz when present)")
      ("input,i", po::value(&input)->default_value("-"),
       "sentences to translate, one per line (a FILE may be gzipped; - = stdin, plain text)")
      ("output,o", po::value(&output)->default_value("-"), "where to write translations (- = stdout)")
      ("beam-size,b", po::value(&topts.beam.beam_size)->default_value(5), "beam size; 1 = greedy decoding")
      ("n-best", po::value(&oopts.n_best)->default_value(0),
       "print the K best translations as 'i ||| translation[ ||| alignment] ||| score' "
       "(K <= beam size; 0 = the 1-best only)")
      ("normalize,n", po::value(&topts.beam.normalize)->default_value(1.0),
       "rank by log-probability / length^X (length counts </s>)")
      ("batch-size", po::value(&topts.batch_size)->default_value(32), "sentences decoded together")
      ("maxi-batch", po::value(&maxi_batch)->default_value(10),
       "batches read, length-sorted and translated before output is written and flushed")
      ("max-length", po::value(&topts.max_length)->default_value(200),
       "source tokens per line; longer lines are cut with a warning")
      ("alignment", po::value(&alignment)->default_value("none"),
       "append ' ||| ' and the attention: none, soft (matrix rows of target tokens incl. </s>, "
       "comma-separated weights over source tokens incl. </s>) or hard (Pharaoh src-tgt pairs)")
      ("format", po::value(&format)->default_value("text"), "text, or json: one JSON object per line")
      ("detokenize", po::bool_switch(&oopts.detokenize), "join output tokens into readable text")
      ("heatmaps", po::value(&heatmaps), "write attention heatmaps (SVG) and index.html of the 1-best into DIR")
      ("heatmaps-limit", po::value(&heatmaps_limit)->default_value(100), "heatmaps for at most this many sentences")
      ("threads", po::value(&threads)->default_value(1), "batches translated in parallel (0 = all cores)");
  po::variables_map vm;
  if (parse_options("translate", "--model DIR [--input FILE] [--output FILE] [options]", options, args, vm))
    return 0;
  if (format != "text" && format != "json") throw Error("--format must be text or json, not '" + format + "'");
  if (maxi_batch < 1) throw Error("--maxi-batch must be at least 1");
  if (oopts.n_best < 0) throw Error("--n-best must not be negative");
  oopts.alignment = parse_alignment_format(alignment);
  oopts.json = format == "json";
  topts.beam.n_best = std::max(oopts.n_best, 1);
  topts.beam.alignment = oopts.alignment != AlignmentFormat::none || oopts.json || vm.count("heatmaps");
  topts.threads = set_threads(threads);
  check_beam_options(topts.beam);  // before loading a model

  const Model model = load_model(model_dir);
  Translator translator(model, topts);
  LineReader reader(input);
  std::ofstream file;
  if (output != "-") {
    file.open(output, std::ios::binary);
    if (!file) throw Error(located(output, 0, "cannot open for writing"));
  }
  std::ostream& out = output == "-" ? std::cout : file;
  const std::string input_name = input == "-" ? "stdin" : input;
  HeatmapCollector heatmap_records(vm.count("heatmaps") ? heatmaps_limit : 0);

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> lines;
  size_t lines_done = 0;
  while (read_chunk(reader, static_cast<size_t>(topts.batch_size) * maxi_batch, lines)) {
    for (const LineTranslation& t : translator.translate(lines, lines_done)) {
      if (!t.warning.empty())
        std::cerr << "rnnsearch translate: " << located(input_name, t.line + 1, "warning: " + t.warning) << "\n";
      write_translation(out, t, oopts, model.tgt_vocab);
      if (!t.hypotheses.empty() && !heatmap_records.full())
        heatmap_records.offer(make_record(t, t.hypotheses.front(), model.tgt_vocab));
    }
    out.flush();
    if (!out) throw Error(located(output == "-" ? "stdout" : output, 0, "write failed"));
    lines_done += lines.size();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "rnnsearch translate: " << lines_done << " lines in " << seconds << " s ("
            << (seconds > 0 ? lines_done / seconds : 0.0) << " lines/s), beam " << topts.beam.beam_size
            << ", batch " << topts.batch_size << ", " << topts.threads << " thread(s), " << model.weights_path
            << "\n";
  if (vm.count("heatmaps")) std::cerr << "rnnsearch translate: heatmaps: " << heatmap_records.write(heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
