// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/zone_file_watch.hpp"

#include <sys/stat.h>

#include <utility>

namespace dnsarena::policy {

ZoneFileWatch::ZoneFileWatch(std::vector<std::string> files, std::uint64_t interval_ms)
    : files_(std::move(files)), interval_ms_(interval_ms) {
  mark_loaded();
}

ZoneFileWatch::Look ZoneFileWatch::look(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_dev, st.st_ino, st.st_size,
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

void ZoneFileWatch::mark_loaded() {
  loaded_.clear();
  for (const std::string& f : files_) loaded_.push_back(look(f));
  seen_ = loaded_;
}

std::uint64_t ZoneFileWatch::ms_until_check(std::uint64_t now_ms) const {
  return next_check_ms_ > now_ms ? next_check_ms_ - now_ms : 0;
}

std::string ZoneFileWatch::poll(std::uint64_t now_ms) {
  if (files_.empty() || now_ms < next_check_ms_) return "";
  next_check_ms_ = now_ms + interval_ms_;
  std::string settled;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const Look now = look(files_[i]);
    if (now != loaded_[i] && now == seen_[i] && settled.empty()) settled = files_[i];
    seen_[i] = now;
  }
  return settled;
}

}  // namespace dnsarena::policy
