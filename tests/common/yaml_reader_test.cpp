// SPDX-License-Identifier: GPL-3.0-or-later
// common/yaml_reader: typed values, and errors that name file, line, column and key.
#include <catch2/catch.hpp>
#include <string>

#include "common/yaml_reader.hpp"

using namespace dnsarena::common;

namespace {

std::string error_of(const std::string& yaml, void (*read)(MapReader&)) {
  try {
    MapReader r("t.yaml", parse_yaml_text(yaml, "t.yaml"), "");
    read(r);
    r.finish();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

void read_n(MapReader& r) { r.integer_or("n", 1, 1, 10); }
void read_x(MapReader& r) { r.number("x", 0, 1); }

}  // namespace

TEST_CASE("MapReader: values, defaults, nested maps", "[common][yaml]") {
  MapReader r("t.yaml", parse_yaml_text("n: 3\nx: 0.5\nname: a\nsub:\n  on: true\n", "t.yaml"), "");
  CHECK(r.integer("n", 0, 10) == 3);
  CHECK(r.number("x", 0, 1) == 0.5);
  CHECK(r.text("name") == "a");
  CHECK(r.integer_or("missing", 42, 0, 100) == 42);
  MapReader sub = r.map("sub");
  CHECK(sub.boolean_or("on", false));
  sub.finish();
  r.finish();
}

TEST_CASE("MapReader: every error names file:line:column and key", "[common][yaml]") {
  CHECK_THAT(error_of("n: 11\n", read_n), Catch::Contains("t.yaml:1:4: key 'n': out of range: must be in [1, 10], got 11"));
  CHECK_THAT(error_of("n: many\n", read_n), Catch::Contains("t.yaml:1:4: key 'n': expected a non-negative integer, got 'many'"));
  CHECK_THAT(error_of("n: 1.5\n", read_n), Catch::Contains("expected a non-negative integer, got '1.5'"));
  CHECK_THAT(error_of("x: [1]\n", read_x), Catch::Contains("key 'x': expected a scalar number"));
  CHECK_THAT(error_of("y: 1\n", read_x), Catch::Contains("key 'x': missing required key"));
  CHECK_THAT(error_of("n: 2\nm: 1\n", read_n), Catch::Contains("t.yaml:2:1: key 'm': unknown key (known: n)"));
  CHECK_THAT(error_of("n: 2\nn: 3\n", read_n), Catch::Contains("t.yaml:2:1: key 'n': duplicate key"));
  CHECK_THAT(error_of("- 1\n", read_n), Catch::Contains("expected a mapping"));
  CHECK_THROWS_WITH(parse_yaml_text("a: [1\n", "t.yaml"), Catch::Contains("t.yaml:") && Catch::Contains("YAML syntax error"));
  CHECK_THROWS_WITH(load_yaml_file("/nonexistent/t.yaml"), Catch::Contains("/nonexistent/t.yaml: cannot open"));
}

// Found by fuzz_yaml_config: a fleet datacenter `from: .` (a directory) made
// load_yaml_file throw std::ios_base::failure out of yaml-cpp's read, not a ConfigError.
TEST_CASE("load_yaml_file: a directory or unreadable path is a ConfigError naming it", "[common][yaml]") {
  std::string what;
  try {
    load_yaml_file("/tmp");
  } catch (const ConfigError& e) {
    what = e.what();
  } catch (const std::exception& e) {
    FAIL("not a ConfigError: " << e.what());
  }
  INFO(what);
  CHECK(what.find("/tmp") == 0);
  CHECK(what.find("not a regular file") != std::string::npos);
}
