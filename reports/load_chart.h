// Inline SVG charts of session creation ("load") times for report.html.
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// Per run: bars of the cold median and of the median of the warm medians,
// on a linear axis in ms. Empty when no run measured a load time.
std::string LoadBarsSvg(const std::vector<RunData>& runs);

// Per run: every case's cold load time, sorted, as a line over the share of
// cases (0–100 %) on a logarithmic axis in ms. Empty when no run measured one.
std::string LoadCurveSvg(const std::vector<RunData>& runs);

// The colour that the charts give run `index`.
std::string RunColour(size_t index);

// A step of 1, 2 or 5 times a power of ten that splits [0, max] into about
// five intervals (max > 0), and the label of a tick at `v` ("%g").
double NiceStep(double max);
std::string TickLabel(double v);

}  // namespace parity
