// rnnsearch translate (and the options every command shares), run as the real binary on a tiny
// random model (support/cli.h): output lines, n-best lists, alignments, heatmaps, shortlists,
// precisions, files that must not be destroyed, and one-line errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <omp.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rnnsearch/kernels/int8.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/build_info.h"
#include "rnnsearch/util/cpu.h"
#include "support/cli.h"
#include "support/fixtures.h"
#include "support/requires.h"

namespace rnnsearch {
namespace {

using namespace test;

TEST_F(Cli, TranslateGivesOneLinePerInputLine) {
  const std::string input = mixed_input();
  for (const std::string beam : {"1", "5"}) {
    // With --alignment a translated line always has " ||| " (a translation may be empty).
    const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --alignment hard --beam-size " +
                         beam);
    ASSERT_EQ(r.status, 0) << r.err_text;
    ASSERT_EQ(r.out.size(), kMixedLines) << r.out_text;
    for (size_t k : {0, 4, 5}) EXPECT_NE(r.out[k].find(" ||| "), std::string::npos) << r.out[k];
    for (size_t k : {1, 2, 3}) EXPECT_EQ(r.out[k], "");
    // Warnings name the line: 3 is not UTF-8, 5 is cut.
    EXPECT_NE(r.err_text.find(input + ":3: warning: invalid UTF-8"), std::string::npos) << r.err_text;
    EXPECT_NE(r.err_text.find(input + ":5: warning: 300 tokens, cut"), std::string::npos) << r.err_text;
    EXPECT_EQ(r.err_text.find(":2:"), std::string::npos) << "an empty line is not worth a warning";
  }
}

TEST_F(Cli, TranslateReadsStdinAndWritesOutputFile) {
  const std::string input = write("stdin.txt", "a b\nc d e\n");
  const std::string output = dir_->path("out.txt");
  const Result r = run("translate --model " + model() + " --output " + output + " --batch-size 1 --threads 2", input);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_EQ(lines_of(file_text(output)).size(), 2u);
  EXPECT_TRUE(r.out.empty());
}

// A pipeline sees each chunk's output while the input is still open: the writer below
// sends its second line only once the first translation has arrived (or after 10 s).
TEST_F(Cli, TranslateFlushesEachChunkWhileInputIsOpen) {
  const std::string out = dir_->path("stream.out"), seen = dir_->path("stream.seen");
  const std::string writer = "(printf 'a b\\n'; i=0; while [ ! -s " + out + " ] && [ $i -lt 100 ]; do sleep 0.1; " +
                             "i=$((i+1)); done; [ -s " + out + " ] && touch " + seen + "; printf 'c d\\n')";
  const std::string command = writer + " | " + RNNSEARCH_BINARY + " translate -m " + model() +
                              " --batch-size 1 --maxi-batch 1 >" + out + " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(seen)) << "the first line was not translated before the input ended";
  EXPECT_EQ(lines_of(file_text(out)).size(), 2u);
}

TEST_F(Cli, NBestGivesKSortedLinesPerInput) {
  const std::string input = mixed_input();
  const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 4 --n-best 3");
  ASSERT_EQ(r.status, 0) << r.err_text;
  std::map<int, std::vector<double>> scores;
  std::map<int, std::set<std::string>> translations;
  for (const std::string& line : r.out) {
    const auto fields = split(line, " ||| ");
    ASSERT_EQ(fields.size(), 3u) << line;
    const int i = std::stoi(fields[0]);
    scores[i].push_back(std::stod(fields[2]));
    translations[i].insert(fields[1]);
  }
  ASSERT_EQ(scores.size(), kMixedLines);  // every input line 0..5 is there
  for (const auto& [i, s] : scores) {
    const bool translated = i == 0 || i == 4 || i == 5;
    EXPECT_EQ(s.size(), translated ? 3u : 1u) << "line " << i;
    EXPECT_EQ(translations[i].size(), s.size()) << "line " << i << ": hypotheses must differ";
    EXPECT_TRUE(sorted_descending(s)) << "line " << i;
    for (double score : s) EXPECT_LE(score, 0.0);
  }
  EXPECT_EQ(r.out.front().substr(0, 6), "0 ||| ");
}

TEST_F(Cli, NBestLargerThanBeamIsAnError) {
  const Result r = run("translate -m " + model() + " --beam-size 2 --n-best 3", mixed_input());
  EXPECT_NE(r.status, 0);
  ASSERT_EQ(r.errors.size(), 1u) << r.err_text;
  EXPECT_NE(r.errors[0].find("--n-best"), std::string::npos);
}

TEST_F(Cli, JsonRecordsParseAndHoldAttentionDistributions) {
  const std::string input = mixed_input();
  const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --format json");
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), kMixedLines);
  for (size_t k = 0; k < r.out.size(); ++k) {
    const auto record = nlohmann::json::parse(r.out[k]);
    EXPECT_EQ(record.at("line").get<size_t>(), k);
    const size_t source = record.at("source").size(), target = record.at("target").size();
    if (source == 0) {
      EXPECT_FALSE(record.contains("alignment")) << r.out[k];
      continue;
    }
    EXPECT_LE(record.at("score").get<double>(), 0.0);
    expect_distributions(record.at("alignment"), target + 1, source + 1, "line " + std::to_string(k));
  }
  // The cut line keeps its first 40 tokens; the unknown word is still shown as given.
  EXPECT_EQ(nlohmann::json::parse(r.out[4]).at("source").size(), 40u);
  EXPECT_EQ(nlohmann::json::parse(r.out[5]).at("source")[1], "unknownword");
}

TEST_F(Cli, SoftAlignmentRowsAreDistributions) {
  const Result r = run("translate -m " + model() + " --alignment soft", write("soft.txt", "a b c d\nf\n"));
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 2u);
  const size_t sources[] = {4, 1};
  for (size_t k = 0; k < 2; ++k) {
    const auto fields = split(r.out[k], " ||| ");
    ASSERT_EQ(fields.size(), 2u) << r.out[k];
    nlohmann::json matrix = nlohmann::json::array();
    for (const std::string& row : words(fields[1])) {
      nlohmann::json weights = nlohmann::json::array();
      for (const std::string& w : split(row, ",")) weights.push_back(std::stod(w));
      matrix.push_back(weights);
    }
    expect_distributions(matrix, words(fields[0]).size() + 1, sources[k] + 1, r.out[k]);
  }
}

TEST_F(Cli, HardAlignmentPairsAreInRange) {
  const Result r = run("translate -m " + model() + " --alignment hard --beam-size 3",
                    write("hard.txt", "a b c d e\nf a\nc\n"));
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 3u);
  const int sources[] = {5, 2, 1};
  for (size_t k = 0; k < 3; ++k) {
    const auto fields = split(r.out[k], " ||| ");
    ASSERT_EQ(fields.size(), 2u) << r.out[k];
    const int target = static_cast<int>(words(fields[0]).size());
    const auto pairs = words(fields[1]);
    EXPECT_EQ(static_cast<int>(pairs.size()), target) << "one pair per target token";
    for (const std::string& pair : pairs) {
      int s = -1, t = -1;
      ASSERT_EQ(std::sscanf(pair.c_str(), "%d-%d", &s, &t), 2) << pair;
      EXPECT_GE(s, 0);
      EXPECT_LE(s, sources[k]) << "the source </s> column is the last valid index";
      EXPECT_GE(t, 0);
      EXPECT_LT(t, target);
    }
  }
}

// --replace-unk on a model that likes <unk>: no <unk> is left, each replacement is a
// source word (or, with --unk-dictionary, its entry).
TEST_F(Cli, ReplaceUnkLeavesNoUnk) {
  const std::string unk_model = dir_->path("unk_model2");
  write_model(unk_model, 3.0f);
  const std::string sources = write("replace.in", "a b c\nd e\nf a b c d\n");
  const Result plain = run("translate -m " + unk_model + " -i " + sources);
  ASSERT_EQ(plain.status, 0) << plain.err_text;
  ASSERT_NE(plain.out_text.find("<unk>"), std::string::npos) << "the test needs <unk> in the output";
  const Result replaced = run("translate -m " + unk_model + " -i " + sources + " --replace-unk");
  ASSERT_EQ(replaced.status, 0) << replaced.err_text;
  ASSERT_EQ(replaced.out.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const auto before = words(plain.out[k]), after = words(replaced.out[k]);
    ASSERT_EQ(before.size(), after.size());
    for (size_t i = 0; i < before.size(); ++i)
      if (before[i] == "<unk>")
        EXPECT_NE(std::string("abcdef").find(after[i]), std::string::npos) << replaced.out[k];
      else
        EXPECT_EQ(before[i], after[i]);
  }
  const std::string dictionary = write("unk.dict", "a A\nb B\nc C\nd D\ne E\nf F\n");
  const Result translated =
      run("translate -m " + unk_model + " -i " + sources + " --replace-unk --unk-dictionary " + dictionary);
  ASSERT_EQ(translated.status, 0) << translated.err_text;
  EXPECT_EQ(translated.out_text.find("<unk>"), std::string::npos);
  EXPECT_NE(translated.out_text.find_first_of("ABCDEF"), std::string::npos) << translated.out_text;
}

// Output paths that would destroy data: -o naming the input is refused before it is
// truncated; a symlink stays a symlink (its target gets the file); a FIFO stays a FIFO.
TEST_F(Cli, OutputNeverDestroysInputsLinksOrSpecialFiles) {
  const std::string input = write("same.txt", "a b c\nd e\n");
  for (const std::string& command : {"translate -m " + model(), std::string("tokenize")}) {
    const Result r = run(command + " -i " + input + " -o " + input);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err_text.find("is also the input"), std::string::npos) << r.err_text;
    EXPECT_EQ(file_text(input), "a b c\nd e\n") << command;
  }
  namespace fs = std::filesystem;
  const std::string target = dir_->path("vocab.target"), link = dir_->path("vocab.link");
  write("vocab.target", "old\n");
  fs::create_symlink(target, link);
  ASSERT_EQ(run("vocab -i " + input + " -o " + link + " --min-count 1").status, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(file_text(target).find("<unk>"), std::string::npos);
  const std::string fifo = dir_->path("vocab.fifo"), copy = dir_->path("vocab.copy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::system(("cat " + fifo + " > " + copy + " &").c_str()), 0);
  ASSERT_EQ(run("vocab -i " + input + " -o " + fifo + " --min-count 1").status, 0);
  for (int k = 0; k < 100 && file_text(copy).find("<unk>") == std::string::npos; ++k) usleep(20000);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_NE(file_text(copy).find("<unk>"), std::string::npos);
}

// Output that cannot be written is an error, not a success (> /dev/full).
TEST_F(Cli, UnwritableStdoutIsAnError) {
  const std::string text = write("full.txt", "a b c\n");
  for (const std::string& command : {"bleu -r " + text + " --hyp " + text, "score -m " + model() + " --src " + text +
                                         " --tgt " + text, "translate -m " + model() + " -i " + text}) {
    const int raw = std::system((std::string(RNNSEARCH_BINARY) + " " + command + " > /dev/full 2>/dev/null").c_str());
    EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 1) << command;
  }
}

// A read error on standard input is an error, not an end of input (here stdin is a
// directory, whose read(2) fails with EISDIR; it gave no output and exit 0).
TEST_F(Cli, UnreadableStdinIsAnError) {
  const std::string directory = dir_->path("");
  for (const std::string& command : {std::string("tokenize"), "translate -m " + model(), "bleu -r " + write("r.txt", "a\n")}) {
    const Result r = run(command, directory);
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find("stdin"), std::string::npos) << r.errors[0];
    EXPECT_NE(r.errors[0].find("Is a directory"), std::string::npos) << r.errors[0];
  }
}

// Running out of memory is an error message and exit 1, not a signal: a beam of ten
// million hypotheses under a 600 MB address-space limit (it was SIGSEGV: Eigen's resize
// freed a workspace before the failing allocation, and its destructor freed it again).
TEST_F(Cli, OutOfMemoryIsAnErrorNotASignal) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
  const std::string input = write("oom.in", "a b c d e f\n");
  const std::string command = "ulimit -v 600000; exec " + std::string(RNNSEARCH_BINARY) + " translate -m " + model() +
                              " -i " + input + " --beam-size 10000000 > /dev/null 2> " + dir_->path("oom.err");
  const int raw = std::system(("sh -c '" + command + "'").c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 1) << "status " << raw;
  EXPECT_NE(file_text(dir_->path("oom.err")).find("out of memory"), std::string::npos)
      << file_text(dir_->path("oom.err"));
}

TEST_F(Cli, HeatmapsWriteIndexAndOneSvgPerSentenceUpToTheLimit) {
  const std::string input = write("heat.txt", "a b c\n\nd e\nf\nc c a\n");
  for (const auto& [limit, svgs] : {std::pair<std::string, size_t>{"100", 4}, {"2", 2}}) {
    const std::string out = dir_->path("heatmaps-" + limit);
    const Result r =
        run("translate -m " + model() + " -i " + input + " --heatmaps " + out + " --heatmaps-limit " + limit);
    ASSERT_EQ(r.status, 0) << r.err_text;
    EXPECT_EQ(r.out.size(), 5u);
    const std::string index = out + "/index.html";
    EXPECT_TRUE(std::filesystem::exists(index));
    EXPECT_NE(r.err_text.find(index), std::string::npos) << r.err_text;
    size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(out)) count += entry.path().extension() == ".svg";
    EXPECT_EQ(count, svgs);
  }
  const std::string scored = dir_->path("heatmaps-score");
  const Result r = run("score -m " + model() + " --src " + write("h.src", "a b\nc\n") + " --tgt " +
                    write("h.tgt", "x\ny z\n") + " --heatmaps " + scored);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_TRUE(std::filesystem::exists(scored + "/index.html"));
}

// rnnsearch shortlist learns MODEL/lex.s2t; a shortlist that keeps every target word
// translates exactly as without it (in fp32, which the default precision, auto, picks with a
// shortlist), and a broken table is a one-line error naming its line.
TEST_F(Cli, ShortlistLearnsATableAndKeepingEveryWordChangesNothing) {
  const std::string src = write("lex.src", "a b c\nd e\na f\nb c d\n");
  const std::string tgt = write("lex.tgt", "x y z\nw v\nx v\ny z w\n");
  const std::string table = dir_->path("lex.s2t");
  const Result learned = run("shortlist -m " + model() + " --train-src " + src + " --train-tgt " + tgt + " -o " + table);
  ASSERT_EQ(learned.status, 0) << learned.err_text;
  const std::vector<std::string> entries = lines_of(file_text(table));
  ASSERT_FALSE(entries.empty());
  for (const std::string& entry : entries) EXPECT_EQ(words(entry).size(), 3u) << "target source prob: " << entry;

  const std::string input = mixed_input();
  const std::string translate = "translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 3 ";
  const Result full = run(translate + "--precision fp32");
  const Result everything = run(translate + "--shortlist " + table + " 1000 1");
  ASSERT_EQ(everything.status, 0) << everything.err_text;
  EXPECT_EQ(everything.out, full.out);
  const Result short_list = run(translate + "--shortlist " + table + " 0 2");
  ASSERT_EQ(short_list.status, 0) << short_list.err_text;
  EXPECT_EQ(short_list.out.size(), kMixedLines) << "line-aligned with the input";

  const std::string broken = write("broken.s2t", "x a 0.5\ny b\n");
  const Result bad = run(translate + "--shortlist " + broken + " 10 5");
  EXPECT_EQ(bad.status, 1);
  ASSERT_EQ(bad.errors.size(), 1u) << bad.err_text;
  EXPECT_NE(bad.errors[0].find(broken + ":2:"), std::string::npos) << bad.errors[0];
  for (const std::string sizes : {"10", "ten 5", "10 1.5"}) {
    const Result r = run(translate + "--shortlist " + table + " " + sizes);
    EXPECT_EQ(r.status, 1) << sizes;
    ASSERT_EQ(r.errors.size(), 1u) << sizes << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find("--shortlist"), std::string::npos) << r.errors[0];
  }
}

// bf16 and int8 change the logits by a few roundings: on this model not enough to change a
// translation. Where the CPU lacks the instructions, they compute in fp32 and say so. The
// default, auto, picks one of them (and fp32 with a shortlist: the test above).
TEST_F(Cli, LowPrecisionTranslatesAsFp32Does) {
  const std::string input = mixed_input(), translate = precision_command(input);
  const Result fp32 = run(translate + "--precision fp32");
  ASSERT_EQ(fp32.status, 0) << fp32.err_text;
  for (const std::string precision : {"bf16", "int8", "auto"}) {
    const Result low = run(translate + "--precision " + precision);
    ASSERT_EQ(low.status, 0) << precision << ": " << low.err_text;
    EXPECT_EQ(low.out, fp32.out) << precision;
    if (precision == "auto") continue;  // tested above
    const Result with_shortlist = run(translate + "--precision " + precision + " --shortlist " + input + " 10 1");
    EXPECT_EQ(with_shortlist.status, 1) << precision;
    ASSERT_EQ(with_shortlist.errors.size(), 1u) << with_shortlist.err_text;
    EXPECT_NE(with_shortlist.errors[0].find("do not combine"), std::string::npos) << with_shortlist.errors[0];
  }
}

// RNNSEARCH_CPU takes the paths a smaller CPU would: on an AVX-512 machine the fallbacks of
// --precision bf16 (a warning, then fp32) run here too, and int8 runs the products of AVX2
// without VNNI, or falls back below AVX2. An unknown value is a one-line error that names
// the variable.
TEST_F(Cli, RnnsearchCpuForcesTheFallbacks) {
  const std::string translate = precision_command(mixed_input());
  const Result fp32 = run(translate + "--precision fp32");
  ASSERT_EQ(fp32.status, 0) << fp32.err_text;
  struct Case {
    std::string cap, precision, runs_in;
  };
  for (const Case& c : std::vector<Case>{{"avx2", "bf16", "fp32"},
                                         {"avx2", "int8", int8_supported() ? "int8" : "fp32"},
                                         {"avx2", "auto", int8_supported() ? "int8" : "fp32"},
                                         {"sse41", "bf16", "fp32"},
                                         {"sse41", "int8", "fp32"},
                                         {"sse41", "auto", "fp32"}}) {
    const std::string what = "RNNSEARCH_CPU=" + c.cap + " --precision " + c.precision;
    const Result low = run(translate + "--precision " + c.precision, "", "RNNSEARCH_CPU=" + c.cap);
    ASSERT_EQ(low.status, 0) << what << ": " << low.err_text;
    EXPECT_EQ(low.out, fp32.out) << what;
    EXPECT_NE(low.err_text.find("projection in " + c.runs_in + " (CPU "), std::string::npos) << what << low.err_text;
    EXPECT_NE(low.err_text.find("(RNNSEARCH_CPU=" + c.cap + ")"), std::string::npos) << low.err_text;
    const bool falls_back = c.precision != "auto" && c.runs_in != c.precision;
    EXPECT_EQ(low.err_text.find("--precision " + c.precision + " needs a CPU with") != std::string::npos, falls_back)
        << what << ": " << low.err_text;
  }
  const Result unknown = run(translate, "", "RNNSEARCH_CPU=avx3");
  EXPECT_EQ(unknown.status, 1);
  ASSERT_EQ(unknown.err.size(), 1u) << unknown.err_text;
  EXPECT_NE(unknown.err[0].find("RNNSEARCH_CPU must be native, avx512, avx2 or sse41, not 'avx3'"), std::string::npos)
      << unknown.err[0];
  EXPECT_TRUE(unknown.out.empty());
}

TEST_F(Cli, MissingModelIsOneLineError) {
  const Result r = run("translate -m " + dir_->path("no-such-model"), mixed_input());
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.errors.size(), 1u) << r.err_text;
}

// Every numeric option is checked before any work starts: one line naming the option and
// the value, prefixed once, and a non-zero exit.
TEST_F(Cli, InvalidNumericOptionsAreOneLineErrors) {
  const std::string train = "train --train-src a --train-tgt b --valid-src c --valid-tgt d -m " + dir_->path("m") + " ";
  const std::string translate = "translate -m " + dir_->path("no-such-model") + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {train + "--lr -1", "--lr must be"},          {train + "--dropout 1.5", "--dropout must be"},
      {train + "--dropout nan", "--dropout must be"}, {train + "--clip-norm -1", "--clip-norm must be"},
      {train + "--dropout-src 1", "--dropout-src must be"}, {train + "--dropout-trg -0.1", "--dropout-trg must be"},
      {train + "--dropout-rnn 1", "--dropout-rnn must be"},
      {train + "--batch-size 0", "--batch-size must be"}, {train + "--emb -1", "--emb must be"},
      {train + "--max-updates -5", "--max-updates must be"}, {train + "--patience -1", "--patience must be"},
      {translate + "--beam-size 0", "--beam-size must be"}, {translate + "--n-best -1", "--n-best must be"},
      {translate + "--batch-size 0", "--batch-size must be"}, {translate + "--normalize nan", "--normalize must be"},
      {train + "--precision fp16", "--precision must be auto, fp32, bf16 or int8, not 'fp16'"},
      {translate + "--precision half", "--precision must be auto, fp32, bf16 or int8, not 'half'"},
      {train + "--precision int8", "--precision int8 is for translate"},
      {train + "--subwords-sample 100", "--subwords-sample must be 0 (every sentence) or more than 100, not 100"},
      {train + "--subwords-sample -1", "--subwords-sample must be"},
      // a value or name holding Boost's own message placeholders (formatting them looped forever)
      {train + "--emb %value%", "'%25value%25'"}, {train + "--%canonical_option%", "%25canonical_option%25"}};
  for (const auto& [command, message] : cases) {
    const Result r = run(command, "");
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
    EXPECT_EQ(r.errors[0].find("error:"), r.errors[0].rfind("error:")) << "prefixed twice: " << r.errors[0];
  }
}

// A build without an optional library (docs/building.md) keeps the commands that need it, and
// they say in one line what is missing; --version names what the build has.
TEST_F(Cli, WhatTheBuildLacksIsOneLineNamingThePackage) {
  const Result version = run("--version", "");
  EXPECT_EQ(version.status, 0) << version.err_text;
  EXPECT_NE(version.out_text.find("subwords: "), std::string::npos) << version.out_text;
  EXPECT_NE(version.out_text.find("serve: "), std::string::npos) << version.out_text;
  const std::string tiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const std::string train = "train --train-src " + tiny + "train.en --train-tgt " + tiny + "train.de --valid-src " +
                            tiny + "val.en --valid-tgt " + tiny + "val.de --max-updates 1 --subwords 50 -m ";
  std::vector<std::pair<std::string, std::string>> cases;
  if (!rnnsearch::build_info().sentencepiece)
    cases.push_back({train + dir_->path("sp"), "this build has no SentencePiece, which subword units need (install "
                                               "libsentencepiece-dev and rebuild)"});
  if (!rnnsearch::build_info().http)
    cases.push_back({"serve -m " + dir_->path("no-such-model"),
                     "rnnsearch serve: error: this build has no HTTP library (install libcpp-httplib-dev and rebuild)"});
  if (cases.empty()) GTEST_SKIP() << "this build has SentencePiece and cpp-httplib";
  for (const auto& [command, message] : cases) {
    const Result r = run(command, "");
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
  }
}

// Thread counts the machine cannot run: above kThreadsPerCore × its hardware threads capped
// with a warning (and the same output), above kMaxThreads refused with one line, before any
// work; the server's --http-threads likewise. None ends by a signal (100000 threads did).
TEST_F(Cli, ThreadCountsBeyondTheMachineAreCappedOrRefused) {
  const std::string input = mixed_input(), tiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"translate -m " + model() + " -i " + input + " --threads 100000", "--threads must be at most 1024, not 100000"},
      {"score -m " + model() + " --src " + input + " --tgt " + input + " --threads 100000",
       "--threads must be at most 1024, not 100000"},
      {"train --train-src " + tiny + "train.en --train-tgt " + tiny + "train.de --valid-src " + tiny +
           "val.en --valid-tgt " + tiny + "val.de -m " + dir_->path("t") + " --threads 100000",
       "--threads must be at most 1024, not 100000"},
      {"serve -m " + model() + " --http-threads 100000",
       build_info().http ? "--http-threads must be at most 4096, not 100000" : "this build has no HTTP library"}};
  for (const auto& [command, message] : refused) {
    const Result r = run(command);
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
  }
  const int cap = kThreadsPerCore * omp_get_num_procs();
  const Result one = run("translate -m " + model() + " -i " + input + " --threads 1");
  const Result many = run("translate -m " + model() + " -i " + input + " --threads " + std::to_string(cap + 1));
  ASSERT_EQ(many.status, 0) << many.err_text;
  EXPECT_EQ(many.out_text, one.out_text);
  EXPECT_NE(many.err_text.find("using " + std::to_string(cap) + "\n"), std::string::npos) << many.err_text;
}

// Trained with --subwords, translate and score speak whole words: no ▁ in the output, and
// alignments of (target words + 1) × (source words + 1) whose rows sum to 1.
TEST(Subwords, ModelTranslatesAndScoresInWholeWords) {
  RNNSEARCH_REQUIRE(sentencepiece, "SentencePiece (libsentencepiece-dev)");
  const std::string kTiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  using Words = std::vector<std::string>;
  test::TempDir dir;
  const std::string model = dir.path("m");
  const test::BinaryRun trained = test::run_binary(
      "train --train-src " + kTiny + "train.en --train-tgt " + kTiny + "train.de --valid-src " + kTiny +
          "val.en --valid-tgt " + kTiny + "val.de --model " + model +
          " --emb 8 --hidden 12 --maxout 6 --batch-size 16 --threads 1 --max-updates 10 --subwords 200",
      dir);
  ASSERT_EQ(trained.status, 0) << trained.err;
  const test::BinaryRun translated = test::run_binary("translate -m " + model + " -i " + kTiny + "val.en --format json", dir);
  ASSERT_EQ(translated.status, 0) << translated.err;
  std::istringstream lines(translated.out);
  std::string line;
  int records = 0;
  for (; std::getline(lines, line); ++records) {
    const auto record = nlohmann::json::parse(line);
    const auto source = record["source"].get<Words>(), target = record["target"].get<Words>();
    for (const auto& word : target) EXPECT_EQ(word.find("▁"), std::string::npos) << line;
    const auto alignment = record["alignment"].get<std::vector<std::vector<double>>>();
    ASSERT_EQ(alignment.size(), target.size() + 1) << line;
    for (const auto& row : alignment) {
      ASSERT_EQ(row.size(), source.size() + 1) << line;
      double sum = 0;
      for (double w : row) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-3) << line;
    }
  }
  EXPECT_EQ(records, 50);

  // --alignment-units pieces: the raw matrix, labelled with the pieces.
  const test::BinaryRun pieces =
      test::run_binary("translate -m " + model + " -i " + kTiny + "val.en --format json --alignment-units pieces", dir);
  ASSERT_EQ(pieces.status, 0) << pieces.err;
  std::istringstream piece_lines(pieces.out);
  size_t source_pieces = 0, source_words = 0;
  for (std::string pieces_line; std::getline(piece_lines, pieces_line);) {
    const auto record = nlohmann::json::parse(pieces_line);
    const auto source = record["source"].get<Words>(), target = record["target"].get<Words>();
    const auto alignment = record["alignment"].get<std::vector<std::vector<double>>>();
    ASSERT_EQ(alignment.size(), target.size() + 1);
    ASSERT_EQ(alignment.front().size(), source.size() + 1);
    source_pieces += source.size();
    source_words += join_pieces(source, false).size();
  }
  EXPECT_GT(source_pieces, source_words) << "200 pieces must split some words";
  const test::BinaryRun scored = test::run_binary(
      "score -m " + model + " --src " + kTiny + "val.en --tgt " + kTiny + "val.de --alignment hard", dir);
  ASSERT_EQ(scored.status, 0) << scored.err;
  EXPECT_EQ(std::count(scored.out.begin(), scored.out.end(), '\n'), 50);
}

// The lines of a run's stderr that start with `prefix`.
std::vector<std::string> lines_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& line : lines)
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  return found;
}

// Progress goes to stderr alone: on a terminal one live line ("\r", erase to the end of the
// line) drawn at the start and cleared at the end; elsewhere a plain line every --log-every
// seconds (0: after every chunk) with the file's total, or without one from a pipe; --quiet:
// nothing. Standard output is the same, byte for byte, in every case.
TEST_F(Cli, ProgressIsOnStderrAloneAndStdoutIsTheSame) {
  std::string text;
  for (int k = 0; k < 40; ++k) text += std::string(1, "abcdef"[k % 6]) + " " + "abcdef"[k * 5 % 6] + "\n";
  const std::string input = write("progress.txt", text);
  const std::string command = "translate -m " + model() + " --batch-size 4 --maxi-batch 2 --threads 1 ";  // chunks of 8
  const Result quiet = run(command + "-i " + input + " --quiet");
  ASSERT_EQ(quiet.status, 0);
  EXPECT_TRUE(quiet.err.empty()) << quiet.err_text;
  ASSERT_EQ(quiet.out.size(), 40u);

  const Result plain = run(command + "-i " + input + " --log-every 0");
  EXPECT_EQ(plain.out_text, quiet.out_text);
  const std::vector<std::string> progress = lines_starting(plain.err, "rnnsearch translate: translating: ");
  ASSERT_EQ(progress.size(), 6u) << plain.err_text;  // 5 chunks, then "done"
  EXPECT_NE(progress[0].find(": 8/40 lines (20.0%), "), std::string::npos) << progress[0];
  EXPECT_NE(progress[4].find(": 40/40 lines (100.0%), "), std::string::npos) << progress[4];
  EXPECT_NE(progress[4].find(", eta 0:00:00"), std::string::npos) << progress[4];
  EXPECT_EQ(progress[5].rfind("rnnsearch translate: translating: done, 40 lines in ", 0), 0u) << progress[5];

  const Result piped = run(command + "--log-every 0", input);  // standard input: no total
  EXPECT_EQ(piped.out_text, quiet.out_text);
  EXPECT_NE(piped.err_text.find("translating: 8 lines, "), std::string::npos) << piped.err_text;
  EXPECT_EQ(piped.err_text.find("/40"), std::string::npos) << piped.err_text;

  const BinaryRun terminal = run_shell_on_terminal(std::string(RNNSEARCH_BINARY) + " " + command + "-i " + input, *dir_);
  ASSERT_EQ(terminal.status, 0) << terminal.err;
  EXPECT_EQ(terminal.out, quiet.out_text);
  EXPECT_NE(terminal.err.find("\r\033[Krnnsearch translate: translating: 0/40 lines (0.0%)"), std::string::npos)
      << terminal.err;
  EXPECT_NE(terminal.err.find("\r\033[Krnnsearch translate: 40 lines in "), std::string::npos) << terminal.err;

  const Result negative = run(command + "-i " + input + " --log-every -1");
  EXPECT_EQ(negative.status, 1);
  EXPECT_EQ(negative.errors.size(), 1u) << negative.err_text;
}

// The decoding controls on the command line (their arithmetic: test_beam_search):
// --max-length-factor caps every output; a large --word-penalty makes the n-best list
// shortest first; bad values and --length-penalty-alpha beside --normalize are one-line errors.
TEST_F(Cli, DecodingControlsReachTheSearch) {
  const std::string input = write("controls.txt", "a b c d e f\nf e d\nc\n");
  const std::string command = "translate -m " + model() + " -i " + input + " --beam-size 4 ";
  const Result capped = run(command + "--max-length-factor 0.5");
  ASSERT_EQ(capped.status, 0) << capped.err_text;
  ASSERT_EQ(capped.out.size(), 3u);
  const std::vector<size_t> source_words = {6, 3, 1};
  for (size_t k = 0; k < 3; ++k)  // ⌊0.5 · (words + 1)⌋ tokens with </s>, at least 1
    EXPECT_LE(words(capped.out[k]).size(), std::max<size_t>(1, (source_words[k] + 1) / 2)) << capped.out[k];
  const Result shortest = run(command + "--n-best 4 --word-penalty 10000");
  ASSERT_EQ(shortest.status, 0) << shortest.err_text;
  size_t previous = 0, line = 0;
  for (const std::string& entry : shortest.out) {
    const std::vector<std::string> fields = split(entry, " ||| ");
    ASSERT_GE(fields.size(), 3u) << entry;
    if (std::stoul(fields[0]) != line) line = std::stoul(fields[0]), previous = 0;
    EXPECT_GE(words(fields[1]).size(), previous) << entry;  // shortest first
    previous = words(fields[1]).size();
  }
  for (const std::string bad : {"--max-length-factor -1", "--word-penalty nan", "--coverage-penalty -0.5",
                                "--length-penalty-alpha -1", "--length-penalty-alpha 0.6 --normalize 2"}) {
    const Result refused = run(command + bad);
    EXPECT_EQ(refused.status, 1) << bad;
    EXPECT_EQ(refused.errors.size(), 1u) << bad << ": " << refused.err_text;
  }
}

// --constraints FILE and --avoid FILE (a JSON list per line, an empty line: none): every
// hypothesis of line k holds its phrases to include and none to avoid; a line that cannot hold
// them gets a warning naming the phrase; a line that is not a list of strings is a one-line error
// naming the file and line.
TEST_F(Cli, ConstraintsAndPhrasesToAvoidSteerEachLine) {
  const std::string input = write("constrained.txt", "a b c\nd e\nf\n");
  const std::string constraints = write("constraints.txt", "[\"z w\"]\n\n[\"v\", \"z\"]\n");
  const std::string avoid = write("avoid.txt", "[\"v\"]\n[\"z\", \"w\"]\n\n");
  const std::string command = "translate -m " + model() + " -i " + input + " --beam-size 3 --n-best 3 --format json ";
  const Result steered = run(command + "--constraints " + constraints + " --avoid " + avoid);
  ASSERT_EQ(steered.status, 0) << steered.err_text;
  const Result plain = run(command);
  ASSERT_EQ(plain.status, 0) << plain.err_text;
  const std::vector<std::vector<std::vector<std::string>>> include = {{{"z", "w"}}, {}, {{"v"}, {"z"}}},
                                                           excluded = {{{"v"}}, {{"z"}, {"w"}}, {}};
  const auto holds = [](const std::vector<std::string>& target, const std::vector<std::string>& phrase) {
    return std::search(target.begin(), target.end(), phrase.begin(), phrase.end()) != target.end();
  };
  int differs = 0, held_before = 0;
  for (size_t k = 0; k < steered.out.size(); ++k) {
    const auto record = nlohmann::json::parse(steered.out[k]);
    const size_t line = record["line"].get<size_t>();
    const auto target = record["target"].get<std::vector<std::string>>();
    for (const auto& phrase : include.at(line)) EXPECT_TRUE(holds(target, phrase)) << steered.out[k];
    for (const auto& phrase : excluded.at(line)) EXPECT_FALSE(holds(target, phrase)) << steered.out[k];
    differs += k >= plain.out.size() || steered.out[k] != plain.out[k];
  }
  for (const std::string& out : plain.out) {
    const auto record = nlohmann::json::parse(out);
    for (const auto& phrase : excluded.at(record["line"].get<size_t>()))
      held_before += holds(record["target"].get<std::vector<std::string>>(), phrase);
  }
  EXPECT_GT(differs, 0);
  EXPECT_GT(held_before, 0) << "no plain output held a phrase to avoid: the test shows nothing";

  // (the same phrase in both is refused: test_cli_steering; as the model lowercases, these are
  // the same phrase to it alone)
  const Result conflict = run(command + "--constraints " + write("c1.txt", "[\"Z\"]\n\n\n") + " --avoid " +
                              write("a1.txt", "[\"z\"]\n\n\n"));
  ASSERT_EQ(conflict.status, 0) << conflict.err_text;
  EXPECT_NE(conflict.err_text.find(input + ":1: warning: its translation lacks the constraint 'Z'"), std::string::npos)
      << conflict.err_text;
  const Result unknown = run(command + "--constraints " + write("c2.txt", "\n[\"qqq\"]\n\n"));
  ASSERT_EQ(unknown.status, 0) << unknown.err_text;
  EXPECT_NE(unknown.err_text.find(input + ":2: warning: its constraint 'qqq' has words or characters the model cannot "
                                  "write: the translation holds <unk> in their place"),
            std::string::npos)
      << unknown.err_text;
  const std::string bad = write("bad.txt", "[\"z\"]\n{\"z\": 1}\n\n");
  const Result refused = run(command + "--constraints " + bad);
  EXPECT_NE(refused.status, 0);
  ASSERT_EQ(refused.errors.size(), 1u) << refused.err_text;
  EXPECT_NE(refused.errors[0].find(bad + ":2: --constraints wants a JSON list of strings"), std::string::npos)
      << refused.errors[0];
  const Result short_file = run(command + "--avoid " + write("short.txt", "[]\n"));
  EXPECT_NE(short_file.status, 0);
  ASSERT_EQ(short_file.errors.size(), 1u) << short_file.err_text;
  EXPECT_NE(short_file.errors[0].find("(--avoid) differ in length"), std::string::npos) << short_file.errors[0];
}

// --alternatives K after --target-prefix: K lines per input line, n-best style with the word
// where each parts and its probability, best first; JSON says the same in "alternative".
TEST_F(Cli, AlternativesFollowTheTargetPrefix) {
  const std::string input = write("alternatives.txt", "a b c\nd e\n");
  const std::string prefixes = write("alternative-prefixes.txt", "z z\n\n");
  const std::string command = "translate -m " + model() + " -i " + input + " --target-prefix " + prefixes + " --alternatives 3";
  const Result text = run(command);
  ASSERT_EQ(text.status, 0) << text.err_text;
  const Result records = run(command + " --format json");
  ASSERT_EQ(records.status, 0) << records.err_text;
  ASSERT_EQ(text.out.size(), 6u);
  ASSERT_EQ(records.out.size(), 6u);
  double previous = 2;
  for (size_t k = 0; k < 6; ++k) {
    const auto record = nlohmann::json::parse(records.out[k]);
    const auto target = record["target"].get<std::vector<std::string>>();
    const size_t position = k < 3 ? 2 : 0;
    const std::string word = position < target.size() ? target[position] : "</s>";
    ASSERT_EQ(record["alternative"]["position"], position) << records.out[k];
    EXPECT_EQ(record["alternative"]["word"], word);
    const double probability = record["alternative"]["probability"].get<double>();
    if (k % 3 > 0) {
      EXPECT_LE(probability, previous) << "best first";
    }
    previous = probability;
    EXPECT_EQ(text.out[k].rfind(std::to_string(k / 3) + " ||| ", 0), 0u) << text.out[k];
    EXPECT_NE(text.out[k].find(" ||| " + word + " 0."), std::string::npos) << text.out[k];
  }
  EXPECT_NE(nlohmann::json::parse(records.out[0])["alternative"]["word"],
            nlohmann::json::parse(records.out[1])["alternative"]["word"]);
}

// --target-prefix FILE: line k's words start every hypothesis of input line k (an empty line:
// as without the option), with an alignment row for each; a prefix file of another length is
// a one-line error naming both files.
TEST_F(Cli, TargetPrefixStartsEveryHypothesisOfItsLine) {
  const std::string input = write("prefixed.txt", "a b c\nd e\nf\n");
  const std::string prefixes = write("prefixes.txt", "z z w\n\nv\n");
  const std::string command = "translate -m " + model() + " -i " + input + " --beam-size 3 --n-best 3 ";
  const Result forced = run(command + "--target-prefix " + prefixes + " --format json");
  ASSERT_EQ(forced.status, 0) << forced.err_text;
  const Result plain = run(command + "--format json");
  ASSERT_EQ(plain.status, 0) << plain.err_text;
  ASSERT_EQ(forced.out.size(), 9u);
  ASSERT_EQ(plain.out.size(), 9u);
  const std::vector<std::vector<std::string>> expected = {{"z", "z", "w"}, {}, {"v"}};
  int differs = 0;
  for (size_t k = 0; k < forced.out.size(); ++k) {
    const auto record = nlohmann::json::parse(forced.out[k]);
    const auto target = record["target"].get<std::vector<std::string>>();
    const auto& prefix = expected[k / 3];
    ASSERT_GE(target.size(), prefix.size()) << forced.out[k];
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), target.begin())) << forced.out[k];
    EXPECT_EQ(record["alignment"].size(), target.size() + 1) << forced.out[k];
    if (prefix.empty()) {
      EXPECT_EQ(forced.out[k], plain.out[k]);
    } else {
      differs += forced.out[k] != plain.out[k];
    }
  }
  EXPECT_GT(differs, 0) << "the prefixes were the model's own choices: the test shows nothing";
  // a prefix that is not UTF-8: that line's output is empty, with a warning naming it
  const Result bad_prefix = run(command + "--target-prefix " + write("bad.txt", "z\n\xff\xfe\nv\n"));
  ASSERT_EQ(bad_prefix.status, 0) << bad_prefix.err_text;
  EXPECT_NE(bad_prefix.err_text.find(input + ":2: warning: its target prefix is invalid UTF-8"), std::string::npos)
      << bad_prefix.err_text;
  // the prefix file is an input: never the output, and not stdin with the input on stdin too
  const std::string before = file_text(prefixes);
  const Result overwrite = run(command + "--target-prefix " + prefixes + " -o " + prefixes);
  EXPECT_EQ(overwrite.status, 1);
  EXPECT_EQ(overwrite.errors.size(), 1u) << overwrite.err_text;
  EXPECT_EQ(file_text(prefixes), before);
  const Result both_stdin = run("translate -m " + model() + " --target-prefix -", input);
  EXPECT_EQ(both_stdin.status, 1);
  EXPECT_EQ(both_stdin.errors.size(), 1u) << both_stdin.err_text;
  for (const std::string& other : {write("short.txt", "z\nz\n"), write("long.txt", "z\nz\nz\nz\n")}) {
    const Result refused = run(command + "--target-prefix " + other);
    EXPECT_EQ(refused.status, 1) << other;
    ASSERT_EQ(refused.errors.size(), 1u) << refused.err_text;
    EXPECT_NE(refused.errors[0].find(input), std::string::npos) << refused.errors[0];
    EXPECT_NE(refused.errors[0].find(other), std::string::npos) << refused.errors[0];
  }
}

}  // namespace
}  // namespace rnnsearch
