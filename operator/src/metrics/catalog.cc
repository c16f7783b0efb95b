#include "metrics/catalog.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace ncclop::metrics {

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string_view ConventionName(Convention c) {
  switch (c) {
    case Convention::kOperator:
      return "nccl-operator";
    case Convention::kControllerRuntime:
      return "controller-runtime";
    case Convention::kProcess:
      return "process";
  }
  return "";
}

std::string Header(const Family& family) {
  const std::string name(family.name);
  return "# HELP " + name + " " + std::string(family.help) + "\n# TYPE " + name + " " +
         std::string(TypeName(family.type)) + "\n";
}

namespace {

std::vector<std::string> Labels(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

}  // namespace

std::string MarkdownTable() {
  std::string out = "| metric | type | labels | as in | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const Family& f : kCatalog) {
    std::string labels;
    for (const std::string& label : Labels(f.labels)) labels += (labels.empty() ? "`" : ", `") + label + "`";
    std::string help;  // Markdown: a | would end the cell, a <...> would be read as HTML
    for (char c : f.help) {
      if (c == '|') {
        help += "\\|";
      } else if (c == '<') {
        help += "&lt;";
      } else if (c == '>') {
        help += "&gt;";
      } else {
        help += c;
      }
    }
    out += "| `" + std::string(f.name) + "` | " + std::string(TypeName(f.type)) + " | " + labels + " | " +
           std::string(ConventionName(f.convention)) + " | " + help + " |\n";
  }
  return out;
}

std::string CatalogJson() {
  nlohmann::json out = nlohmann::json::array();
  for (const Family& f : kCatalog) {
    out.push_back({{"name", f.name},
                   {"type", TypeName(f.type)},
                   {"labels", Labels(f.labels)},
                   {"convention", ConventionName(f.convention)}});
  }
  return out.dump(1) + "\n";
}

}  // namespace ncclop::metrics
