// One command-line flag, declared once as a row of its program's table (cli/program.h): its
// name, the field it sets, what it takes, its help. The field's value before parsing is the
// default that --help and the docs show, so the default is written once too, in the field's
// initialiser.
//
//   cli::IntInRange("concurrency", &flags->concurrency, 1, 64, "jobs reconciled in parallel"),
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cli {

struct Flag {
  std::string name;         // --name on the command line
  std::string placeholder;  // the value in --name=PLACEHOLDER; empty for a switch
  std::string help;         // what it does
  std::string takes;        // what a value must be ("a number from 1 to 64"), for errors
  bool takes_in_help = false;  // the help and the docs say `takes` too (ranges, choices)
  std::string default_shown;   // the field before parsing, as one would type it; "" = none
  bool default_is_literal = true;  // false: default_shown says where the value comes from
  bool is_switch = false;          // --name alone means --name=true
  std::function<bool(const std::string& value)> set;  // false: the value is refused, field untouched

  // For a field whose empty default means "decided elsewhere": says where, in help and docs.
  Flag DefaultIs(std::string description) &&;
  // Refuses a value `valid` rejects; `takes` says what it must be instead.
  Flag Check(std::string takes, std::function<bool(const std::string&)> valid) &&;
};

// Any text, the empty string included.
Flag Text(std::string name, std::string* field, std::string placeholder, std::string help);

// A switch: --name, --name=true or --name=false.
Flag Switch(std::string name, bool* field, std::string help);

// A whole number from min to max.
Flag IntInRange(std::string name, int* field, int min, int max, std::string help);

// One of `choices` exactly ("" among them: the empty value is allowed).
Flag OneOf(std::string name, std::string* field, std::string placeholder, std::vector<std::string> choices,
           std::string help);

// "a, b or c", with "" written as "empty": how errors and help list choices.
std::string ListChoices(const std::vector<std::string>& choices);

namespace internal {
Flag Basic(std::string name, std::string placeholder, std::string help, std::string takes, std::string default_shown);
}  // namespace internal

// A value of any type: `parse` turns the text into one (nullopt: refused), `show` the default back into text.
template <class T>
Flag Parsed(std::string name, T* field, std::string placeholder, std::string takes,
            std::function<std::optional<T>(const std::string&)> parse, std::function<std::string(const T&)> show,
            std::string help) {
  Flag flag = internal::Basic(std::move(name), std::move(placeholder), std::move(help), std::move(takes), show(*field));
  flag.set = [field, parse = std::move(parse)](const std::string& value) {
    std::optional<T> parsed = parse(value);
    if (parsed) *field = std::move(*parsed);
    return parsed.has_value();
  };
  return flag;
}

// One of a few names read by `parse` (which may accept more spellings than it lists, as
// logging::ParseLevel does "warning"); the default shown is the name that parses to the field.
template <class T>
Flag Choice(std::string name, T* field, std::string placeholder, std::vector<std::string> names,
            bool (*parse)(std::string_view, T*), std::string help) {
  std::string shown;
  for (const std::string& candidate : names) {
    T value{};
    if (parse(candidate, &value) && value == *field) shown = candidate;
  }
  Flag flag = internal::Basic(std::move(name), std::move(placeholder), std::move(help), ListChoices(names),
                              std::move(shown));
  flag.takes_in_help = true;
  flag.set = [field, parse](const std::string& value) { return parse(value, field); };
  return flag;
}

}  // namespace cli
