// SPDX-License-Identifier: GPL-3.0-or-later
// The seven cache-entry layouts of `dnsarena-lab sim layouts`, behind one small interface.
//
// Purpose: reproduce, step by step, the published fleet's five changes to a cache entry (see
// ../shared/SEED-NOTES.md) and set dnsarena's shared-memory entry beside them:
//
//   v0     the "before" shape: growable strings and vectors, one record per struct with
//          its own owner string and an rdata variant as large as a NAPTR  (layout_v0.hpp)
//   v1     change 1: fixed-size boxed slices instead of growable containers (layout_v1.hpp)
//   v2     change 2: one record list + two u16 section offsets, booleans in bit flags
//   v3     change 3: record owner elided when equal to the query name
//   v4     change 4: large rdata alternatives boxed, A and AAAA inline
//   v5     change 5: rdata as wire bytes, u16 length prefixes, one allocation per entry
//   arena  dnsarena: the real cache (cache/) in a private shared-memory segment
//
// Every layout holds the same entries under the same key (name, type, flags, tag) and
// answers the same queries with byte-identical DNS responses (heap layouts through
// heap_response_writer.hpp, which follows cache::write_response exactly). Heap layouts
// keep their entries in a std::unordered_map whose nodes and buckets, like every other
// allocation they make, go through the counting allocator (counting_allocator.hpp).
//
// Operations: insert() converts one generated answer into the layout's structures and
// stores it; lookup_response() finds a key and writes the response (0 size on a miss).
// memory() reports what the layout holds now. erase() (heap layouts) removes one key, as
// expiry or eviction would (churn_measure.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "cache/response_writer.hpp"

namespace dnsarena::sim::layouts {

// One entry to insert: the key fields and the answer (spans into the caller's data).
struct EntryInput {
  std::span<const std::uint8_t> qname;  // wire form, lowercase
  std::uint16_t qtype = 0;
  std::uint8_t flags = 0;               // cache::kKeyDo / kKeyCd / kKeyAuthenticated
  cache::EcsTag ecs;
  const cache::Answer* answer = nullptr;
};

// One lookup: the key fields (as the worker derives them from the query) and the query.
struct LookupInput {
  cache::QueryInfo query;               // query.qname: as the client wrote it (lowercase here)
  std::uint8_t flags = 0;
  cache::EcsTag ecs;
};

struct LayoutMemory {
  double net_bytes = 0;     // total bytes requested (or segment bytes in use for the arena)
  double alloc_bytes = 0;   // total bytes the allocator handed out
  double allocs = 0;        // live allocations
  std::uint64_t entries = 0;
};

class Layout {
public:
  virtual ~Layout() = default;
  virtual std::string name() const = 0;
  // Returns false when the entry could not be stored.
  virtual bool insert(const EntryInput& in, std::uint32_t now) = 0;
  virtual cache::ResponseResult lookup_response(const LookupInput& in, std::uint32_t now,
                                                const cache::ResponseOptions& options, std::uint8_t* out,
                                                std::size_t capacity) = 0;
  virtual LayoutMemory memory() const = 0;
  // Removes the entry stored under `in`'s key (its answer is not read); false when absent
  // or when the layout cannot erase one key (the arena: it reclaims by region).
  virtual bool erase(const EntryInput& in) {
    (void)in;
    return false;
  }
};

// The ECS part of a heap layout's key tag: family, prefix, then ceil(prefix/8) address
// bytes with the bits past the prefix cleared; empty when family is none. Returns the size.
std::size_t ecs_tag_bytes(const cache::EcsTag& ecs, std::uint8_t (&out)[18]);

// Factories. `expected_entries` sizes the arena's segment; heap layouts grow as they go.
std::unique_ptr<Layout> make_layout_v0();
std::unique_ptr<Layout> make_layout_v1();
std::unique_ptr<Layout> make_layout_v2();
std::unique_ptr<Layout> make_layout_v3();
std::unique_ptr<Layout> make_layout_v4();
std::unique_ptr<Layout> make_layout_v5();
// The arena needs its size up front: max_entries = expected_entries, arena bytes from
// `mean_padded_entry_bytes` (calibrated by the caller on a sample) plus margin.
std::unique_ptr<Layout> make_layout_arena(std::uint64_t expected_entries, double mean_padded_entry_bytes);

}  // namespace dnsarena::sim::layouts
