// The reports' "Placement" section: per run, the share of the top-level
// nodes and of their FLOPs that ran on the run's device rather than falling
// back (results' "placement" and "placement_flops", summed as summary.json's
// "placement" sums them), over all cases, per suite and per model.
#pragma once

#include <string>
#include <vector>

#include "harness/results/summary.h"
#include "reports/run_data.h"

namespace parity {

// The paragraph under the section's title, in both renderers.
inline constexpr const char* kPlacementIntro =
    "Share of the top-level nodes, and of their FLOPs, that ran on each run's device; the rest fell back "
    "(a device adapter's fallback runs on the reference's kernels). FLOPs are counted at each case's "
    "first data set's input dims, a multiply-add as two; a node whose FLOPs are not known (no rule for "
    "its operator, a dim not known, a node the adapter's report names but the model has not) is left out "
    "of the FLOP share and counted. Where the adapter counts its copies between the host and its device "
    "(ABI run_cost), the bytes each way over its runs follow.";

// One row: what it covers ("all cases", "suite onnx_node", "model
// vit_opset23") and one formatted cell per run, "–" where the run has no
// placement there.
struct PlacementRow {
  std::string scope;
  std::vector<std::string> cells;
};

// Rows over all cases, then per suite, then per case of kModelSuite, in
// natural order; empty when no run reported a placement.
std::vector<PlacementRow> BuildPlacementRows(const std::vector<RunData>& runs);

// "87.5% of 8 nodes · 93.7% of 766 FLOP · 2 nodes' FLOPs unknown · copied
// 1.5 KiB to the device and 512 B back": the cell of one scope (the FLOPs
// unknown only when some are; the copies only when some case counted them,
// with how many when not all did; the FLOP share "–" when no FLOPs are known).
std::string PlacementCell(const PlacementTotals& totals);

// A count of FLOPs with an SI prefix and three significant digits:
// "766", "2.11 M", "1.34 G".
std::string FormatFlops(double flops);

}  // namespace parity
