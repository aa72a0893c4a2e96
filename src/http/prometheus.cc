#include "http/prometheus.h"

#include <cstdio>

namespace pagereel::http {

namespace {

// A label value as the format writes it: backslash, double quote and newline escaped.
void AppendEscaped(std::string_view value, std::string& out) {
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += " ";
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += " ";
  out_ += type;
  out_ += "\n";
}

void PrometheusText::Sample(std::string_view name, const Labels& labels, double value) {
  Write(name, labels, Number(value));
}

void PrometheusText::Histogram(std::string_view name, const Labels& labels,
                               std::span<const double> bounds, std::span<const int64_t> cumulative,
                               int64_t count, double sum) {
  const std::string bucket = std::string(name) + "_bucket";
  Labels with_bound = labels;
  with_bound.emplace_back("le", "");
  for (size_t i = 0; i < bounds.size(); ++i) {
    with_bound.back().second = Number(bounds[i]);
    Sample(bucket, with_bound, cumulative[i]);
  }
  with_bound.back().second = "+Inf";
  Sample(bucket, with_bound, count);
  Sample(std::string(name) + "_sum", labels, sum);
  Sample(std::string(name) + "_count", labels, count);
}

std::string PrometheusText::Number(double value) const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits_, value);
  return buf;
}

void PrometheusText::Write(std::string_view name, const Labels& labels, const std::string& value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += "{";
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ",";
      out_ += labels[i].first;
      out_ += "=\"";
      AppendEscaped(labels[i].second, out_);
      out_ += "\"";
    }
    out_ += "}";
  }
  out_ += " ";
  out_ += value;
  out_ += "\n";
}

}  // namespace pagereel::http
