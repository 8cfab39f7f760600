// SPDX-License-Identifier: GPL-3.0-or-later
// The C headers of libdnssec (DS digests, key tags, NSEC3 hashes, the bench's keys and
// signatures) and libzscanner (Knot's zone-file parser, for trust anchor files), which
// carry no extern "C" guards (libknot's are wrapped the same way in dns/knot_packet.hpp).
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" {
#include <libdnssec/binary.h>
#include <libdnssec/crypto.h>
#include <libdnssec/digest.h>
#include <libdnssec/error.h>
#include <libdnssec/key.h>
#include <libdnssec/keystore.h>
#include <libdnssec/keytag.h>
#include <libdnssec/nsec.h>
#include <libdnssec/sign.h>
#include <libzscanner/scanner.h>
}
