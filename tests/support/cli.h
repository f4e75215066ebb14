#pragma once
// The fixture of the command-line tests (test_cli_translate, test_cli_score, test_cli_bleu):
// the real binary run on a tiny random model written into a temporary directory
// (config.json, vocab.src, vocab.tgt, model.npz), and what they check its output with.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model_dir.h"
#include "run_binary.h"
#include "temp_dir.h"

namespace rnnsearch::test {

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size())
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}


struct Result {
  int status;
  std::vector<std::string> out, err;
  std::string out_text, err_text;
  // err less the warnings a CPU may or may not print ("--precision bf16 needs a CPU with
  // AVX512_BF16 ...; computing in fp32"): tests of the one-line error contract count these,
  // so that they hold on every CPU and under RNNSEARCH_CPU.
  std::vector<std::string> errors;
};

class Cli : public ::testing::Test {
 protected:
  // A model whose vocabularies hold plain words and which never chooses <unk>, so an output
  // re-tokenizes to itself.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    write_model(model(), -30.0f);
  }
  // The test model with bias unk_bias added to <unk>'s output logit.
  static void write_model(const std::string& model, float unk_bias) {
    test::write_model_dir(model, {"a", "b", "c", "d", "e", "f"}, {"x", "y", "z", "w", "v"}, unk_bias);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string model() { return dir_->path("model"); }
  static std::string write(const std::string& name, const std::string& text) { return dir_->write(name, text); }

  // Runs rnnsearch ARGUMENTS; `environment` ("NAME=value ...") is set for it alone.
  static Result run(const std::string& arguments, const std::string& stdin_file = "",
                    const std::string& environment = "") {
    const test::BinaryRun run = test::run_binary(arguments, *dir_, stdin_file, environment);
    Result r{run.status, {}, {}, run.out, run.err, {}};
    r.out = lines_of(r.out_text);
    r.err = lines_of(r.err_text);
    const std::string fallback = "; computing in fp32";
    for (const std::string& line : r.err)
      if (line.size() < fallback.size() || line.compare(line.size() - fallback.size(), fallback.size(), fallback))
        r.errors.push_back(line);
    return r;
  }

  // Normal lines, an empty line, invalid UTF-8, a whitespace-only line, a line of 300
  // tokens (cut by --max-length 40) and an unknown word.
  static std::string mixed_input() {
    std::string long_line;
    for (int k = 0; k < 300; ++k) long_line += k % 2 ? "a " : "b ";
    return write("mixed.txt", "a b c\n\nd \xff\xfe e\n   \n" + long_line + "\nc unknownword f\n");
  }
  static constexpr size_t kMixedLines = 6;
  // The translate command of the precision tests, to be followed by --precision NAME.
  static std::string precision_command(const std::string& input) {
    return "translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 3 ";
  }

  inline static TempDir* dir_ = nullptr;
};


inline bool sorted_descending(const std::vector<double>& scores) {
  for (size_t k = 1; k < scores.size(); ++k)
    if (scores[k] > scores[k - 1]) return false;
  return true;
}

inline void expect_distributions(const nlohmann::json& matrix, size_t rows, size_t cols, const std::string& where) {
  ASSERT_EQ(matrix.size(), rows) << where;
  for (const auto& row : matrix) {
    ASSERT_EQ(row.size(), cols) << where;
    double sum = 0;
    for (const auto& w : row) {
      EXPECT_GE(w.get<double>(), 0.0);
      sum += w.get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-3 * static_cast<double>(cols)) << where;  // 4 printed digits per weight
  }
}

}  // namespace rnnsearch::test
