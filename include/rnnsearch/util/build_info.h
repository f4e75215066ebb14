#pragma once
// What this build of rnnsearch contains: its version, and which optional libraries it was
// built with (CMakeLists.txt finds each one that is installed and says so in its summary line;
// docs/building.md, Optional libraries). `rnnsearch --version`, the Python module's `build_info()` and the tests
// that need a feature (they skip, naming it, when it is absent) read it here.
#include <string>

namespace rnnsearch {

struct BuildInfo {
  std::string version;      // CMakeLists.txt's project version, e.g. "0.1.0"
  std::string features;     // one line: what each optional feature uses, or why it is off
  bool sentencepiece = false;  // subword units: train --subwords, --tokenizer raw (text/subwords.h)
  bool http = false;        // rnnsearch serve (serve/http_server.h)
};

const BuildInfo& build_info();

}  // namespace rnnsearch
