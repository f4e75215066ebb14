// rnnsearch bleu: corpus BLEU, chrF and TER of hypotheses against one or more references,
// computed as sacreBLEU 2.x computes them (docs/metrics.md), one line per metric with its
// signature, as `sacrebleu -f text` prints them. The default is sacreBLEU's: BLEU on detokenized
// text, 13a tokenization, case-sensitive. --tokenize multi30k is the tokenized, lowercased,
// unsmoothed BLEU (multi-bleu.perl's) Multi30k papers report.
#include <algorithm>
#include <iostream>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/metrics/bleu.h"
#include "rnnsearch/metrics/chrf.h"
#include "rnnsearch/metrics/ter.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/util/name_list.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

enum class Metric { bleu, chrf, ter };

// The lines of a file with trailing whitespace removed, as sacreBLEU reads them.
std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (std::string& line : lines) line.resize(rstrip_python(line).size());
  return lines;
}

std::string display_name(const std::string& path) { return path == "-" ? "stdin" : path; }

// Every reference file must have a line for each hypothesis, and no more.
void check_line_counts(const std::string& hyp_path, size_t hyp_lines, const std::vector<std::string>& ref_paths,
                       const std::vector<std::vector<std::string>>& references) {
  for (size_t k = 0; k < references.size(); ++k) {
    const size_t ref_lines = references[k].size();
    if (ref_lines == hyp_lines) continue;
    const bool ref_longer = ref_lines > hyp_lines;
    const std::string longer = ref_longer ? ref_paths[k] : display_name(hyp_path);
    const std::string shorter = ref_longer ? display_name(hyp_path) : ref_paths[k];
    const size_t common = std::min(ref_lines, hyp_lines);
    throw Error(located(longer, common + 1,
                        "no such line in " + shorter + ", which has " + std::to_string(common) +
                            " (hypotheses and references differ in length)"));
  }
}

}  // namespace

int bleu_command(const Args& args) {
  po::options_description options("bleu options");
  std::vector<std::string> ref_paths;
  std::string hyp, metric_names, tokenizer, smoothing;
  double smooth_value = -1;
  int width = 2;
  bool lowercase = false, score_only = false;
  ChrfOptions chrf;
  TercomOptions ter;
  options.add_options()
      ("ref,r", po::value(&ref_paths)->required()->multitoken()->composing(),
       "reference translations, one per line (.gz ok); several files (--ref A --ref B or --ref A B): several "
       "references per line")
      ("hyp", po::value(&hyp)->default_value("-"), "hypotheses, one per line (- = stdin)")
      ("metrics,m", po::value(&metric_names)->default_value("bleu"), "bleu, chrf and/or ter, comma-separated")
      ("tokenize", po::value(&tokenizer)->default_value("13a"),
       "BLEU's tokenizer: 13a, intl, char, none (sacreBLEU's), or multi30k: rnnsearch's own tokenizer, lowercased, "
       "unsmoothed (multi-bleu.perl on `rnnsearch tokenize` output, as Multi30k papers report)")
      ("lowercase,l", po::bool_switch(&lowercase), "case-insensitive BLEU and chrF")
      ("smooth-method", po::value(&smoothing), "BLEU smoothing: exp, floor, add-k or none (exp; none with multi30k)")
      ("smooth-value", po::value(&smooth_value), "the value of floor (0.1) and add-k (1)")
      ("chrf-char-order", po::value(&chrf.char_order)->default_value(6)->notifier(at_least("chrf-char-order", 0)),
       "chrF's character n-gram order")
      ("chrf-word-order", po::value(&chrf.word_order)->default_value(0)->notifier(at_least("chrf-word-order", 0)),
       "chrF's word n-gram order (2: chrF++)")
      ("chrf-beta", po::value(&chrf.beta)->default_value(2)->notifier(at_least("chrf-beta", 0)),
       "weight of recall against precision")
      ("chrf-whitespace", po::bool_switch(&chrf.whitespace), "keep whitespace in chrF's character n-grams")
      ("chrf-eps-smoothing", po::bool_switch(&chrf.eps_smoothing),
       "chrF++.py's smoothing (every order counts) instead of sacreBLEU's effective order")
      ("ter-case-sensitive", po::bool_switch(&ter.case_sensitive), "case-sensitive TER (tercom lowercases)")
      ("ter-normalized", po::bool_switch(&ter.normalized), "tercom's normalisation and punctuation tokenization")
      ("ter-no-punct", po::bool_switch(&ter.no_punct), "remove punctuation before TER")
      ("ter-asian-support", po::bool_switch(&ter.asian_support), "split CJK characters (with --ter-normalized)")
      ("width,w", po::value(&width)->default_value(2)->notifier(at_least("width", 0)), "decimals of the scores")
      ("score-only,b", po::bool_switch(&score_only), "print only the scores, one per line");
  po::variables_map vm;
  if (parse_options("bleu", "--ref FILE [--ref FILE...] [--hyp FILE] [--metrics bleu,chrf,ter]", options, args, vm))
    return 0;
  if (width > 17) throw Error("--width: at most 17 decimals, not " + std::to_string(width));
  if (chrf.char_order + chrf.word_order == 0) throw Error("--chrf-char-order and --chrf-word-order are both 0");
  const std::vector<Metric> metrics =
      parse_name_list<Metric>("--metrics", metric_names, {{"bleu", Metric::bleu}, {"chrf", Metric::chrf}, {"ter", Metric::ter}});
  BleuOptions bleu;
  bleu.tokenizer = parse_bleu_tokenizer(tokenizer);
  bleu.lowercase = lowercase;
  chrf.lowercase = lowercase;
  if (bleu.tokenizer == BleuTokenizer::multi30k) bleu.smoothing = BleuSmoothing::none;
  if (vm.count("smooth-method")) bleu.smoothing = parse_bleu_smoothing(smoothing);
  if (vm.count("smooth-value")) {
    if (bleu.smoothing != BleuSmoothing::floor && bleu.smoothing != BleuSmoothing::add_k)
      throw Error("--smooth-value applies to --smooth-method floor or add-k only");
    if (!(smooth_value >= 0)) throw Error("--smooth-value must be >= 0, not " + std::to_string(smooth_value));
    bleu.smooth_value = smooth_value;
  }

  std::vector<std::vector<std::string>> references;
  for (const std::string& path : ref_paths) references.push_back(read_segments(path));
  const std::vector<std::string> hypotheses = read_segments(hyp);
  check_line_counts(hyp, hypotheses.size(), ref_paths, references);
  // sacreBLEU's warning: its tokenizers expect detokenized text, and `translate` writes tokens.
  const bool uses_bleu_tokenizer = std::find(metrics.begin(), metrics.end(), Metric::bleu) != metrics.end() &&
                                   bleu.tokenizer != BleuTokenizer::multi30k && bleu.tokenizer != BleuTokenizer::none;
  const auto tokenized = std::count_if(hypotheses.begin(), hypotheses.end(), [](const std::string& line) {
    return line.size() >= 2 && line.compare(line.size() - 2, 2, " .") == 0;
  });
  if (uses_bleu_tokenizer && tokenized >= 100)
    std::cerr << "rnnsearch bleu: note: " << tokenized << " hypotheses end in a tokenized period (\" .\"): BLEU "
              << "expects detokenized text (translate --detokenize), or --tokenize multi30k for tokens\n";

  OutputFile out("-", {});
  for (Metric metric : metrics) {
    double score;
    std::string line;
    if (metric == Metric::bleu) {
      const BleuResult result = corpus_bleu(hypotheses, references, bleu);
      score = result.bleu;
      line = format_bleu(result, bleu_signature(bleu, references.size()), width);
    } else if (metric == Metric::chrf) {
      score = corpus_chrf(hypotheses, references, chrf).score;
      line = score_line(chrf_signature(chrf, references.size()), score, width);
    } else {
      score = corpus_ter(hypotheses, references, ter).score;
      line = score_line(ter_signature(ter, references.size()), score, width);
    }
    out.stream() << (score_only ? fixed_decimals(score, width) : line) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace rnnsearch::cli
