// Prints the metric catalog (metrics/catalog.h) as JSON, for the tests written in Python that
// hold /metrics of a running operator, the chart's dashboard and its alerts to it.
#include <iostream>

#include "metrics/catalog.h"

int main() {
  std::cout << ncclop::metrics::CatalogJson();
  return 0;
}
