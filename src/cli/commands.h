#pragma once
// The subcommands of the rnnsearch binary (DESIGN.md §4). Each takes the arguments after
// its name and returns the process exit status; errors are thrown as rnnsearch::Error and
// printed by main as one line.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace rnnsearch::cli {

using Args = std::vector<std::string>;

int vocab_command(const Args& args);
int train_command(const Args& args);
int translate_command(const Args& args);
int score_command(const Args& args);
int bleu_command(const Args& args);
int tokenize_command(const Args& args);

// Parses args into vm; handles --help (prints usage, returns true = "stop, exit 0") and
// --config FILE (options from a "name = value" file; the command line wins).
bool parse_options(const std::string& command, const std::string& usage,
                   boost::program_options::options_description& options, const Args& args,
                   boost::program_options::variables_map& vm);

// --threads N (0 = all cores) applied to OpenMP; returns the number used.
int set_threads(int requested);

}  // namespace rnnsearch::cli
