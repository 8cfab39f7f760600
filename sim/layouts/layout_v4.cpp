// SPDX-License-Identifier: GPL-3.0-or-later
#include "layout_v4.hpp"

#include <type_traits>

#include "heap_layout.hpp"
#include "single_list_entry.hpp"

namespace dnsarena::sim::layouts {
namespace v4 {

namespace {
// A and AAAA stay inline; everything else is boxed.
struct BoxLarge {
  template <class Alt>
  RData operator()(Alt&& alt) const {
    using T = std::decay_t<Alt>;
    if constexpr (std::is_same_v<T, Model::A> || std::is_same_v<T, Model::Aaaa>) return RData(std::move(alt));
    else return RData(make_box<T>(std::move(alt)));
  }
};
}  // namespace

Entry Traits::make_value(const EntryInput& in, std::uint32_t now) {
  return make_single_list_entry<Model, Entry>(in, now, OwnerStorage::elide_qname, BoxLarge{});
}

cache::ResponseResult Traits::respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w) {
  return respond_single_list<Model>(key.name.span(), e, now, OwnerStorage::elide_qname, w);
}

}  // namespace v4

std::unique_ptr<Layout> make_layout_v4() { return make_heap_layout<v4::Traits>(); }

}  // namespace dnsarena::sim::layouts
