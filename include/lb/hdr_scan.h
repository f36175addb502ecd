/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HDR_SCAN_H
#define LB_HDR_SCAN_H

/**
 * @file
 * Extraction of load feedback and request hints from HTTP/1.x header
 * blocks, scanned with Hyperscan in streaming mode.
 *
 * The dataplane follows HTTP exchanges without terminating TCP, so a header
 * block arrives in as many chunks as TCP segments split it. Each configured
 * header name is compiled into a streaming database that finds it at the
 * start of a line, caselessly; the value that follows is captured up to the
 * end of the line across chunk boundaries into a small fixed buffer and
 * parsed strictly. Values the seeds rely on:
 * - `X-SPL`: the self-perceived load of the SPL autoscaling patent, a ratio
 *   of execution time to benchmark time ([0029], [0063]: 120 ms / 150 ms is
 *   0.8), returned "within a header field of the response" ([0064]);
 * - `X-SPL-Time`: the "timestamp indicating the time the response was
 *   generated" ([0065]) that the decay of [0066]-[0067] needs; integer
 *   milliseconds since the Unix epoch, because the patent's decay divides by
 *   the age in milliseconds ([0067], [0069]);
 * - `X-Priority`, `X-Expect-Ms`: the priority rank and expected response
 *   time a request may carry for the overload governor;
 * - `endpoint-load-metrics`: an ORCA load report in its TEXT form, a second
 *   source of backend load.
 * The status code is taken from the status line.
 *
 * Memory model: a database (struct lb_hdr_db) is compiled once by the
 * control process, serialized into shared memory and loaded by the workers;
 * each worker owns one struct lb_hdr_scratch (Hyperscan scratch plus
 * counters); each exchange being scanned owns one fixed-size struct
 * lb_hdr_stream, set up once and reused for every header block without
 * allocating. Nothing here is thread-safe except the database, which is
 * read-only once built.
 */

#include <stddef.h>
#include <stdint.h>

/** Most header fields one database looks for. */
#define LB_HDR_MAX_FIELDS 16
/** Longest configurable header name, in bytes. */
#define LB_HDR_NAME_MAX 64
/** Largest configurable value length; also the capture buffer's size. */
#define LB_HDR_VALUE_MAX 256
/** Default value length limit of the numeric kinds. */
#define LB_HDR_NUM_LEN_DEFAULT 64
/** Largest integer kept exactly by a double (2^53 - 1). */
#define LB_HDR_UINT_LIMIT 9007199254740991.0
/** Upper bound of the ORCA rates (rps_fractional, eps), per second. */
#define LB_HDR_ORCA_RATE_MAX 1e9
/** Upper bound of ORCA named metrics and similar maps, which are skipped. */
#define LB_HDR_ORCA_NAMED_MAX 1e15

/** What a configured header carries, which decides how it is parsed. */
enum lb_hdr_kind {
	/** Self-perceived load: non-negative decimal, default [0, 1000]. */
	LB_HDR_KIND_SPL,
	/** SPL generation time: integer epoch milliseconds. */
	LB_HDR_KIND_SPL_TIME,
	/** Request priority rank: small non-negative integer. */
	LB_HDR_KIND_PRIORITY,
	/** Expected response time: positive integer milliseconds. */
	LB_HDR_KIND_EXPECT_MS,
	/** ORCA `endpoint-load-metrics` in TEXT form. */
	LB_HDR_KIND_ORCA,
	/** Any other non-negative decimal; bounds from the configuration. */
	LB_HDR_KIND_DECIMAL,
	/** Any other non-negative integer; bounds from the configuration. */
	LB_HDR_KIND_UINT,
	LB_HDR_KIND_MAX
};

/** Why a value was accepted or rejected; also the index of the counters. */
enum lb_hdr_reason {
	LB_HDR_OK = 0,
	/** Nothing but whitespace after the colon. */
	LB_HDR_ERR_EMPTY,
	/** Not a plain decimal: sign, hex, exponent, NaN, inf, garbage. */
	LB_HDR_ERR_SYNTAX,
	/** Well formed but out of bounds, or with too many digits. */
	LB_HDR_ERR_RANGE,
	/** Longer than the field's max_len. */
	LB_HDR_ERR_TOO_LONG,
	/** The header appeared more than once in the block: all rejected. */
	LB_HDR_ERR_DUPLICATE,
	/** Whitespace between the name and the colon (RFC 9112 5.1). */
	LB_HDR_ERR_NAME_WS,
	/** Continued on the next line by obsolete line folding. */
	LB_HDR_ERR_FOLD,
	/** The block ended before the value's line did. */
	LB_HDR_ERR_TRUNCATED,
	/** ORCA value not in TEXT form (JSON, BIN, or unknown). */
	LB_HDR_ERR_ORCA_FORMAT,
	/** ORCA pair malformed, unknown, repeated, or report empty. */
	LB_HDR_ERR_ORCA_PAIR,
	LB_HDR_ERR_MAX
};

/** One header to look for. */
struct lb_hdr_field_cfg {
	/** Header name (an RFC 9110 token), matched caselessly. */
	char name[LB_HDR_NAME_MAX + 1];
	enum lb_hdr_kind kind;
	/**
	 * Inclusive bounds of the value. For integer kinds both must be
	 * whole numbers in [0, LB_HDR_UINT_LIMIT]. For LB_HDR_KIND_ORCA they
	 * bound cpu_utilization and application_utilization.
	 */
	double min;
	double max;
	/** Longest accepted value, 1..LB_HDR_VALUE_MAX bytes. */
	unsigned int max_len;
};

/** The set of headers one database looks for. */
struct lb_hdr_cfg {
	unsigned int nb_fields;
	struct lb_hdr_field_cfg fields[LB_HDR_MAX_FIELDS];
};

/** Bits of struct lb_hdr_orca.present. */
#define LB_HDR_ORCA_CPU (1u << 0)
#define LB_HDR_ORCA_MEM (1u << 1)
#define LB_HDR_ORCA_APP (1u << 2)
#define LB_HDR_ORCA_RPS (1u << 3)
#define LB_HDR_ORCA_EPS (1u << 4)

/** The parts of an ORCA load report the load balancer uses. */
struct lb_hdr_orca {
	/** LB_HDR_ORCA_* bits of the metrics that were in the report. */
	uint32_t present;
	/** named_metrics, utilization and request_cost entries, checked and
	 * skipped. */
	uint32_t nb_named;
	double cpu_utilization;
	double mem_utilization;
	double application_utilization;
	double rps_fractional;
	double eps;
};

/** One field's outcome in one header block. */
struct lb_hdr_value {
	/** Occurrences in the block, saturating at 255; 0 = absent. */
	uint8_t seen;
	/** enum lb_hdr_reason; LB_HDR_OK only for an accepted value. */
	uint8_t reason;
	/** The value, set only when reason is LB_HDR_OK, zero otherwise. */
	union {
		double d;   /**< LB_HDR_KIND_SPL, LB_HDR_KIND_DECIMAL */
		uint64_t u; /**< the integer kinds */
		struct lb_hdr_orca orca; /**< LB_HDR_KIND_ORCA */
	} v;
};

/** What one header block said. */
struct lb_hdr_result {
	/** Bit i: configured field i appeared at least once. */
	uint32_t present;
	/** Bit i: field i was accepted; field[i].v is meaningful. */
	uint32_t valid;
	/** Status code 100..599 of a response, 0 if absent or invalid. */
	uint16_t status;
	/** Whether a status line was seen at all (responses only). */
	uint8_t status_seen;
	/** enum lb_hdr_reason of the status code. */
	uint8_t status_reason;
	struct lb_hdr_value field[LB_HDR_MAX_FIELDS];
};

/** Per-worker counters, updated when a block ends. */
struct lb_hdr_stats {
	uint64_t blocks;      /**< header blocks ended */
	uint64_t bytes;	      /**< bytes scanned */
	uint64_t aborted;     /**< blocks reset before their end */
	uint64_t scan_errors; /**< Hyperscan failures (block discarded) */
	uint64_t accepted;    /**< field values accepted */
	/** Rejected field occurrences by reason; [LB_HDR_OK] stays 0. */
	uint64_t rejected[LB_HDR_ERR_MAX];
	uint64_t status_ok;  /**< valid status codes */
	uint64_t status_bad; /**< status lines with an invalid code */
};

struct lb_hdr_db;
struct lb_hdr_scratch;
struct hs_stream;

/** Capture and per-field state of the header block being scanned. */
struct lb_hdr_block {
	uint64_t base;	      /**< stream offset of the chunk being scanned */
	const uint8_t *chunk; /**< that chunk, valid during a scan only */
	uint32_t chunk_len;
	int16_t cap_slot;   /**< slot whose value runs past the chunk, or -1 */
	int16_t fold_slot;  /**< slot whose line ended the chunk, or -1 */
	int16_t ws_slot;    /**< slot whose name ended the chunk in blanks */
	uint8_t sl_pos;	    /**< bytes of "HTTP/1.d " matched so far */
	uint32_t cap_total; /**< value bytes seen so far (saturating) */
	uint16_t cap_len;   /**< value bytes stored so far */
	uint8_t cap_last;   /**< last value byte seen */
	uint8_t failed;	    /**< a scan failed: the block is discarded */
	uint8_t cap_buf[LB_HDR_VALUE_MAX + 1];
	/** Configured fields, then the status line. */
	struct lb_hdr_value slot[LB_HDR_MAX_FIELDS + 1];
};

/**
 * Scanning state of one exchange. Fixed size: embed it in a pool object,
 * lb_hdr_stream_init() it once, reuse it for any number of header blocks,
 * lb_hdr_stream_fini() it when the pool goes away.
 */
struct lb_hdr_stream {
	struct hs_stream *hs;
	const struct lb_hdr_db *db;
	uint64_t fed; /**< bytes fed since the block began */
	struct lb_hdr_block blk;
};

/** Fills @p cfg with the five default fields, in the order of the kinds:
 * X-SPL, X-SPL-Time, X-Priority, X-Expect-Ms, endpoint-load-metrics. */
void lb_hdr_cfg_default(struct lb_hdr_cfg *cfg);

/**
 * Appends a field named @p name of @p kind with that kind's default bounds
 * and length limit (adjust them in cfg->fields[index] afterwards).
 * @return its index, -EINVAL for a bad name or kind, -ENOSPC when full,
 *   -EEXIST if the name (caselessly) is already there.
 */
int lb_hdr_cfg_add(struct lb_hdr_cfg *cfg, const char *name,
		   enum lb_hdr_kind kind);

/**
 * Checks a configuration: names are non-empty RFC 9110 tokens, unique
 * caselessly; kinds known; bounds finite, ordered, non-negative (integer
 * and within LB_HDR_UINT_LIMIT for integer kinds); max_len in range.
 * @return 0 or -EINVAL.
 */
int lb_hdr_cfg_check(const struct lb_hdr_cfg *cfg);

/**
 * Compiles @p cfg into streaming and block databases.
 * @return the database, or NULL with errno EINVAL (bad configuration or
 *   pattern refused by Hyperscan) or ENOMEM.
 */
struct lb_hdr_db *lb_hdr_db_compile(const struct lb_hdr_cfg *cfg);

/** Frees a database. No stream or scratch may use it any more. */
void lb_hdr_db_free(struct lb_hdr_db *db);

/**
 * Writes the database (configuration and both Hyperscan databases) into
 * @p buf, e.g. a shared memory zone; *len receives the size needed.
 * Hyperscan's serializing buffer is released with free(), so an allocator
 * given to hs_set_allocator() must be malloc-compatible.
 * @return 0, -ENOSPC if @p size is too small (or @p buf NULL), -EINVAL,
 *   -ENOMEM.
 */
int lb_hdr_db_serialize(const struct lb_hdr_db *db, void *buf, size_t size,
			size_t *len);

/**
 * Rebuilds a database from lb_hdr_db_serialize() output. The blob is
 * checked (magic, version, checksum, configuration) before use; Hyperscan
 * checks its own parts against this library version and CPU.
 * @return the database, or NULL with errno EINVAL or ENOMEM.
 */
struct lb_hdr_db *lb_hdr_db_deserialize(const void *buf, size_t len);

/**
 * What tells two serialized databases apart without reading them whole:
 * the blob's checksum and length (0 for no blob). Equal for equal blobs.
 */
uint64_t lb_hdr_db_blob_id(const void *buf, size_t len);

/** The configuration a database was built from. */
const struct lb_hdr_cfg *lb_hdr_db_cfg(const struct lb_hdr_db *db);

/** Bytes of Hyperscan stream state each struct lb_hdr_stream holds besides
 * its own size, or 0 for a NULL database. */
size_t lb_hdr_db_stream_size(const struct lb_hdr_db *db);

/** Index of the first field of @p kind, or -ENOENT. */
int lb_hdr_db_field(const struct lb_hdr_db *db, enum lb_hdr_kind kind);

/**
 * Allocates the per-worker scratch for @p db (Hyperscan scratch and zeroed
 * counters). @return NULL with errno EINVAL or ENOMEM on failure.
 */
struct lb_hdr_scratch *lb_hdr_scratch_alloc(const struct lb_hdr_db *db);

/** Another worker's scratch for the same database, counters zeroed. */
struct lb_hdr_scratch *lb_hdr_scratch_clone(const struct lb_hdr_scratch *src);

void lb_hdr_scratch_free(struct lb_hdr_scratch *scr);

/** The counters of one worker's scratch. */
const struct lb_hdr_stats *
lb_hdr_scratch_stats(const struct lb_hdr_scratch *scr);

/**
 * Opens the Hyperscan stream of @p s for @p db; the only allocation in the
 * life of the stream. @return 0, -EINVAL or -ENOMEM.
 */
int lb_hdr_stream_init(struct lb_hdr_stream *s, const struct lb_hdr_db *db);

/** Closes the Hyperscan stream; @p s may be initialised again. */
void lb_hdr_stream_fini(struct lb_hdr_stream *s);

/**
 * Drops the block in progress (connection reset, framing error) so that
 * the stream can take a new block. Counted as aborted in @p scr's counters
 * when bytes had been fed; @p scr may be NULL. @return 0 or -EINVAL.
 */
int lb_hdr_stream_reset(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr);

/**
 * Scans the next @p len bytes of the current header block (status or
 * request line included), split anywhere.
 * @return 0, -EINVAL for bad arguments, -EIO if Hyperscan failed (the
 *   block will end with no fields).
 */
int lb_hdr_feed(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr,
		const void *data, size_t len);

/**
 * Ends the current header block: fills @p res, updates the counters of
 * @p scr and readies @p s for the next block.
 * @return 0, -EINVAL, or -EIO if a scan of this block failed (then @p res
 *   reports nothing).
 */
int lb_hdr_end(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr,
	       struct lb_hdr_result *res);

/**
 * Scans one whole header block in block mode; gives the same @p res as
 * feeding it to a stream in any split, and counts it the same way.
 * @return 0, -EINVAL, or -EIO.
 */
int lb_hdr_scan_block(const struct lb_hdr_db *db, struct lb_hdr_scratch *scr,
		      const void *block, size_t len, struct lb_hdr_result *res);

/** Short name of a reason, for logs and counters ("syntax", ...). */
const char *lb_hdr_reason_str(enum lb_hdr_reason reason);

/** Short name of a kind ("spl", "orca", ...). */
const char *lb_hdr_kind_str(enum lb_hdr_kind kind);

#endif /* LB_HDR_SCAN_H */
