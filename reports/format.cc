// Escaping and number formatting for the report renderers.
#include "reports/format.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace parity {
namespace {

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one UTF-8 sequence at text[i]; returns its length, 0 when invalid
// (overlong forms, surrogates and values past U+10FFFF are invalid).
size_t DecodeUtf8(const std::string& text, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t length;
  uint32_t value;
  if (b < 0x80) {
    *cp = b;
    return 1;
  } else if ((b & 0xE0) == 0xC0) {
    length = 2, value = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    length = 3, value = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    length = 4, value = b & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *cp = value;
  return length;
}

}  // namespace

std::string SanitizeText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t length = DecodeUtf8(text, i, &cp);
    if (length == 0) {
      AppendCodePoint(0xFFFD, &out);
      ++i;
      continue;
    }
    i += length;
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF) {
      char visible[12];
      std::snprintf(visible, sizeof visible, cp < 0x100 ? "\\x%02X" : "\\u%04X", cp);
      out += visible;
    } else {
      AppendCodePoint(cp, &out);
    }
  }
  return out;
}

std::string XmlEscape(const std::string& text, bool attribute) {
  std::string out;
  for (char c : SanitizeText(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default: out += c;
    }
  }
  return out;
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : SanitizeText(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : SanitizeText(text)) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      default: out += c;
    }
  }
  // Leading or trailing spaces would be trimmed by the table anyway.
  const size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

std::string Truncate(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // Back up over UTF-8 continuation bytes so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Without leading zeros, the longer run is the larger number.
      const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
      const std::string tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i, ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  // "x01" and "x1" are the same number but not the same name: a map keyed
  // by names must keep both.
  return a < b;
}

std::string FormatPercent(int part, int total) {
  if (total <= 0) return "–";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * part / total);
  return text;
}

std::string FormatMs(double ms) {
  if (!std::isfinite(ms)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, std::fabs(ms) < 1000 ? "%.2f" : "%.0f", ms);
  return text;
}

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

std::string FormatError(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_number()) return "–";
  const double v = value.get<double>();
  char text[32];
  if (value.is_number_integer() || (v == std::floor(v) && std::fabs(v) < 1e15)) {
    std::snprintf(text, sizeof text, "%.0f", v);
  } else {
    std::snprintf(text, sizeof text, "%.3g", v);
  }
  return text;
}

ErrorSummary SummarizeErrors(const CaseResult& record) {
  ErrorSummary summary;
  // The largest value of one statistic over the outputs; "inf" wins.
  const auto largest = [&](const char* key) -> std::string {
    nlohmann::json best;
    for (const auto& output : record.outputs) {
      if (!output.is_object() || !output.contains(key)) continue;
      const auto& v = output[key];
      if (v.is_string()) return FormatError(v);
      if (v.is_number() && (best.is_null() || v.get<double>() > best.get<double>())) best = v;
    }
    return FormatError(best);
  };
  summary.max_abs = largest("max_abs_error");
  summary.max_rel = largest("max_rel_error");
  summary.max_ulp = largest("max_ulp_error");
  for (const auto& output : record.outputs) {
    if (!output.is_object()) continue;
    const auto text = output.find("first_mismatch");
    if (text == output.end() || !text->is_string() || text->get<std::string>().empty()) continue;
    const auto index = output.find("index");
    summary.first_mismatch = (index != output.end() && index->is_number_integer()
                                  ? "output " + std::to_string(index->get<int64_t>()) + " "
                                  : std::string()) +
                             text->get<std::string>();
    break;
  }
  return summary;
}

}  // namespace parity
