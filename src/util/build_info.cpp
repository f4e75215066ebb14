#include "rnnsearch/util/build_info.h"

#include "rnnsearch_build_info.h"  // made by CMakeLists.txt from cmake/build_info.h.in

namespace rnnsearch {

const BuildInfo& build_info() {
  static const BuildInfo info{RNNSEARCH_VERSION, RNNSEARCH_FEATURES, RNNSEARCH_WITH_SENTENCEPIECE != 0,
                              RNNSEARCH_WITH_HTTP != 0};
  return info;
}

}  // namespace rnnsearch
