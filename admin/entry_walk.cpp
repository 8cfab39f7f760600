#include "admin/entry_walk.hpp"

#include <string_view>
#include <unordered_set>

namespace dnsarena::admin {

std::uint64_t for_each_entry_once(cache::Cache& cache, std::uint32_t now, const WalkOptions& options,
                                  const std::function<void(cache::EntryReader&, bool hit)>& visit) {
  std::unordered_set<std::string> seen;
  std::uint64_t malformed = 0;
  cache.for_each_entry(
      [&](const cache::EntryCopy& copy, bool hit) {
        cache::EntryReader reader(copy.span());
        if (!reader.valid()) {
          ++malformed;
          return;
        }
        if (!options.include_expired && reader.expire() <= now) return;
        const auto blob = reader.key_blob();
        if (!seen.emplace(reinterpret_cast<const char*>(blob.data()), blob.size()).second) return;
        visit(reader, hit);
      },
      options.clear_hit_bits);
  return malformed;
}

}  // namespace dnsarena::admin
