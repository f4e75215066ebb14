// The table of model and training options (train/train_options.h): every entry's default,
// range, config.json key and resume rule, read as the command line and a resumed run read them.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/resume_checks.h"
#include "rnnsearch/train/train_option_values.h"
#include "rnnsearch/train/train_options.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

// What the command line must give, and nothing else.
TrainOptionValues required_values() {
  TrainOptionValues values;
  for (const char* name : {"train-src", "train-tgt", "valid-src", "valid-tgt", "model"}) values.set(name, std::string("x"));
  return values;
}

// Two models that differ from ModelConfig{} in every option between them.
ModelConfig tied_model() {
  ModelConfig c;
  c.src_vocab = 10, c.tgt_vocab = 11, c.emb = 8, c.hidden = 9, c.maxout = 8, c.tied_embeddings = true;
  c.layer_norm = true, c.enc_cell_depth = 2, c.dec_cell_base_depth = 2, c.enc_depth = 3;
  c.enc_type = EncoderType::alternating, c.dec_depth = 2, c.dec_cell_high_depth = 3, c.skip = true, c.alignment_output = 5;
  return c;
}
ModelConfig linear_model() {
  ModelConfig c = tied_model();
  c.output = OutputKind::linear, c.tied_embeddings = false;
  return c;
}

// Another value than the default, for the options that made a run's vocabularies.
TrainOptionValue another_value(const TrainOptionSpec& spec) {
  switch (spec.type) {
    case TrainOptionType::flag: return true;
    case TrainOptionType::integer: return std::get<int>(spec.default_value()) + 7;
    case TrainOptionType::unsigned_integer: return std::get<unsigned long>(spec.default_value()) + 1000;
    case TrainOptionType::text:
      if (std::string(spec.name) == "subword-type") return std::string("unigram");
      break;
    default: break;
  }
  ADD_FAILURE() << "another_value: give --" << spec.name << " another value";
  return spec.default_value();
}

// A value of each numeric option of section training, another for each entry (so that an entry
// recording another's field shows), within every range; false for the others (not given).
TrainOptionValue given_value(const TrainOptionSpec& spec) {
  const long k = &spec - train_option_specs().data();
  switch (spec.type) {
    case TrainOptionType::real: return 0.01 * static_cast<double>(k + 1);
    case TrainOptionType::integer: return static_cast<int>(3 + k);
    case TrainOptionType::unsigned_integer: return static_cast<unsigned long>(300 + k);
    default: return false;
  }
}

TEST(TrainOptions, DefaultsAreOfTheirTypeAndInRange) {
  std::set<std::string> names;
  for (const TrainOptionSpec& spec : train_option_specs()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name << " twice";
    EXPECT_EQ(find_train_option(spec.name), &spec);
    if (spec.type != TrainOptionType::flag && !spec.default_text) continue;
    EXPECT_EQ(spec.default_value().index(), static_cast<size_t>(spec.type)) << spec.name;
    EXPECT_NO_THROW(spec.check(spec.default_value())) << spec.name;
  }
  EXPECT_EQ(find_train_option("no-such-option"), nullptr);
  // read as the command line reads them when only the required options are given
  const TrainOptions o = read_train_options(required_values());
  EXPECT_EQ(o.model.emb, 128);
  EXPECT_EQ(o.batch_size, 64);
  EXPECT_DOUBLE_EQ(o.optimizer.lr, 1e-3);
  EXPECT_EQ(o.subwords_sample, 2000000u);
  EXPECT_TRUE(o.shuffle);
  EXPECT_TRUE(o.options_given.size() == 5);
}

TEST(TrainOptions, RangesRefuseWithTheOptionsName) {
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.check_kind == TrainCheck::none) continue;
    const TrainOptionValue below = spec.type == TrainOptionType::real ? TrainOptionValue(-0.5)
                                 : spec.type == TrainOptionType::long_integer ? TrainOptionValue(spec.minimum - 1)
                                 : spec.type == TrainOptionType::unsigned_integer
                                     ? TrainOptionValue(spec.check_kind == TrainCheck::zero_or_above_100 ? 50ul : 0ul)
                                                                                  : TrainOptionValue(int(spec.minimum - 1));
    try {
      spec.check(below);
      ADD_FAILURE() << "--" << spec.name << " took a value below its range";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("--") + spec.name + " must be ", 0), 0u) << e.what();
    }
  }
  TrainOptionValues values = required_values();
  values.set("dropout-rnn", 1.0);
  EXPECT_THROW(read_train_options(values), Error);
}

TEST(TrainOptions, TrainingKeysRoundTripThroughConfigJson) {
  std::set<std::string> keys;
  TrainOptionValues values = required_values();
  values.set("guided-alignment", std::string("links"));  // (its weight needs it)
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.section != ConfigSection::training) continue;
    ASSERT_TRUE(spec.key && spec.recorded) << spec.name;
    EXPECT_TRUE(keys.insert(spec.key).second) << spec.key << " twice";
    const TrainOptionValue set = given_value(spec);
    if (set.index() != static_cast<size_t>(TrainOptionType::flag)) values.set(spec.name, set);
  }
  const TrainOptions o = read_train_options(values);
  const nlohmann::json record = training_json(o);
  EXPECT_EQ(record.size(), keys.size());
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.section != ConfigSection::training) continue;
    ASSERT_TRUE(record.contains(spec.key)) << spec.key;
    const TrainOptionValue set = given_value(spec);  // as config.json must record it
    if (set.index() != static_cast<size_t>(TrainOptionType::flag)) {
      EXPECT_EQ(record[spec.key], std::visit([](const auto& v) { return nlohmann::json(v); }, set)) << spec.key;
    }
  }
  EXPECT_EQ(record["shuffle"], true);
  EXPECT_EQ(record["subwords_joint"], true);
}

TEST(TrainOptions, ModelKeysAreModelConfigsJson) {
  std::set<std::string> keys = {"src_vocab", "tgt_vocab"}, written;  // (counted, not options)
  for (const ModelConfig& model : {tied_model(), linear_model()}) {
    const nlohmann::json j = model;
    TrainOptions o;
    o.model = model;
    for (const TrainOptionSpec& spec : train_option_specs()) {
      if (spec.section != ConfigSection::model) continue;
      ASSERT_TRUE(spec.key && spec.recorded) << spec.name;
      EXPECT_EQ(spec.on_resume, OnResume::model) << spec.name << ": a resumed run keeps its model";
      keys.insert(spec.key);
      if (j.contains(spec.key)) {  // (an option that is off is left out)
        written.insert(spec.key);
        EXPECT_EQ(j[spec.key], spec.recorded(o)) << spec.key;
      }
      EXPECT_EQ(model_option_text(spec, j.get<ModelConfig>()), model_option_text(spec, model)) << spec.key;
    }
    for (const auto& [key, value] : j.items()) EXPECT_TRUE(keys.count(key)) << key << " is no option's key";
  }
  written.insert({"src_vocab", "tgt_vocab"});
  EXPECT_EQ(written, keys) << "a model option's key that ModelConfig's JSON never writes";
}

TEST(TrainOptions, EveryModelOptionIsKeptOnResume) {
  for (const TrainOptionSpec& spec : train_option_specs()) {
    if (spec.on_resume != OnResume::model || !spec.recorded) continue;
    TrainOptions asked;
    asked.options_given = {spec.name};
    const ModelConfig run = model_option_text(spec, tied_model()) != model_option_text(spec, asked.model)
                                ? tied_model() : linear_model();
    ASSERT_NE(model_option_text(spec, run), model_option_text(spec, asked.model)) << spec.name;
    try {
      check_resumed_model(asked, run, "config.json");
      ADD_FAILURE() << "a resumed run took another --" << spec.name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("has --") + spec.name + " "), std::string::npos) << e.what();
    }
    asked.options_given.clear();  // not given: the run's model goes on
    EXPECT_NO_THROW(check_resumed_model(asked, run, "config.json"));
  }
}

TEST(TrainOptions, EveryVocabularyOptionIsKeptOnResume) {
  for (const bool subword_run : {false, true}) {
    test::TempDir dir;
    TrainOptionValues run_values = required_values();
    if (subword_run) run_values.set("subwords", 100);
    const TrainOptions run = read_train_options(run_values);
    ModelDefinition model;
    write_json_file(model_file(dir.path(""), model_files::kConfig),
                    model_config_json(tied_model(), run.tokenizer, training_json(run)));
    for (const TrainOptionSpec& spec : train_option_specs()) {
      const bool makes = spec.on_resume == OnResume::words_or_subwords ||
                         spec.on_resume == (subword_run ? OnResume::subwords : OnResume::words);
      if (spec.on_resume != OnResume::words && spec.on_resume != OnResume::subwords &&
          spec.on_resume != OnResume::words_or_subwords)
        continue;
      TrainOptionValues values = run_values;
      values.set(spec.name, another_value(spec));
      const TrainOptions asked = read_train_options(values);
      if (!makes) {  // made nothing in this kind of run
        EXPECT_NO_THROW(check_resumed_text(asked, model, dir.path(""))) << spec.name;
        continue;
      }
      try {
        check_resumed_text(asked, model, dir.path(""));
        ADD_FAILURE() << "a resumed run took another --" << spec.name;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(std::string("has --") + spec.name + " "), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace rnnsearch
