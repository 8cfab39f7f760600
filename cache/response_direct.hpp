// The common hit's response written in one walk over the entry bytes (the batched
// lookup's fast path, cache_batch_read.cpp).
//
// write_response() (response_writer.hpp) decodes each record into a RecordView, then
// writes it, keeping a name-compression table for owners and rdata names. Most hits need
// none of that: every owner is the qname (a 2-byte pointer to the question) and no rdata
// holds a compressible name (A, AAAA, TXT, ...). For those entries this walk decodes each
// record descriptor and writes the record at once, with the same bounds checks as
// EntryReader::next().
//
// It gives up (returns false, having possibly scribbled on `out`) on anything else: an
// owner other than the qname, a type whose rdata names write_response() compresses, a
// response that does not fit (TC handling), RFC 8482 single-RRset mode, or any malformed
// byte. The caller then runs write_response(), which rewrites the whole buffer. So every
// response is byte-identical to write_response()'s (tests/cache/response_direct_test.cpp
// compares them on 3,000 entries of the seed mix and on hand-made ones).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "response_writer.hpp"

namespace dnsarena::cache {

// `entry`: a whole entry (header, key, counts, records) whose key blob, of `key_length`
// bytes, was compared byte for byte with the lookup key.
// REQUIRES: `out` has `capacity` bytes.
bool write_response_direct(std::span<const std::uint8_t> entry, std::size_t key_length, const QueryInfo& query,
                           std::uint32_t now, const ResponseOptions& options, std::uint8_t* out, std::size_t capacity,
                           ResponseResult* result);

// The OPT record write_response() appends when options.edns: its size, and writing it
// at p (returns the size). Shared by both writers (response_writer.cpp).
std::size_t opt_record_size(const ResponseOptions& options);
std::size_t write_opt_record(const ResponseOptions& options, std::uint8_t* p);

}  // namespace dnsarena::cache
