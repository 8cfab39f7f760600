// SPDX-License-Identifier: GPL-3.0-or-later
#include "layout_v2.hpp"

#include "heap_layout.hpp"
#include "single_list_entry.hpp"

namespace dnsarena::sim::layouts {
namespace v2 {

Entry Traits::make_value(const EntryInput& in, std::uint32_t now) {
  return make_single_list_entry<Model, Entry>(in, now, OwnerStorage::always, [](auto&& alt) { return RData(std::move(alt)); });
}

cache::ResponseResult Traits::respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w) {
  return respond_single_list<Model>(key.name.span(), e, now, OwnerStorage::always, w);
}

}  // namespace v2

std::unique_ptr<Layout> make_layout_v2() { return make_heap_layout<v2::Traits>(); }

}  // namespace dnsarena::sim::layouts
