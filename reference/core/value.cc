// Construction and description of Values.
#include "reference/core/value.h"

namespace parity {

Value Value::FromTensor(Tensor tensor) {
  Value v;
  v.kind_ = Kind::kTensor;
  v.tensor_ = std::move(tensor);
  return v;
}

Value Value::FromSequence(std::vector<Value> elements, DataType element_type) {
  Value v;
  v.kind_ = Kind::kSequence;
  if (element_type == DataType::kUndefined && !elements.empty() && elements[0].is_tensor()) {
    element_type = elements[0].tensor().dtype();
  }
  v.element_type_ = element_type;
  v.elements_ = std::make_shared<const std::vector<Value>>(std::move(elements));
  return v;
}

Value Value::NoneOptional() {
  Value v;
  v.kind_ = Kind::kOptional;
  return v;
}

Value Value::SomeOptional(Value element) {
  Value v;
  v.kind_ = Kind::kOptional;
  v.element_ = std::make_shared<const Value>(std::move(element));
  return v;
}

std::string Value::Description() const {
  switch (kind_) {
    case Kind::kTensor: return tensor_.Description();
    case Kind::kSequence: {
      std::string out = "seq(";
      out += DataTypeName(element_type_);
      out += ")[" + std::to_string(elements_->size()) + " elements]";
      return out;
    }
    case Kind::kOptional:
      return has_element() ? "optional(" + element_->Description() + ")" : "optional(none)";
  }
  return "?";
}

}  // namespace parity
