// What the attention family's oneDNN lowerings (attention.cc,
// tensor_scatter.cc, rotary_embedding.cc) share: strided views of host
// buffers and a cache of the reorder primitives that copy between them.
// Views are oneDNN memory objects over a tensor's own bytes at an element
// offset, with explicit strides, so that a head, a batch entry or a range
// of cache rows is read or written where it lies, without a copy.
#pragma once

#include <map>
#include <vector>

#include "adapters/device/lowering.h"
#include "adapters/onednn/onednn_context.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

StatusOr<std::unique_ptr<LoweredNode>> LowerTensorScatter(const NodeView& view);  // tensor_scatter.cc
StatusOr<std::unique_ptr<LoweredNode>> LowerRotaryEmbedding(const NodeView& view);  // rotary_embedding.cc

// A memory object over `base` + `offset` elements of `desc`'s type. The
// caller keeps the buffer alive while the memory is used.
inline dnnl::memory ViewAt(const dnnl::memory::desc& desc, const void* base, int64_t offset) {
  const size_t width = dnnl::memory::data_type_size(desc.get_data_type());
  // oneDNN's handle is not const; a view of an input is only read.
  auto* bytes = const_cast<uint8_t*>(static_cast<const uint8_t*>(base));
  return dnnl::memory(desc, Engine(), bytes + static_cast<size_t>(offset) * width);
}

// The key of a descriptor in a plan cache: its type, dims and strides.
inline void AppendKey(const dnnl::memory::desc& desc, std::vector<int64_t>& key) {
  key.push_back(static_cast<int64_t>(desc.get_data_type()));
  const dnnl::memory::dims dims = desc.get_dims(), strides = desc.get_strides();
  key.push_back(static_cast<int64_t>(dims.size()));
  key.insert(key.end(), dims.begin(), dims.end());
  key.insert(key.end(), strides.begin(), strides.end());
}

// Reorder primitives by (source, destination) descriptor, made on first
// use and kept for the node's later runs: a decode step meets the same
// shapes again and pays no primitive creation.
class ReorderCache {
 public:
  const dnnl::reorder& Get(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
    std::vector<int64_t> key;
    AppendKey(from, key);
    AppendKey(to, key);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_.emplace(key, dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to))).first;
      Counts().at_run += 1;
    }
    return it->second;
  }
  // Copies (converting the type, rounding to nearest even) `from` into `to`.
  void Run(dnnl::memory from, dnnl::memory to) { Get(from.get_desc(), to.get_desc()).execute(Stream(), from, to); }

 private:
  std::map<std::vector<int64_t>, dnnl::reorder> cache_;
};

}  // namespace parity::adapters::onednn
