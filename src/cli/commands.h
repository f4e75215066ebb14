#pragma once
// The subcommands of the rnnsearch binary (docs/design.md §4). Each takes the arguments
// after its name and returns the process exit status; errors are thrown as rnnsearch::Error
// and printed by main as one line "rnnsearch COMMAND: error: ...".
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/train/trainer.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/util/progress_meter.h"

namespace rnnsearch::cli {

using Args = std::vector<std::string>;

int vocab_command(const Args& args);
int train_command(const Args& args);
int translate_command(const Args& args);
int score_command(const Args& args);
int align_command(const Args& args);
int align_eval_command(const Args& args);
int bleu_command(const Args& args);
int tokenize_command(const Args& args);
int average_command(const Args& args);
int shortlist_command(const Args& args);
int serve_command(const Args& args);

// train's options, parsed and checked (nullopt for --help): what train_command runs, and what
// the --config fuzz target parses.
std::optional<TrainOptions> parse_train_options(const Args& args);

// Parses args into vm; handles --help (prints usage, returns true = "stop, exit 0") and
// --config FILE (options from a "name = value" file; the command line wins). Validators
// attached to options (below) run here.
bool parse_options(const std::string& command, const std::string& usage,
                   boost::program_options::options_description& options, const Args& args,
                   boost::program_options::variables_map& vm);

// set_threads (--threads) is in rnnsearch/util/cpu.h and precision_option (--precision) in
// rnnsearch/kernels/precision.h: the Python module resolves them as the command line does.

// Validators for numeric options, attached with ->notifier(...): each throws a one-line
// rnnsearch::Error naming the option and the value (rnnsearch/util/checks.h). NaN fails every check.
std::function<void(double)> non_negative(const std::string& option);  // finite, >= 0
std::function<void(double)> below_one(const std::string& option);     // in [0, 1)
std::function<void(long)> at_least(const std::string& option, long minimum);
std::function<void(long)> between(const std::string& option, long minimum, long maximum);

// Option groups that translate and score share, so both spell and check them alike.
struct DecodeArgs {
  std::vector<std::string> model_dirs;  // several: an ensemble
  int batch_size = 32, threads = 1;
  std::string alignment = "none", format = "text", heatmaps, alignment_units = "words";
  int heatmaps_limit = 100;
};
// --model, --batch-size, --threads; `unit` names what a batch holds ("sentences", ...).
boost::program_options::options_description model_option_group(DecodeArgs& args, const std::string& unit,
                                                               bool model_required = true);
// --alignment, --format, --heatmaps, --heatmaps-limit
boost::program_options::options_description output_option_group(DecodeArgs& args);
// The parsed output group (throws rnnsearch::Error on unknown names).
OutputOptions output_options(const DecodeArgs& args);
bool piece_alignments(const DecodeArgs& args);  // --alignment-units pieces (parse_alignment_units)
// The decoding options `use` takes (--beam-size, --normalize, ...), built from their table
// (decode/decode_options.h); decode_options reads back those the command line or --config
// gave and validates them (throws rnnsearch::Error).
boost::program_options::options_description decode_option_group(DecodeUse use);
DecodeOptions decode_options(const boost::program_options::variables_map& vm, DecodeUse use);

// --log-every, --quiet: progress on stderr (util/progress_meter.h) of translate, score, train.
boost::program_options::options_description progress_option_group(ProgressOptions& progress);

// Sentence pairs read a chunk at a time, so that score and align hold one chunk, not the
// corpus: from two files line by line (--src, --tgt) or from one of "SOURCE ||| TARGET" lines
// (fast_align's input; "-" is standard input). Lines are read whole and not UTF-8-checked (a
// bad line is the decoder's to report). Rank 0 reads, and in an MPI job every rank receives
// each chunk. Two regular files are counted first, so that files of different lengths are
// refused before any work; a pipe shorter or longer than its partner is found when it ends.
class PairChunks {
 public:
  PairChunks(const std::string& src_path, const std::string& tgt_path);
  explicit PairChunks(const std::string& parallel_path);
  ~PairChunks();
  // The next count pairs or fewer (none left: false); throws rnnsearch::Error naming the
  // files when they differ in length, or the line without " ||| ".
  bool next(size_t count, std::vector<std::string>& src, std::vector<std::string>& tgt);
  size_t total() const { return total_; }  // pairs, when counted beforehand; else 0
  const std::string& source_name() const { return source_name_; }  // where warnings point
  const std::string& target_name() const { return target_name_; }
  const std::vector<std::string>& inputs() const { return inputs_; }  // the paths read

 private:
  std::unique_ptr<LineReader> src_, tgt_;  // rank 0's; tgt_ null: "SOURCE ||| TARGET" lines
  std::string source_name_, target_name_;
  std::vector<std::string> inputs_;
  size_t total_ = 0;
};

// Standard output for "-", else a file written under a temporary name (io/atomic_file.h's
// AtomicOutputStream) that close() puts in place: a command that fails before close() leaves
// an existing file as it was.
class OutputFile {
 public:
  // Throws rnnsearch::Error naming the file if it cannot be opened or is one of inputs.
  OutputFile(const std::string& path, const std::vector<std::string>& inputs);
  std::ostream& stream() { return file_ ? file_->stream() : std::cout; }
  // Flushes; throws rnnsearch::Error naming the file if anything failed to be written.
  void flush();
  // Flushes and renames the file into place: once, after the last line.
  void close();

 private:
  std::string path_;
  std::unique_ptr<AtomicOutputStream> file_;  // null: stdout
};

}  // namespace rnnsearch::cli
