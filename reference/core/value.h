// Value: what flows along a graph edge — a tensor, a sequence of values, or
// an optional that holds a value or nothing (ONNX TypeProto's tensor_type,
// sequence_type and optional_type; maps are not supported).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reference/core/tensor.h"

namespace parity {

class Value {
 public:
  enum class Kind { kTensor, kSequence, kOptional };

  Value() = default;  // an undefined tensor
  static Value FromTensor(Tensor tensor);
  // `element_type` is the element type of the sequence's tensors, kept so an
  // empty sequence still knows it (kUndefined when unknown).
  static Value FromSequence(std::vector<Value> elements, DataType element_type = DataType::kUndefined);
  static Value NoneOptional();
  static Value SomeOptional(Value element);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_optional() const { return kind_ == Kind::kOptional; }

  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  const std::vector<Value>& sequence() const { return *elements_; }
  DataType sequence_element_type() const { return element_type_; }
  bool has_element() const { return element_ != nullptr; }
  const Value& element() const { return *element_; }

  // "float32[2,3]", "seq(float32[2])[3 elements]", "optional(none)"
  std::string Description() const;

 private:
  Kind kind_ = Kind::kTensor;
  Tensor tensor_;
  std::shared_ptr<const std::vector<Value>> elements_;
  DataType element_type_ = DataType::kUndefined;
  std::shared_ptr<const Value> element_;
};

}  // namespace parity
