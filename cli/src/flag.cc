#include "cli/flag.h"

#include <algorithm>
#include <charconv>

namespace cli {

Flag internal::Basic(std::string name, std::string placeholder, std::string help, std::string takes,
                     std::string default_shown) {
  Flag flag;
  flag.name = std::move(name);
  flag.placeholder = std::move(placeholder);
  flag.help = std::move(help);
  flag.takes = std::move(takes);
  flag.default_shown = std::move(default_shown);
  return flag;
}

Flag Flag::DefaultIs(std::string description) && {
  default_shown = std::move(description);
  default_is_literal = false;
  return std::move(*this);
}

Flag Flag::Check(std::string what, std::function<bool(const std::string&)> valid) && {
  takes = std::move(what);
  set = [valid = std::move(valid), store = std::move(set)](const std::string& value) {
    return valid(value) && store(value);
  };
  return std::move(*this);
}

Flag Text(std::string name, std::string* field, std::string placeholder, std::string help) {
  Flag flag = internal::Basic(std::move(name), placeholder, std::move(help), placeholder, *field);
  flag.set = [field](const std::string& value) {
    *field = value;
    return true;
  };
  return flag;
}

Flag Switch(std::string name, bool* field, std::string help) {
  Flag flag = internal::Basic(std::move(name), "", std::move(help), "true or false", *field ? "true" : "false");
  flag.is_switch = true;
  flag.set = [field](const std::string& value) {
    if (value != "true" && value != "false") return false;
    *field = value == "true";
    return true;
  };
  return flag;
}

Flag IntInRange(std::string name, int* field, int min, int max, std::string help) {
  Flag flag = internal::Basic(std::move(name), "N", std::move(help),
                              "a number from " + std::to_string(min) + " to " + std::to_string(max),
                              std::to_string(*field));
  flag.takes_in_help = true;
  flag.set = [field, min, max](const std::string& value) {
    int n = 0;
    const char* end = value.data() + value.size();
    auto [stop, ec] = std::from_chars(value.data(), end, n);
    if (value.empty() || ec != std::errc() || stop != end || n < min || n > max) return false;
    *field = n;
    return true;
  };
  return flag;
}

std::string ListChoices(const std::vector<std::string>& choices) {
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) list += i + 1 == choices.size() ? " or " : ", ";
    list += choices[i].empty() ? "empty" : choices[i];
  }
  return list;
}

Flag OneOf(std::string name, std::string* field, std::string placeholder, std::vector<std::string> choices,
           std::string help) {
  Flag flag = internal::Basic(std::move(name), std::move(placeholder), std::move(help), ListChoices(choices), *field);
  flag.takes_in_help = true;
  flag.set = [field, choices = std::move(choices)](const std::string& value) {
    if (std::find(choices.begin(), choices.end(), value) == choices.end()) return false;
    *field = value;
    return true;
  };
  return flag;
}

}  // namespace cli
