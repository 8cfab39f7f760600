// SPDX-License-Identifier: GPL-3.0-or-later
// HeapLayout<Traits>: the part every heap layout (v0..v5) shares: the hash map, the
// counter scope, insert-or-replace, find, erase, expiry and the response writer. A layout file
// supplies Traits:
//
//   static constexpr const char* kName;
//   using Key;    // GrowableKey or BoxedKey
//   using Value;  // the entry
//   static Value make_value(const EntryInput&, std::uint32_t now);  // convert an answer
//   static bool expired(const Value&, std::uint32_t now);
//   static cache::ResponseResult respond(const Key&, Value&, std::uint32_t now, HeapResponseWriter&);
#pragma once
#include <memory>

#include "heap_keys.hpp"
#include "heap_map.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"

namespace dnsarena::sim::layouts {

template <class Traits>
class HeapLayout final : public Layout {
public:
  using Key = typename Traits::Key;
  using Value = typename Traits::Value;

  ~HeapLayout() override {
    CounterScope scope(&counter_);
    Map().swap(map_);  // frees nodes and buckets while they are still counted
  }
  std::string name() const override { return Traits::kName; }

  bool insert(const EntryInput& in, std::uint32_t now) override {
    CounterScope scope(&counter_);
    std::uint8_t tag[18];
    const KeyView kv{in.qname, in.qtype, in.flags, {tag, ecs_tag_bytes(in.ecs, tag)}};
    map_.insert_or_assign(Key::from(kv), Traits::make_value(in, now));
    return true;
  }

  cache::ResponseResult lookup_response(const LookupInput& in, std::uint32_t now, const cache::ResponseOptions& options,
                                        std::uint8_t* out, std::size_t capacity) override {
    std::uint8_t tag[18];
    const KeyView kv{in.query.qname, in.query.qtype, in.flags, {tag, ecs_tag_bytes(in.ecs, tag)}};
    auto it = map_.find(kv);
    if (it == map_.end() || Traits::expired(it->second, now)) return {};
    HeapResponseWriter w(in.query, options, out, capacity);
    return Traits::respond(it->first, it->second, now, w);
  }

  bool erase(const EntryInput& in) override {
    CounterScope scope(&counter_);
    std::uint8_t tag[18];
    const KeyView kv{in.qname, in.qtype, in.flags, {tag, ecs_tag_bytes(in.ecs, tag)}};
    auto it = map_.find(kv);
    if (it == map_.end()) return false;
    map_.erase(it);
    return true;
  }

  LayoutMemory memory() const override {
    const AllocTotals t = counter_.totals();
    return {static_cast<double>(t.net_bytes), static_cast<double>(t.alloc_bytes), static_cast<double>(t.allocs),
            map_.size()};
  }

private:
  using Map = HeapMap<Key, Value>;
  AllocCounter counter_;
  Map map_;
};

template <class Traits>
std::unique_ptr<Layout> make_heap_layout() {
  return std::make_unique<HeapLayout<Traits>>();
}

}  // namespace dnsarena::sim::layouts
