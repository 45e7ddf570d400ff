// Input/output aliasing (spec/aliasing.md): annotations on the top-level
// graph saying which graph output may or must share the buffer of which
// graph input, the rules that make an annotation invalid, and the checks
// that sharing the buffers would not change any result.
//
// Representation: one GraphProto.metadata_props entry per aliased output,
//   key   "ai.onnx.alias.<output name>"
//   value "input=<input name>[;mode=may|must][;region=whole|scatter]"
// fields separated by ';', each "name=value", spaces around them ignored,
// defaults mode=may, region=whole. Annotations never change what a model
// computes: a backend that ignores them is correct.
//
// Every rule has an identifier (kAliasRule* below). A problem's message
// starts with it, then names the output and the offending value:
//   "ALIAS-TWICE: output 'present_v' aliases input 'past_k', which output 'present_k' already aliases"
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/core/value.h"
#include "reference/eval/evaluator.h"
#include "reference/model/alias_annotations.h"
#include "reference/model/loader.h"

namespace parity {

// --- Rules (spec/aliasing.md, "Validity"). ----------------------------------
// ALIAS-KEY (kAliasRuleKey) is the parser's, in reference/model/alias_annotations.h.
// ir_version < 10: GraphProto.metadata_props does not exist before IR 10
inline constexpr char kAliasRuleIr[] = "ALIAS-IR";
// the output is not a graph output, the input not a graph input; the input
// has an initializer (sharing would change the default of later runs); the
// output is not computed by a node of the graph (it is another input or an
// initializer), unless it is the aliased input itself
inline constexpr char kAliasRuleNames[] = "ALIAS-NAMES";
// two outputs alias one input
inline constexpr char kAliasRuleTwice[] = "ALIAS-TWICE";
// not both tensors; element types differ; ranks differ; a dimension both
// declare as a number differs
inline constexpr char kAliasRuleType[] = "ALIAS-TYPE";
// the aliased input is read (directly, or inside a subgraph a node holds) by
// a node that is not an ancestor of the output's writer, so some valid order
// reads it after the write; or the input is itself a graph output. Nodes
// that read only its shape (Shape, Size) are exempt.
inline constexpr char kAliasRuleReadAfterWrite[] = "ALIAS-READ-AFTER-WRITE";
// the annotation sits on a subgraph (If/Loop/Scan body) or a function body,
// or the output's writer holds subgraphs: the buffer would cross a
// control-flow boundary
inline constexpr char kAliasRuleControlFlow[] = "ALIAS-CONTROL-FLOW";
// region=scatter, and the output's writer is not a TensorScatter whose
// past_cache (input 0) is the aliased input
inline constexpr char kAliasRuleScatter[] = "ALIAS-SCATTER";

// Every rule above; each problem a kInvalidModel Status whose message starts
// with its rule id. Empty: every annotation is valid. Assumes the model
// passed ValidateModel (the IR rules).
std::vector<Status> ValidateAliases(const LoadedModel& model);

// The annotations of a model that passed ValidateAliases: ReadAliases of the
// main graph, or the first problem.
StatusOr<std::vector<Alias>> ValidAliases(const LoadedModel& model);

// --- Checking mode (spec/aliasing.md, "Checking"). --------------------------

struct AliasCheck {
  // One line per difference: "output 'y': sharing 'present_k' with 'past_k'
  // changed it (max abs error 3, first at index [0,1,2,0])". Empty: sharing
  // changes nothing for these inputs.
  std::vector<std::string> differences;
};

// Runs `model` on `inputs` twice: functionally, and in place with every
// annotation applied and each writer run as early as its own inputs allow
// (EvalOptions::writers_first, the order that exposes a read after the
// write), on deep copies of the inputs. Compares every output bit for bit.
// Does not call ValidateAliases: an invalid annotation is what it shows.
// Errors: the model cannot run, or an annotation names values it lacks.
// `options` give the registry and the limits of both runs (their in_place
// and writers_first are set here).
StatusOr<AliasCheck> CheckAliasSharing(const LoadedModel& model, const std::vector<Value>& inputs,
                                       const EvalOptions& options);

}  // namespace parity
