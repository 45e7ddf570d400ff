// Escaping and number formatting shared by the JUnit, Markdown and HTML
// renderers. Every string that comes from a run (case names, messages,
// adapter names) passes through one of the escapers here.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/run_data.h"

namespace parity {

// Valid UTF-8 holding only characters XML 1.0 allows: invalid byte
// sequences become U+FFFD, control characters other than tab, newline and
// carriage return become the visible text "\xNN".
std::string SanitizeText(const std::string& text);

// Text for XML element content or a double-quoted attribute: & < > " '
// escaped; in an attribute, tab and line breaks are kept as character
// references because parsers turn raw ones into spaces.
std::string XmlEscape(const std::string& text, bool attribute = false);

// Text for HTML element content or a quoted attribute value.
std::string HtmlEscape(const std::string& text);

// One cell of a Markdown table: pipes escaped, line breaks as spaces, and
// < > & as entities so that no HTML from a run reaches the renderer.
std::string MarkdownCell(const std::string& text);

// At most `max_bytes` bytes of `text`, cut at a character boundary, with
// "…" added when something was cut.
std::string Truncate(const std::string& text, size_t max_bytes);

// Natural order for names: "case_9" before "case_10"; runs of digits compare
// as numbers, everything else byte by byte; names equal as numbers ("x01",
// "x1") are ordered byte by byte, so only equal strings are equivalent.
bool NaturalLess(const std::string& a, const std::string& b);

// "97.3%"; "–" when `total` is 0.
std::string FormatPercent(int part, int total);
// Milliseconds with two decimals below 1000 ms, whole above: "3.14", "2417".
std::string FormatMs(double ms);
// Bytes in the largest unit that keeps the figure at or above 1 ("512 B",
// "1.5 KiB", "64.0 MiB").
std::string FormatBytes(double bytes);
// An error statistic of spec/results.md: a number, "inf", or null ("–").
std::string FormatError(const nlohmann::json& value);

// The largest absolute, relative and ULP errors over a case's outputs,
// formatted ("–" where no output reports one).
struct ErrorSummary {
  std::string max_abs = "–";
  std::string max_rel = "–";
  std::string max_ulp = "–";
  std::string first_mismatch;  // of the first mismatching output, with its index
};
ErrorSummary SummarizeErrors(const CaseResult& record);

}  // namespace parity
