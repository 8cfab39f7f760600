// SPDX-License-Identifier: GPL-3.0-or-later
// The error every config reader throws: a message "FILE:LINE:COLUMN: key 'K': what"
// (common/yaml_reader.hpp writes them). Apart from the reader so that a header which only
// names the error (a config's type, its load function) does not pull in yaml-cpp.
#pragma once
#include <stdexcept>

namespace dnsarena::common {

class ConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

}  // namespace dnsarena::common
