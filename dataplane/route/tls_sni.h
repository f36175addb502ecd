/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TLS_SNI_H
#define LB_TLS_SNI_H

/**
 * @file
 * The server name (SNI, RFC 6066 3) of a TLS ClientHello, read from the
 * first bytes a client sends, without decrypting anything, for routing a
 * connection by the name it asks for.
 *
 * The caller keeps the prefix of the client's stream as it arrives (at
 * most a bounded number of bytes, LB_TLS_PREFIX_MAX is enough for any
 * ClientHello this module accepts in full records) and calls
 * lb_tls_sni() on all of it after each segment: the parse starts over
 * every time, so a ClientHello split across TCP segments anywhere, and
 * its handshake message fragmented across several TLS records (RFC 8446
 * 5.1), need no state between calls. A ClientHello is a few hundred
 * bytes to 2 KiB in one or two segments, so re-parsing costs less than
 * keeping a parser's state in every waiting flow.
 *
 * The whole ClientHello is read before the verdict, so that a length
 * that lies or a second server_name extension is seen wherever it is:
 * - the records carrying it must all be handshake records (type 22,
 *   version 3.x, 1 to 2^14 bytes: RFC 8446 5.1 forbids interleaving other
 *   types and empty handshake fragments); what follows it is not read;
 * - every length (message, session ID, cipher suites, compression
 *   methods, extensions, each extension, the server name list and its
 *   entries) must fit in the one that holds it, and the extensions must
 *   end exactly with the message;
 * - extensions may come in any order; unknown ones, GREASE values
 *   (RFC 8701) among them, are skipped;
 * - a ClientHelloOuter of Encrypted Client Hello carries the public name
 *   in its server_name extension: that is the name found, and the result
 *   says an encrypted_client_hello extension was there;
 * - an SSL 2.0-compatible ClientHello (first byte with its top bit set)
 *   is not TLS as far as this module is concerned: it has no extensions,
 *   so no SNI.
 */

#include <stddef.h>
#include <stdint.h>

#include "hostname.h"

/** Longest ClientHello message body accepted (its 24-bit length). */
#define LB_TLS_HELLO_MAX 16384
/** A prefix that holds any accepted ClientHello in records of 2^14
 * bytes: the message, its 4-byte header, and two record headers. */
#define LB_TLS_PREFIX_MAX (LB_TLS_HELLO_MAX + 4 + 2 * 5)

/** Verdicts of lb_tls_sni(), LB_TLS_SNI_NEED_MORE first. */
enum lb_tls_sni_verdict {
	LB_TLS_SNI_NEED_MORE, /**< a TLS prefix so far: give more bytes */
	LB_TLS_SNI_FOUND,     /**< a complete ClientHello with a name */
	LB_TLS_SNI_NONE,      /**< a complete ClientHello without one */
	LB_TLS_SNI_NOT_TLS,   /**< the stream does not start a TLS record */
	LB_TLS_SNI_MALFORMED, /**< TLS records, but no valid ClientHello */
	LB_TLS_SNI_TOO_LONG,  /**< a ClientHello over LB_TLS_HELLO_MAX */
	LB_TLS_SNI_VERDICTS,
};

/** What lb_tls_sni() found. */
struct lb_tls_hello {
	char sni[LB_HOSTNAME_MAX + 1]; /**< lower-cased, NUL-terminated */
	uint16_t sni_len;	       /**< 0 unless LB_TLS_SNI_FOUND */
	uint8_t ech;		       /**< an encrypted_client_hello
					* extension was there: the name is
					* the outer, public one */
	uint32_t used; /**< bytes of the prefix up to the hello's end */
};

/**
 * Reads the ClientHello at the start of the @p len bytes at @p p.
 * @p out is written only on LB_TLS_SNI_FOUND and LB_TLS_SNI_NONE.
 * @return an enum lb_tls_sni_verdict
 */
int lb_tls_sni(const uint8_t *p, size_t len, struct lb_tls_hello *out);

/** The verdict's name for counters and logs ("need_more", "found"...). */
const char *lb_tls_sni_verdict_name(int v);

#endif /* LB_TLS_SNI_H */
