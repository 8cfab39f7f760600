// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/log_setup.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace dnsarena::workers {

namespace {

// "%*": the syslog priority prefix of the message's level (sd-daemon.h's SD_ERR...).
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPrefix[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", ""};
    const auto level = static_cast<std::size_t>(msg.level);
    const char* p = level < std::size(kPrefix) ? kPrefix[level] : "";
    dest.append(p, p + std::strlen(p));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPriorityFlag>(); }
};

}  // namespace

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st{};
  return ::fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void configure_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("dnsarena");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
  if (stderr_is_journal()) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*[pid %P] %v");
    spdlog::set_formatter(std::move(formatter));
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e [%l] [pid %P] %v");
  }
}

}  // namespace dnsarena::workers
