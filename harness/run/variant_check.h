// The harness's side of variant graphs (spec/variants.md, spec/results.md):
// which targets a case's session is created with, which entries the adapter
// must then select, and whether the choices it reports say it did.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case_reader.h"
#include "reference/core/status.h"
#include "reference/model/loader.h"
#include "reference/variants/variants.h"

namespace parity {

// The targets sent with a case's session options, preferred first:
// `command_line` (--variant-targets) when given, else case.json's
// "variant_targets", else `declared` (the adapter's capabilities).
StatusOr<std::vector<std::string>> VariantTargetsFor(const CaseInfo& info,
                                                     const std::optional<std::vector<std::string>>& command_line,
                                                     const std::vector<std::string>& declared);

// The entry ids an adapter sent `targets` must select in a model with
// entries. An empty list is "the adapter's own choice"
// (spec/abi/parity_adapter.h), which for the check is its `declared`
// targets; of these effective targets: case.json's "variants": {"select":
// {"<targets joined by ','>": [ids]}} when it has their key ("" for none),
// else the entries ResolveVariants selects for them. Errors: a pinned list
// that names an entry the model does not have, and a model the reference
// cannot resolve (its message names the rule). A malformed "variants" never
// gets here: ReadCaseMeta refuses it.
StatusOr<std::vector<std::string>> ExpectedSelection(const CaseInfo& info, const LoadedModel& model,
                                                     const std::vector<std::string>& targets,
                                                     const std::vector<std::string>& declared);

// The entries a session report's choices (the result's "variants", a list
// of {"entry", "chosen"}) select: those whose "chosen" is the entry's call,
// checked against the model's `entries` (spec/variants.md 4.3). An adapter
// that reports no choices selects nothing (it ran the main graph). A
// malformed report is an error whose message, prefixed "variant report: ",
// is the case's FAIL message: a choice that is not {"entry", "chosen"}
// strings, an entry id the model does not have, an entry reported twice, a
// "chosen" that is neither "main" nor the entry's call (empty included), and
// a report that names some entries but not all.
StatusOr<std::vector<std::string>> ReportedSelection(const nlohmann::json& variants,
                                                     const std::vector<VariantEntry>& entries);

// Empty when `selected` and `expected` hold the same entries (order and
// repeats aside); else the FAIL message "variant selection: targets [..]
// selected [..], expected [..]".
std::string SelectionMismatch(const std::vector<std::string>& targets, const std::vector<std::string>& selected,
                              const std::vector<std::string>& expected);

// "a,b" from {"a", "b"}: the key of case.json's "select" object.
std::string JoinTargets(const std::vector<std::string>& targets);

// Splits --variant-targets' value at commas; "" is the empty list.
std::vector<std::string> SplitTargets(const std::string& text);

}  // namespace parity
