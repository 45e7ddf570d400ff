// Case discovery and test data reading.
#include "harness/case_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "reference/model/tensor_io.h"

namespace parity {
namespace fs = std::filesystem;

StatusOr<std::vector<CaseInfo>> DiscoverCases(const std::vector<std::string>& roots) {
  std::vector<CaseInfo> cases;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::exists(root, ec)) return NotFound("cases folder '", root, "' does not exist");
    auto add = [&](const fs::path& found) {
      // Absolute and normal, without a trailing separator, so that a case
      // has one name however its root was spelled (resume and merge match
      // results by it).
      fs::path dir = fs::absolute(found).lexically_normal();
      if (dir.filename().empty()) dir = dir.parent_path();
      CaseInfo info;
      info.dir = dir.string();
      info.name = dir.filename().string();
      info.suite = dir.parent_path().filename().string();
      cases.push_back(std::move(info));
    };
    if (fs::is_regular_file(fs::path(root) / "model.onnx", ec)) {
      add(fs::path(root));
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return IoError("walking '", root, "': ", ec.message());
      if (it->is_directory(ec) && fs::is_regular_file(it->path() / "model.onnx", ec)) {
        add(it->path());
        it.disable_recursion_pending();
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const CaseInfo& a, const CaseInfo& b) { return a.dir < b.dir; });
  // Roots that overlap ("corpus corpus/test_abs") find a case twice; it is
  // one case, run and counted once.
  cases.erase(std::unique(cases.begin(), cases.end(), [](const CaseInfo& a, const CaseInfo& b) { return a.dir == b.dir; }),
              cases.end());
  return cases;
}

Status ReadCaseMeta(CaseInfo& info) {
  const fs::path path = fs::path(info.dir) / "case.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    info.case_file = CaseFile{};
    return Status::Ok();
  }
  PARITY_ASSIGN_OR_RETURN(info.case_file, ReadCaseFile(path.string()));
  info.case_file.present = true;
  return Status::Ok();
}

bool IsStateful(const CaseInfo& info) { return info.case_file.steps.has_value(); }

StatusOr<std::vector<StateCarry>> ReadStepCarries(const CaseInfo& info, const onnx::GraphProto& graph) {
  std::vector<StateCarry> carries;
  if (!IsStateful(info)) return carries;
  const std::string where = StrCat("case '", info.name, "': case.json \"steps\"");
  auto index_of = [](const auto& values, const std::string& name) {
    for (int k = 0; k < values.size(); ++k) {
      if (values[k].name() == name) return k;
    }
    return -1;
  };
  const std::vector<CaseCarry>& listed = info.case_file.steps->carry;
  for (size_t i = 0; i < listed.size(); ++i) {
    const std::string at = StrCat(where, ".carry[", i, "]");
    StateCarry carry;
    carry.output = listed[i].output;
    carry.input = listed[i].input;
    carry.output_index = index_of(graph.output(), carry.output);
    carry.input_index = index_of(graph.input(), carry.input);
    if (carry.output_index < 0) return InvalidArgument(at, ": '", carry.output, "' is not an output of the graph");
    if (carry.input_index < 0) return InvalidArgument(at, ": '", carry.input, "' is not an input of the graph");
    for (const StateCarry& earlier : carries) {
      if (earlier.input == carry.input) {
        return InvalidArgument(at, ": input '", carry.input, "' is carried twice (from '", earlier.output, "' and '",
                               carry.output, "')");
      }
    }
    carries.push_back(std::move(carry));
  }
  return carries;
}

namespace {

// Empty when `a` and `b` hold the same value bit for bit, else what differs.
std::string BitDifference(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return "one is a tensor, sequence or optional and the other is not";
  if (a.is_sequence()) {
    if (a.sequence().size() != b.sequence().size()) {
      return StrCat("sequence lengths ", a.sequence().size(), " and ", b.sequence().size());
    }
    for (size_t i = 0; i < a.sequence().size(); ++i) {
      if (std::string d = BitDifference(a.sequence()[i], b.sequence()[i]); !d.empty()) {
        return StrCat("sequence element ", i, ": ", d);
      }
    }
    return "";
  }
  if (a.is_optional()) {
    if (a.has_element() != b.has_element()) return "one optional is empty and the other is not";
    return a.has_element() ? BitDifference(a.element(), b.element()) : "";
  }
  const Tensor& x = a.tensor();
  const Tensor& y = b.tensor();
  if (x.dtype() != y.dtype()) return StrCat("types ", DataTypeName(x.dtype()), " and ", DataTypeName(y.dtype()));
  if (x.shape() != y.shape()) return StrCat("shapes ", x.Description(), " and ", y.Description());
  if (x.dtype() == DataType::kString) {
    for (size_t i = 0; i < x.strings().size(); ++i) {
      if (x.strings()[i] != y.strings()[i]) return StrCat("first difference at element ", i);
    }
    return "";
  }
  const size_t width = std::max<size_t>(1, x.size() ? x.byte_size() / static_cast<size_t>(x.size()) : 1);
  const auto [xi, yi] = std::mismatch(x.raw_bytes(), x.raw_bytes() + x.byte_size(), y.raw_bytes());
  if (xi == x.raw_bytes() + x.byte_size()) return "";
  return StrCat("first difference at element ", static_cast<size_t>(xi - x.raw_bytes()) / width);
}

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing past U+10FFFF).
bool IsValidUtf8(const std::string& text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    int extra = 0;
    uint32_t code = 0, min = 0;
    if (c < 0x80) extra = 0, code = c;
    else if ((c & 0xE0) == 0xC0) extra = 1, code = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) extra = 2, code = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) extra = 3, code = c & 0x07, min = 0x10000;
    else return false;
    if (end - p <= extra) return false;  // cut short
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      code = code << 6 | (p[i] & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

// Whether a value read from a case file is what the graph declares there:
// its kind, element type, rank and fixed dimensions. A file that is not is
// the case's fault, whatever a backend would make of it. `at` prefixes
// nested positions ("element 2 of the sequence: ").
Status CheckDeclaredType(const Value& v, const onnx::TypeProto& type, const std::string& at) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      if (!v.is_tensor()) return InvalidArgument(at, "holds a sequence or optional where a tensor is declared");
      const Tensor& t = v.tensor();
      const auto& declared = type.tensor_type();
      if (declared.elem_type() != 0 && declared.elem_type() != static_cast<int32_t>(t.dtype())) {
        const std::string want = IsKnownDataType(declared.elem_type())
                                     ? std::string(DataTypeName(static_cast<DataType>(declared.elem_type())))
                                     : StrCat("unknown element type ", declared.elem_type());
        return InvalidArgument(at, "holds ", t.Description(), " where the graph declares ", want);
      }
      if (t.dtype() == DataType::kString) {
        // onnx.proto: each element of string_data is UTF-8.
        for (int64_t i = 0; i < t.size(); ++i) {
          if (!IsValidUtf8(t.strings()[static_cast<size_t>(i)])) {
            return InvalidArgument(at, "string element ", i, " is not UTF-8, which onnx.proto requires");
          }
        }
      }
      if (!declared.has_shape()) return Status::Ok();
      const auto& dims = declared.shape().dim();
      if (dims.size() != static_cast<int>(t.rank())) {
        return InvalidArgument(at, "holds ", t.Description(), " of rank ", t.rank(), " where the graph declares rank ",
                               dims.size());
      }
      for (int i = 0; i < dims.size(); ++i) {
        if (dims[i].has_dim_value() && dims[i].dim_value() != t.dim(i)) {
          return InvalidArgument(at, "holds ", t.Description(), " where the graph declares dimension ", i, " = ",
                                 dims[i].dim_value());
        }
      }
      return Status::Ok();
    }
    case onnx::TypeProto::kSequenceType: {
      if (!v.is_sequence()) return InvalidArgument(at, "holds a tensor or optional where a sequence is declared");
      if (!type.sequence_type().has_elem_type()) return Status::Ok();
      for (size_t i = 0; i < v.sequence().size(); ++i) {
        PARITY_RETURN_IF_ERROR(
            CheckDeclaredType(v.sequence()[i], type.sequence_type().elem_type(), StrCat(at, "sequence element ", i, ": ")));
      }
      return Status::Ok();
    }
    case onnx::TypeProto::kOptionalType: {
      if (!v.is_optional()) return InvalidArgument(at, "holds a tensor or sequence where an optional is declared");
      if (!v.has_element() || !type.optional_type().has_elem_type()) return Status::Ok();
      return CheckDeclaredType(v.element(), type.optional_type().elem_type(), StrCat(at, "optional's element: "));
    }
    default:
      return Status::Ok();
  }
}

std::string StepFile(const fs::path& dir, const std::string& file) {
  return (dir.filename() / file).string();
}

}  // namespace

StatusOr<std::vector<DataSet>> ReadDataSets(const CaseInfo& info, const onnx::ModelProto& model, bool read_inputs,
                                            bool outputs_required) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  // Error-code forms throughout: a symbolic link loop or an unreadable entry
  // in a case folder is the case's error, never an exception.
  for (auto it = fs::directory_iterator(info.dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    const std::string name = it->path().filename().string();
    if (name.rfind("test_data_set_", 0) != 0) continue;
    if (!it->is_directory(entry_ec)) {
      if (entry_ec) return IoError("'", it->path().string(), "': ", entry_ec.message());
      continue;
    }
    dirs.push_back(it->path());
  }
  if (ec) return IoError("reading '", info.dir, "': ", ec.message());
  // Numeric order: test_data_set_10 is step 10, after step 9.
  auto number = [](const fs::path& dir) {
    const std::string tail = dir.filename().string().substr(std::string("test_data_set_").size());
    return tail.find_first_not_of("0123456789") == std::string::npos && !tail.empty() && tail.size() < 10
               ? std::stol(tail)
               : -1L;
  };
  std::sort(dirs.begin(), dirs.end(), [&](const fs::path& a, const fs::path& b) {
    return std::make_pair(number(a), a.string()) < std::make_pair(number(b), b.string());
  });
  const auto& graph = model.graph();
  const bool stateful = IsStateful(info);
  PARITY_ASSIGN_OR_RETURN(const std::vector<StateCarry> carries, ReadStepCarries(info, graph));
  std::vector<bool> carried_input(static_cast<size_t>(graph.input_size()), false);
  std::vector<bool> carried_output(static_cast<size_t>(graph.output_size()), false);
  for (const StateCarry& c : carries) {
    carried_input[static_cast<size_t>(c.input_index)] = true;
    carried_output[static_cast<size_t>(c.output_index)] = true;
  }
  if (stateful) {
    for (size_t s = 0; s < dirs.size(); ++s) {
      if (number(dirs[s]) != static_cast<long>(s)) {
        return InvalidArgument("case '", info.name, "': its steps must be test_data_set_0, 1, 2... without gaps, but "
                               "step ", s, " is ", dirs[s].filename().string());
      }
    }
  }
  std::vector<DataSet> sets;
  for (size_t step = 0; step < dirs.size(); ++step) {
    const fs::path& dir = dirs[step];
    DataSet set;
    set.dir = dir.string();
    // A plain case stops at the first missing file; a stateful one looks at every index.
    auto read = [&](const char* kind, int count, const auto& values, bool read_values, const std::vector<bool>& carried,
                    bool gap_allowed_at_step, std::vector<Value>& out, std::vector<int>& index) -> Status {
      for (int k = 0;; ++k) {
        const fs::path file = dir / StrCat(kind, "_", k, ".pb");
        const bool exists = fs::exists(file, ec);
        if (k >= count) {
          if (exists) return InvalidArgument(file.string(), ": the model has only ", count, " ", kind, "s");
          return Status::Ok();
        }
        if (!exists) {
          if (!stateful) return Status::Ok();
          if (carried[static_cast<size_t>(k)] && gap_allowed_at_step) continue;
          // Outputs of a plain case may simply end; a stateful case names what it lacks.
          return InvalidArgument("case '", info.name, "': ", StepFile(dir, file.filename().string()), " (", kind, " '",
                                 values[k].name(), "') is missing; only a carried ",
                                 std::string(kind) == "input" ? "input's file may be left out, at steps >= 1"
                                                              : "output's expected file may be left out");
        }
        index.push_back(k);
        if (!read_values) continue;
        StatusOr<Value> v = ReadValueFile(file.string(), values[k].type());
        if (!v.ok()) return v.status();
        PARITY_RETURN_IF_ERROR(CheckDeclaredType(*v, values[k].type(), "")
                                   .WithContext(StrCat(StepFile(dir, file.filename().string()), " (", kind, " '",
                                                       values[k].name(), "')")));
        out.push_back(std::move(v).value());
      }
    };
    PARITY_RETURN_IF_ERROR(read("input", graph.input_size(), graph.input(), read_inputs, carried_input, step >= 1,
                                set.inputs, set.input_index));
    PARITY_RETURN_IF_ERROR(read("output", graph.output_size(), graph.output(), true, carried_output, true, set.outputs,
                                set.output_index));
    // Every output of a plain case is compared, so each needs its file:
    // one left out is the case's fault (ERROR), under eval and run alike.
    const bool none_yet = !outputs_required && set.output_index.empty();
    if (!stateful && !none_yet && static_cast<int>(set.output_index.size()) < graph.output_size()) {
      const int k = static_cast<int>(set.output_index.size());
      return InvalidArgument("case '", info.name, "': ", StepFile(dir, StrCat("output_", k, ".pb")), " (output '",
                             graph.output(k).name(), "') is missing: every output of the graph needs its expected file");
    }
    sets.push_back(std::move(set));
  }
  // Each carried input file must hold what the step before computed.
  for (size_t step = 1; step < sets.size(); ++step) {
    for (const StateCarry& c : carries) {
      const fs::path in_file = fs::path(sets[step].dir) / StrCat("input_", c.input_index, ".pb");
      const auto& previous = sets[step - 1].output_index;
      const auto at = std::find(previous.begin(), previous.end(), c.output_index);
      if (at == previous.end() || !fs::exists(in_file, ec)) continue;
      PARITY_ASSIGN_OR_RETURN(Value carried_in, ReadValueFile(in_file.string(), graph.input(c.input_index).type()));
      const Value& computed = sets[step - 1].outputs[static_cast<size_t>(at - previous.begin())];
      if (std::string d = BitDifference(carried_in, computed); !d.empty()) {
        return InvalidArgument("case is inconsistent: case '", info.name, "': ",
                               StepFile(in_file.parent_path(), in_file.filename().string()), " (input '", c.input,
                               "') differs from ",
                               StepFile(sets[step - 1].dir, StrCat("output_", c.output_index, ".pb")), " (output '",
                               c.output, "'), the value it carries into step ", step, ": ", d);
      }
    }
  }
  return sets;
}

std::string CaseOperator(const CaseInfo& info, const onnx::ModelProto& model) {
  if (info.case_file.operator_name) return *info.case_file.operator_name;
  const auto& nodes = model.graph().node();
  if (nodes.size() == 1) return nodes[0].op_type();
  // Expanded function cases and small composite models: the most frequent op
  // that is not plumbing (Constant, Cast, Shape, ...).
  static const char* kPlumbing[] = {"Constant", "Cast", "CastLike", "Shape", "Reshape", "Identity",
                                    "Unsqueeze", "Squeeze", "Concat", "Gather", "Slice", "Size"};
  std::map<std::string, int> counts;
  for (const auto& n : nodes) {
    if (std::find(std::begin(kPlumbing), std::end(kPlumbing), n.op_type()) == std::end(kPlumbing)) {
      ++counts[n.op_type()];
    }
  }
  std::string best = nodes.empty() ? "" : nodes[0].op_type();
  int best_count = 0;
  for (const auto& [op, c] : counts) {
    if (c > best_count) best = op, best_count = c;
  }
  return best;
}

}  // namespace parity
