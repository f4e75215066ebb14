#include "call_arguments.h"

#include <sstream>

#include "rnnsearch/error.h"

namespace py = pybind11;

namespace rnnsearch::python {

std::vector<std::string> text_lines(const py::handle& items, const char* what) {
  if (py::isinstance<py::str>(items) || py::isinstance<py::bytes>(items))
    throw py::type_error(std::string(what) + " must be a list of strings, not a single string");
  std::vector<std::string> lines;
  for (py::handle item : items) {  // TypeError if not iterable
    if (PyBytes_Check(item.ptr())) {
      lines.emplace_back(PyBytes_AS_STRING(item.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(item.ptr())));
    } else if (PyUnicode_Check(item.ptr())) {
      const auto bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(item.ptr(), "utf-8", "surrogatepass"));
      if (!bytes) throw py::error_already_set();
      lines.emplace_back(PyBytes_AS_STRING(bytes.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())));
    } else {
      throw py::type_error(std::string(what) + "[" + std::to_string(lines.size()) + "] must be str or bytes, not " +
                           std::string(py::str(py::type::handle_of(item).attr("__name__"))));
    }
  }
  return lines;
}

std::pair<std::vector<std::string>, std::vector<std::string>> pair_lines(const py::object& sources,
                                                                         const py::object& targets) {
  std::vector<std::string> src_lines = text_lines(sources, "sources"), tgt_lines = text_lines(targets, "targets");
  if (src_lines.size() != tgt_lines.size())
    throw Error("sources and targets differ in length: " + std::to_string(src_lines.size()) + " and " +
                std::to_string(tgt_lines.size()) + " sentences");
  return {std::move(src_lines), std::move(tgt_lines)};
}

std::vector<std::string> model_dirs(const py::object& model) {
  const py::object fsdecode = py::module_::import("os").attr("fsdecode");
  if (py::isinstance<py::str>(model) || py::isinstance<py::bytes>(model) || py::hasattr(model, "__fspath__"))
    return {fsdecode(model).cast<std::string>()};
  std::vector<std::string> dirs;
  for (py::handle item : model) dirs.push_back(fsdecode(item).cast<std::string>());
  if (dirs.empty()) throw Error("no model directory given");
  return dirs;
}

DecodeOptions decode_keywords(const py::kwargs& keywords, DecodeUse use) {
  for (const auto& item : keywords) {
    const std::string name = py::str(item.first);
    const DecodeOptionSpec* spec = find_decode_option(name);
    if (!spec || !spec->takes(use) || name != spec->keyword())
      throw py::type_error("unexpected keyword argument '" + name + "'");
  }
  return given_decode_options(use, [&](const DecodeOptionSpec& spec) -> std::optional<double> {
    const std::string name = spec.keyword();
    if (!keywords.contains(name.c_str())) return std::nullopt;
    const py::object value = keywords[name.c_str()];
    if (value.is_none()) return std::nullopt;
    if (py::isinstance<py::bool_>(value) || !PyNumber_Check(value.ptr()))  // int, float, numpy's numbers
      throw py::type_error("'" + name + "' must be a number, not " + std::string(py::str(value.get_type().attr("__name__"))));
    return value.cast<double>();
  });
}

std::string decode_keywords_doc(const std::string& intro, DecodeUse use) {
  std::string doc = intro + "\n\nDecoding keywords (the command line's options of the same names):\n";
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.takes(use)) continue;
    std::ostringstream line;
    line << "  " << spec.keyword() << " (" << (spec.integer ? "int" : "float") << ", default ";
    if (spec.optional)
      line << "None: off";
    else
      line << spec.default_value(use);
    line << "): " << spec.help << "\n";
    doc += line.str();
  }
  return doc;
}

}  // namespace rnnsearch::python
