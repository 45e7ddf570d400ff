// The malformed models, each built from a small valid model with one defect.
#include "reference/model/malformed_models.h"

#include <filesystem>
#include <fstream>

#include "onnx/onnx-ml.pb.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// y = Relu(x): the valid model every malformed one starts from.
onnx::ModelProto BaseModel() {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.set_producer_name("onnx-parity-malformed");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(21);
  auto* g = m.mutable_graph();
  g->set_name("malformed");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_name("relu");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& name, const std::string& op,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  auto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

// An initializer "w" of float[4] whose data lives in external file `location`.
void AddExternalWeight(onnx::ModelProto& m, const std::string& location) {
  auto* g = m.mutable_graph();
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value(location);
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("w");
}

Status WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? Status::Ok() : IoError("cannot write '", path.string(), "'");
}

}  // namespace

StatusOr<std::vector<MalformedModel>> WriteMalformedModels(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create '", dir, "': ", ec.message());
  std::vector<MalformedModel> list;
  auto emit = [&](const std::string& name, const std::string& description, const std::string& expect,
                  const std::string& bytes) -> Status {
    const fs::path folder = fs::path(dir) / name;
    fs::remove_all(folder, ec);
    fs::create_directories(folder, ec);
    if (ec) return IoError("cannot create '", folder.string(), "': ", ec.message());
    PARITY_RETURN_IF_ERROR(WriteBytes(folder / "model.onnx", bytes));
    list.push_back({name, description, expect});
    return Status::Ok();
  };
  const std::string valid = BaseModel().SerializeAsString();

  for (size_t cut : {valid.size() / 3, valid.size() / 2, valid.size() - 1}) {
    PARITY_RETURN_IF_ERROR(emit("truncated_" + std::to_string(cut), "the model's bytes cut short",
                                "malformed or truncated", valid.substr(0, cut)));
  }
  static const char kGarbage[] = "\xff\xff\xff\xff\x0f garbage \x00\x01";
  PARITY_RETURN_IF_ERROR(emit("garbage_bytes", "bytes that are no protobuf at all", "malformed or truncated",
                              std::string(kGarbage, sizeof(kGarbage) - 1)));
  {
    // Nesting deeper than protobuf's recursion limit: If inside If inside ...
    onnx::ModelProto m = BaseModel();
    onnx::GraphProto inner = m.graph();
    for (int i = 0; i < 120; ++i) {
      onnx::GraphProto outer;
      outer.set_name("level" + std::to_string(i));
      auto* n = AddNode(&outer, "if" + std::to_string(i), "If", {"x"}, {"y"});
      auto* a = n->add_attribute();
      a->set_name("then_branch");
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = inner;
      inner = outer;
    }
    *m.mutable_graph()->mutable_node(0)->add_attribute()->mutable_g() = inner;
    PARITY_RETURN_IF_ERROR(emit("deep_nesting", "subgraphs nested 120 levels deep", "malformed or truncated",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_input(0, "b");
    g->mutable_node(0)->set_output(0, "a");
    AddNode(g, "back", "Relu", {"a"}, {"b"});
    AddNode(g, "out", "Relu", {"a"}, {"y"});
    PARITY_RETURN_IF_ERROR(emit("cycle", "two nodes that feed each other", "cycle", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    PARITY_RETURN_IF_ERROR(emit("dangling_input", "a node reads a value nothing defines", "'nowhere'",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    AddNode(m.mutable_graph(), "again", "Relu", {"x"}, {"y"});
    PARITY_RETURN_IF_ERROR(emit("duplicate_output", "two nodes define the same value", "defined twice",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_output(0)->set_name("z");
    PARITY_RETURN_IF_ERROR(emit("output_never_computed", "a graph output no node computes", "never computed",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.clear_opset_import();
    PARITY_RETURN_IF_ERROR(emit("no_opset_import", "the model imports no opset", "opset", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_domain("com.example.missing");
    PARITY_RETURN_IF_ERROR(emit("missing_domain_import", "a node's domain is not imported", "not in opset_import",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_op_type("LeakyRelu");
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_i(3);  // declared FLOAT, stores an INT
    PARITY_RETURN_IF_ERROR(emit("attribute_type_mismatch", "an attribute declared FLOAT holding an INT",
                                "holds no value of that type", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_op_type("Flatten");
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::FLOAT);  // the schema says INT
    a->set_f(1.0f);
    PARITY_RETURN_IF_ERROR(emit("attribute_wrong_type_for_op", "Flatten's axis given as a FLOAT",
                                "is FLOAT but Flatten-21 declares it INT", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_op_type("Cast");  // without its required 'to'
    PARITY_RETURN_IF_ERROR(emit("missing_required_attribute", "a Cast without its required attribute 'to'",
                                "lacks attribute 'to'", m.SerializeAsString()));
  }
  {
    // f calls g, g calls f.
    onnx::ModelProto m = BaseModel();
    auto* opset = m.add_opset_import();
    opset->set_domain("local");
    opset->set_version(1);
    for (const auto& [name, callee] : {std::pair{"f", "g"}, std::pair{"g", "f"}}) {
      auto* f = m.add_functions();
      f->set_domain("local");
      f->set_name(name);
      f->add_input("a");
      f->add_output("b");
      auto* call = f->add_node();
      call->set_domain("local");
      call->set_op_type(callee);
      call->add_input("a");
      call->add_output("b");
      f->add_opset_import()->set_version(21);
    }
    m.mutable_graph()->mutable_node(0)->set_domain("local");
    m.mutable_graph()->mutable_node(0)->set_op_type("f");
    PARITY_RETURN_IF_ERROR(emit("recursive_functions", "two model-local functions that call each other",
                                "function call cycle", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    auto* w = m.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(1000000);
    w->add_dims(1000000);  // 10^12 elements, with no data at all
    m.mutable_graph()->mutable_node(0)->set_op_type("Add");
    m.mutable_graph()->mutable_node(0)->add_input("w");
    PARITY_RETURN_IF_ERROR(emit("huge_shape", "an initializer of 10^12 elements", "memory limit",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    auto* d = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < 4; ++i) d->add_dim()->set_dim_value(int64_t{1} << 20);
    PARITY_RETURN_IF_ERROR(emit("overflowing_shape", "a declared input shape whose element count overflows int64",
                                "overflows", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    auto* w = m.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_raw_data(std::string(7, '\0'));
    m.mutable_graph()->mutable_node(0)->set_op_type("Add");
    m.mutable_graph()->mutable_node(0)->add_input("w");
    PARITY_RETURN_IF_ERROR(emit("short_raw_data", "an initializer with fewer bytes than its shape needs",
                                "bytes of raw_data", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    AddExternalWeight(m, "../outside.bin");
    PARITY_RETURN_IF_ERROR(emit("external_dotdot", "external data whose location climbs out with '..'",
                                "contains '..'", m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    AddExternalWeight(m, "/etc/passwd");
    PARITY_RETURN_IF_ERROR(emit("external_absolute", "external data at an absolute path", "absolute path",
                                m.SerializeAsString()));
  }
  {
    onnx::ModelProto m = BaseModel();
    AddExternalWeight(m, "weights.bin");
    PARITY_RETURN_IF_ERROR(emit("external_symlink_out", "external data through a symbolic link leading out",
                                "outside the model's folder", m.SerializeAsString()));
    const fs::path folder = fs::path(dir) / "external_symlink_out";
    PARITY_RETURN_IF_ERROR(WriteBytes(fs::path(dir) / "outside_target.bin", std::string(16, '\0')));
    fs::create_symlink(fs::absolute(fs::path(dir) / "outside_target.bin"), folder / "weights.bin", ec);
    if (ec) return IoError("cannot create a symbolic link in '", folder.string(), "': ", ec.message());
  }
  {
    onnx::ModelProto m = BaseModel();
    AddExternalWeight(m, "weights.bin");
    auto* off = m.mutable_graph()->mutable_initializer(0)->add_external_data();
    off->set_key("offset");
    off->set_value("8");
    PARITY_RETURN_IF_ERROR(emit("external_out_of_range", "external data range past the end of its file",
                                "beyond the end", m.SerializeAsString()));
    PARITY_RETURN_IF_ERROR(WriteBytes(fs::path(dir) / "external_out_of_range" / "weights.bin", std::string(16, '\0')));
  }
  return list;
}

}  // namespace parity
