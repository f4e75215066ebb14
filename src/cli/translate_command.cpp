// rnnsearch translate: beam search over a stream of lines, one output line per input line
// (K with --n-best K), written and flushed chunk by chunk so a pipeline sees output while
// the input is still being read.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "commands.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/util/checks.h"
#include "rnnsearch/util/mpi.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

// Rank 0 reads the next chunk (input is null on the other ranks), and the same lines of the
// --target-prefix file if there is one; in an MPI job every rank receives them and translates
// its share of the chunk's batches.
bool read_chunk(LineReader* input, LineReader* prefix_file, bool with_prefixes, size_t count,
                std::vector<std::string>& lines, std::vector<std::string>& prefixes) {
  lines.clear();
  prefixes.clear();
  std::string line;
  const auto mismatch = [&](const std::string& detail) {
    return Error(input->path() + " and " + prefix_file->path() + " (--target-prefix) differ in length: " +
                 prefix_file->path() + " has " + detail);
  };
  if (input) {
    while (lines.size() < count && input->next(line)) {
      lines.push_back(line);
      if (!prefix_file) continue;
      if (!prefix_file->next(line)) throw mismatch("fewer lines (" + std::to_string(prefix_file->line_number()) + ")");
      prefixes.push_back(line);
    }
    if (prefix_file && lines.size() < count && prefix_file->next(line))
      throw mismatch("more lines (line " + std::to_string(prefix_file->line_number()) + ")");
  }
  mpi::broadcast(lines);
  if (with_prefixes) mpi::broadcast(prefixes);
  return !lines.empty();
}

// --shortlist FILE FIRST BEST: the two sizes (0, 0 without the option).
std::pair<int, int> parse_shortlist_sizes(const std::vector<std::string>& values) {
  if (values.empty()) return {0, 0};
  if (values.size() != 3) throw Error("--shortlist takes three values: FILE FIRST BEST");
  const auto size = [](const std::string& text, const char* name) {
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || value < 0)
      throw Error(std::string("--shortlist: ") + name + " must be a whole number >= 0, not '" + text + "'");
    return value;
  };
  return {size(values[1], "FIRST"), size(values[2], "BEST")};
}

}  // namespace

int translate_command(const Args& args) {
  DecodeArgs decode;
  std::string input, output, target_prefix;
  TranslatorOptions topts;
  int maxi_batch = 10;
  bool detokenize = false;
  std::string unk_dictionary;
  std::vector<std::string> shortlist;
  std::string precision;
  po::options_description options("translate options");
  options.add_options()
      ("input,i", po::value(&input)->default_value("-"),
       "sentences to translate, one per line (a FILE may be gzipped; - = stdin, plain text)")
      ("output,o", po::value(&output)->default_value("-"), "where to write translations (- = stdout)")
      ("target-prefix", po::value(&target_prefix),
       "FILE with one line per input line: the words each translation must start with, forced before the "
       "search goes on (an empty line: none)")
      ("maxi-batch", po::value(&maxi_batch)->default_value(10)->notifier(at_least("maxi-batch", 1)),
       "batches read, length-sorted and translated before output is written and flushed")
      ("max-length", po::value(&topts.max_length)->default_value(200)->notifier(at_least("max-length", 1)),
       "source tokens per line; longer lines are cut with a warning")
      ("detokenize", po::bool_switch(&detokenize),
       "join output tokens into readable text (raw-text models write raw text anyway)")
      ("replace-unk", po::bool_switch(&topts.replace_unk),
       "replace each <unk> in the output with the source word it attends to most")
      ("unk-dictionary", po::value(&unk_dictionary),
       "with --replace-unk: lines 'source target' giving the replacement of a source word")
      ("shortlist", po::value(&shortlist)->multitoken(),
       "FILE FIRST BEST: compute the output layer only for the FIRST most frequent target tokens and the "
       "BEST translations of each source token in the lexical table FILE (rnnsearch shortlist writes "
       "MODEL/lex.s2t); faster, approximate")
      ("precision", po::value(&precision)->default_value("auto"),
       "of the vocabulary projection's products: fp32; bf16 with fp32 sums (CPUs with AVX512_BF16); int8 "
       "with int32 sums (CPUs with AVX2; VNNI keeps 8-bit weights, AVX2 alone 7-bit); elsewhere fp32. auto = int8, else bf16, else "
       "fp32, as the CPU allows; fp32 with --shortlist");
  ProgressOptions progress_options;
  options.add(decode_option_group(DecodeUse::translate))
      .add(model_option_group(decode, "sentences"))
      .add(output_option_group(decode))
      .add(progress_option_group(progress_options));
  po::variables_map vm;
  if (parse_options("translate", "--model DIR [--input FILE] [--output FILE] [options]", options, args, vm))
    return 0;
  topts.beam = decode_options(vm, DecodeUse::translate).beam;  // checked before a model is loaded
  OutputOptions oopts = output_options(decode);
  oopts.n_best = topts.beam.alternatives > 0 ? topts.beam.alternatives : topts.beam.n_best;
  oopts.detokenize = detokenize;
  topts.batch_size = decode.batch_size;
  topts.piece_alignments = piece_alignments(decode);
  topts.beam.alignment = oopts.needs_alignment() || vm.count("heatmaps") || topts.replace_unk;
  if (vm.count("unk-dictionary")) {
    if (!topts.replace_unk) throw Error("--unk-dictionary goes with --replace-unk");
    topts.unk_replacement = UnkReplacement::load(unk_dictionary);
  }
  topts.threads = set_threads(decode.threads);
  // The combination is refused whatever the CPU, before a CPU without bf16 or int8 would warn
  // that it computes in fp32 instead.
  if (!shortlist.empty() && (precision == "bf16" || precision == "int8"))
    throw Error("--precision " + precision + " and --shortlist do not combine (a shortlist's projection is fp32): give one");
  const Precision requested = precision_option(precision, PrecisionUse::decoding);
  topts.precision = shortlist.empty() ? requested : Precision::fp32;
  if (target_prefix == "-" && input == "-") throw Error("--target-prefix and --input cannot both be stdin");
  const std::pair<int, int> shortlist_sizes = parse_shortlist_sizes(shortlist);

  const std::vector<Model> models = load_ensemble(decode.model_dirs);
  const Model& model = models.front();
  if (!shortlist.empty())
    topts.shortlist = std::make_shared<Shortlist>(read_lexical_table(shortlist[0], model.src_vocab, model.tgt_vocab),
                                                  static_cast<int>(model.tgt_vocab.size()), shortlist_sizes.first,
                                                  shortlist_sizes.second);
  oopts.tokenizer = model.tokenizer;
  Translator translator(model, ensemble_weights(models), topts);
  const OutputPrinter printer(oopts);
  // Rank 0 alone reads the input and writes the output (and the heatmaps).
  const bool root = mpi::is_root();
  std::optional<LineReader> reader, prefix_reader;
  std::optional<OutputFile> out;
  if (root) {
    reader.emplace(input);
    if (!target_prefix.empty()) prefix_reader.emplace(target_prefix);
    out.emplace(output, std::vector<std::string>{input, target_prefix});
  }
  const std::string input_name = input == "-" ? "stdin" : input;
  HeatmapCollector heatmap_records(vm.count("heatmaps") ? decode.heatmaps_limit : 0);
  ProgressMeter progress("rnnsearch translate", progress_options);
  // The total (for the ETA) of a file that can be read twice; a pipe's is unknown.
  progress.start("translating", "lines", progress_options.quiet || !root ? 0 : count_lines_of_file(input));
  const bool stdout_shares_the_terminal = output == "-" && ::isatty(STDOUT_FILENO) == 1;

  const auto start = std::chrono::steady_clock::now();
  size_t lines_done = 0;
  translate_chunks(
      translator, static_cast<size_t>(topts.batch_size) * maxi_batch,
      [&](size_t count, std::vector<std::string>& lines, std::vector<std::string>& prefixes) {
        return read_chunk(reader ? &*reader : nullptr, prefix_reader ? &*prefix_reader : nullptr,
                          !target_prefix.empty(), count, lines, prefixes);
      },
      [&](std::vector<LineTranslation>& translations) {
        lines_done += translations.size();
        if (!root) return;
        if (stdout_shares_the_terminal) progress.clear();
        for (const LineTranslation& t : translations) {
          if (!t.warning.empty())
            progress.message("rnnsearch translate: " + located(input_name, t.line + 1, "warning: " + t.warning));
          printer.print(out->stream(), t);
          if (!t.hypotheses.empty() && !heatmap_records.full())
            heatmap_records.offer(OutputPrinter::record(t, t.hypotheses.front()));
        }
        out->flush();
        progress.add(translations.size());
      });
  progress.finish();
  if (!root) return 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!progress_options.quiet)
    std::cerr << "rnnsearch translate: " << lines_done << " lines in " << seconds << " s ("
            << (seconds > 0 ? lines_done / seconds : 0.0) << " lines/s), beam " << topts.beam.beam_size
            << ", batch " << topts.batch_size << ", "
            << (mpi::size() > 1 ? std::to_string(mpi::size()) + " MPI ranks × " : "") << topts.threads
            << " thread(s), projection in " << precision_name(topts.precision) << " (CPU " << describe(cpu_features())
            << "), " << model.weights_path
            << (models.size() > 1 ? " and " + std::to_string(models.size() - 1) + " more (ensemble)" : "") << "\n";
  if (vm.count("heatmaps"))
    std::cerr << "rnnsearch translate: heatmaps: " << heatmap_records.write(decode.heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
