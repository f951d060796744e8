/* SPDX-License-Identifier: MIT */
/* libetl public API, field decoding: every event's provider, task, opcode and event names and its fields by name. */
#ifndef LIBETL_ETL_DECODE_H
#define LIBETL_ETL_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "kernel.h" /* etl_string */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A field's in type: how its bytes are laid out (doc/format.md section 18). The numbers are
 * those of Windows' TDH_INTYPE, which instrumentation manifests (win:Int32 ...), TraceLogging
 * (TlgIn*: 1 to 25 are the same) and the kernel's MOF classes share.
 */
enum etl_in_type {
    ETL_IN_NULL = 0,
    ETL_IN_UNICODE_STRING = 1,     /* UTF-16LE: zero-terminated, or of a given length in characters */
    ETL_IN_ANSI_STRING = 2,        /* 8-bit: zero-terminated, or of a given length in bytes */
    ETL_IN_INT8 = 3, ETL_IN_UINT8 = 4, ETL_IN_INT16 = 5, ETL_IN_UINT16 = 6,
    ETL_IN_INT32 = 7, ETL_IN_UINT32 = 8, ETL_IN_INT64 = 9, ETL_IN_UINT64 = 10,
    ETL_IN_FLOAT = 11, ETL_IN_DOUBLE = 12,
    ETL_IN_BOOLEAN = 13,           /* 32 bits */
    ETL_IN_BINARY = 14,            /* bytes of a given length (TraceLogging: a u16 byte count first) */
    ETL_IN_GUID = 15,
    ETL_IN_POINTER = 16,           /* 4 or 8 bytes: the event's pointer size */
    ETL_IN_FILETIME = 17,          /* 100 ns since 1601, UTC */
    ETL_IN_SYSTEMTIME = 18,        /* eight u16: year, month, day of week, day, hour, minute, second, ms */
    ETL_IN_SID = 19,               /* a binary SID: 8 + 4 * sub-authority count bytes */
    ETL_IN_HEXINT32 = 20, ETL_IN_HEXINT64 = 21,
    ETL_IN_COUNTED_STRING = 22,    /* u16 byte count, then UTF-16LE */
    ETL_IN_COUNTED_ANSI_STRING = 23, /* u16 byte count, then 8-bit characters */
    ETL_IN_STRUCT = 24,            /* no bytes of its own: its members follow */
    ETL_IN_COUNTED_BINARY = 25,    /* u16 byte count, then the bytes */
    /* TDH's types for the MOF classes */
    ETL_IN_COUNTED_STRING_MOF = 300,       /* u16 byte count, then UTF-16LE (MOF "counted") */
    ETL_IN_COUNTED_ANSI_STRING_MOF = 301,
    ETL_IN_NON_NULL_TERMINATED_STRING = 304,      /* UTF-16LE to the end of the payload */
    ETL_IN_NON_NULL_TERMINATED_ANSI_STRING = 305,
    ETL_IN_UNICODE_CHAR = 306,     /* one UTF-16 code unit */
    ETL_IN_ANSI_CHAR = 307,        /* one 8-bit character */
    ETL_IN_SIZET = 308,            /* unsigned, the event's pointer size */
    ETL_IN_WBEM_SID = 310          /* TOKEN_USER (two pointers) then a SID; 4 zero bytes for none */
};

/*
 * A field's out type: how its value is shown (TDH_OUTTYPE numbering; TraceLogging's TlgOut
 * values are mapped onto these). ETL_OUT_NULL means the in type's own way.
 */
enum etl_out_type {
    ETL_OUT_NULL = 0, ETL_OUT_STRING = 1, ETL_OUT_DATETIME = 2, ETL_OUT_BYTE = 3, ETL_OUT_UNSIGNED_BYTE = 4,
    ETL_OUT_SHORT = 5, ETL_OUT_UNSIGNED_SHORT = 6, ETL_OUT_INT = 7, ETL_OUT_UNSIGNED_INT = 8, ETL_OUT_LONG = 9,
    ETL_OUT_UNSIGNED_LONG = 10, ETL_OUT_FLOAT = 11, ETL_OUT_DOUBLE = 12, ETL_OUT_BOOLEAN = 13, ETL_OUT_GUID = 14,
    ETL_OUT_HEX_BINARY = 15, ETL_OUT_HEXINT8 = 16, ETL_OUT_HEXINT16 = 17, ETL_OUT_HEXINT32 = 18,
    ETL_OUT_HEXINT64 = 19, ETL_OUT_PID = 20, ETL_OUT_TID = 21,
    ETL_OUT_PORT = 22,             /* a u16 in network byte order: shown in host order */
    ETL_OUT_IPV4 = 23,             /* a u32 holding the four bytes of the address in order */
    ETL_OUT_IPV6 = 24,             /* 16 bytes */
    ETL_OUT_SOCKET_ADDRESS = 25,   /* a SOCKADDR_IN or SOCKADDR_IN6 */
    ETL_OUT_CIM_DATETIME = 26, ETL_OUT_ETW_TIME = 27, ETL_OUT_XML = 28, ETL_OUT_ERROR_CODE = 29,
    ETL_OUT_WIN32_ERROR = 30, ETL_OUT_NTSTATUS = 31, ETL_OUT_HRESULT = 32,
    ETL_OUT_CULTURE_INSENSITIVE_DATETIME = 33, ETL_OUT_JSON = 34, ETL_OUT_UTF8 = 35,
    ETL_OUT_PKCS7_WITH_TYPE_INFO = 36, ETL_OUT_CODE_POINTER = 37, ETL_OUT_DATETIME_UTC = 38,
    ETL_OUT_REDUCED_STRING = 300, ETL_OUT_NOPRINT = 301
};

/* "UInt32", "UnicodeString", ... (the manifest's win: names without the prefix); "Unknown". */
ETL_API const char *etl_in_type_name(unsigned in_type);

/* Where an event's schema came from. */
enum etl_schema_source {
    ETL_SCHEMA_NONE = 0,       /* no schema: the payload stays bytes */
    ETL_SCHEMA_MANIFEST,       /* an instrumentation manifest (file, directory or default) */
    ETL_SCHEMA_EVENTSOURCE,    /* a .NET EventSource's manifest, carried in the trace */
    ETL_SCHEMA_TRACELOGGING,   /* the event's own TraceLogging metadata */
    ETL_SCHEMA_KERNEL          /* the NT Kernel Logger's MOF classes, built into libetl */
};
/* "none", "manifest", "eventsource", "tracelogging", "kernel"; "unknown". */
ETL_API const char *etl_schema_source_name(int source);

/* A valueMap or bitMap of a manifest; owned by the decoder. */
typedef struct etl_map etl_map;
/* The map's name. */
ETL_API const char *etl_map_name(const etl_map *m);
/* 1 for a bitMap, 0 for a valueMap. */
ETL_API int etl_map_is_bitmap(const etl_map *m);
/* The name value has in m, into out as snprintf does: a valueMap's entry, or a bitMap's names
   of the set bits joined with "|", bits no entry names added as one hex number ("A|B|0x40").
   Returns the length of the whole text; *exact (when not NULL) is 1 when the names alone give
   value back, 0 when a value or bits had no name (the text then carries the number). */
ETL_API size_t etl_map_format(const etl_map *m, uint64_t value, char *out, size_t size, int *exact);

/* What a decoded field is. */
enum etl_field_kind {
    ETL_FIELD_VALUE = 0,   /* one value */
    ETL_FIELD_ARRAY = 1,   /* count elements of in_type (see etl_field_element) */
    ETL_FIELD_STRUCT = 2   /* count members, the fields that follow it one level deeper */
};

/*
 * One field of a decoded event. The fields of an event are one array in schema order, a tree
 * laid out depth first: a struct's members and an array's elements follow it, one level deeper,
 * and field[i].end is the index just past field i and everything inside it. An array of
 * fixed-size values (integers, floats, booleans, pointers, GUIDs, times) is one field whose
 * data holds every element, none following it; an array of strings, SIDs, binaries or structs
 * is followed by one field per element. Names and maps belong to the decoder; data points into
 * the event's payload (zero copy).
 */
typedef struct etl_field {
    const char *name;          /* UTF-8; an element carries its array's name */
    uint16_t in_type;          /* enum etl_in_type; an array's is its elements' */
    uint16_t out_type;         /* enum etl_out_type */
    uint8_t kind;              /* enum etl_field_kind */
    uint8_t depth;             /* 0 at the top; members and elements one more than their parent */
    uint8_t pointer_size;      /* 4 or 8: for ETL_IN_POINTER, ETL_IN_SIZET */
    uint8_t element_size;      /* a packed array's element size in bytes, else 0 */
    uint32_t count;            /* ARRAY: elements; STRUCT: members; VALUE: 1 */
    uint32_t end;              /* index of the first field after this one and all it holds */
    const uint8_t *data;       /* the bytes of the value (strings: without terminator or count;
                                  a packed array: all its elements) */
    uint32_t size;             /* of data */
    uint32_t offset;           /* where the field starts in the payload */
    const etl_map *map;        /* its valueMap or bitMap, or NULL */
} etl_field;

/* The value of an integer-like field (integers, booleans, pointers, size_t, hex integers,
   characters): ETL_OK, or ETL_FAILED for other types. Ports are turned to host order, an IPv4
   address is its u32 as stored. etl_field_int sign-extends the signed in types. */
ETL_API int etl_field_uint(const etl_field *f, uint64_t *out);
ETL_API int etl_field_int(const etl_field *f, int64_t *out);
/* FLOAT and DOUBLE (and integers, converted): ETL_OK or ETL_FAILED. */
ETL_API int etl_field_double(const etl_field *f, double *out);
/* FILETIME or SYSTEMTIME as nanoseconds since 1970 UTC: ETL_OK or ETL_FAILED (not a time, or
   a SYSTEMTIME that names no real date). */
ETL_API int etl_field_time(const etl_field *f, int64_t *ns);
/* A GUID field: ETL_OK or ETL_FAILED. */
ETL_API int etl_field_guid(const etl_field *f, etl_guid *out);
/* A string field (and characters) as a view: ETL_OK or ETL_FAILED. */
ETL_API int etl_field_string(const etl_field *f, etl_string *out);
/* The index-th element of a packed array (kind ARRAY with element_size > 0) as a VALUE field
   in *out: ETL_OK, or ETL_FAILED when index is out of range or the array is not packed. */
ETL_API int etl_field_element(const etl_field *f, uint32_t index, etl_field *out);

/*
 * A value as Windows' tools show it, into out as snprintf does (returns the whole length):
 * integers in decimal; hex types, pointers and HexInt out types as 0x...; booleans as
 * true/false; GUIDs in lowercase; FILETIME and SYSTEMTIME as ISO-8601 UTC; SIDs as S-1-...;
 * binary as hex digits; ports in host order; IPv4 dotted; IPv6 in RFC 5952's short form; a
 * socket address as address:port; strings as UTF-8, unquoted; a mapped value as its map's
 * name(s) (etl_map_format). Arrays and structs: see etl_decoded_format_text.
 */
ETL_API size_t etl_field_format(const etl_field *f, char *out, size_t size);

/* One decoded event: names and fields. Valid until the next etl_decoder_decode on the same
   decoder or etl_decoder_close; the names until etl_decoder_close. */
typedef struct etl_decoded_event {
    int source;                /* enum etl_schema_source; ETL_SCHEMA_NONE: no fields */
    const char *provider_name; /* "Microsoft-Windows-DotNETRuntime", "solar_system", the kernel
                                  class ("Process"); NULL when unknown */
    const char *task_name;     /* "GC", "Process"; NULL when none */
    const char *opcode_name;   /* "AllocationTick", "DCStart"; NULL when none */
    const char *event_name;    /* as Windows' tools name it: "Provider/Task/Opcode"
                                  ("Microsoft-Windows-DotNETRuntime/GC/AllocationTick"), the kernel
                                  classes as "Task/Opcode" ("Process/DCStart"), TraceLogging as
                                  "Provider/EventName"; NULL when the event has no schema */
    const etl_field *fields;   /* field_count fields, depth first (see etl_field) */
    uint32_t field_count;
    uint32_t payload_used;     /* payload bytes the fields covered */
} etl_decoded_event;

/*
 * The fields as one text, into out as snprintf does: top-level fields as Name=value separated
 * by spaces, strings in double quotes (with \" \n \t \r and \xNN escapes; backslashes as they
 * are, so that Windows paths read as Windows shows them), arrays as
 * [a,b,c], structs as {Name=value ...}.
 */
ETL_API size_t etl_decoded_format_text(const etl_decoded_event *e, char *out, size_t size);
/*
 * The fields as one JSON object, into out as snprintf does: {"Name":value,...} in schema order.
 * Integers are numbers (64-bit too); pointers and hex types "0x..." strings; booleans true or
 * false; GUIDs lowercase strings; times ISO-8601 UTC strings; SIDs "S-1-..."; binary hex
 * strings; arrays arrays; structs objects; a mapped value its map's name ("A|B"), or, when
 * names alone would lose it, {"name":"A|0x40","value":N}. Floats that are not finite are null.
 */
ETL_API size_t etl_decoded_format_json(const etl_decoded_event *e, char *out, size_t size);

/* The top-level field of e named name (the first, when a schema repeats a name), or NULL. */
ETL_API const etl_field *etl_decoded_field_find(const etl_decoded_event *e, const char *name);

/* Field index of e and all it holds, as etl_decoded_format_text shows a value (json 0) or as
   etl_decoded_format_json does (json 1), without its name; into out as snprintf does. */
ETL_API size_t etl_decoded_field_format(const etl_decoded_event *e, uint32_t index, int json, char *out, size_t size);

/* ---- the decoder: schemas from manifests, TraceLogging, EventSource and the kernel ---- */

typedef struct etl_decoder etl_decoder;

#define ETL_DECODER_NO_DEFAULTS 0x1u /* load neither ETL_MANIFEST_PATH nor the installed manifests */

typedef struct etl_decoder_options {
    unsigned flags;            /* ETL_DECODER_* */
    /* Called for what loading skipped but did not refuse (messages naming strings a manifest's
       string table lacks, an event naming a keyword nobody defines, an EventSource manifest
       that does not parse or would take more memory than allowed), with its message. */
    void (*on_warning)(void *arg, const char *message);
    void *on_warning_arg;
} etl_decoder_options;

/*
 * A new decoder. Unless ETL_DECODER_NO_DEFAULTS, it loads the manifests installed with libetl
 * (etl_decoder_default_directory; nothing when it does not exist), then those of the
 * colon-separated files and directories of ETL_MANIFEST_PATH, whose providers replace the
 * installed ones of the same GUID. ETL_OK; ETL_WARN when a default manifest could not be loaded
 * (the decoder works; etl_decoder_error says which and why, and each goes to on_warning);
 * ETL_FATAL when memory ran out (*out NULL). opt may be NULL.
 */
ETL_API int etl_decoder_open(etl_decoder **out, const etl_decoder_options *opt);
ETL_API void etl_decoder_close(etl_decoder *d);
/* The directory of the manifests installed with libetl ($(datadir)/libetl/manifests, fixed at
   configure time). Static storage. */
ETL_API const char *etl_decoder_default_directory(void);

/*
 * Loads the instrumentation manifest at path, or every *.man and *.xml of a directory (not
 * recursively, in name order): ETL_OK; ETL_FAILED with a message naming the file, the line and
 * what is wrong (nothing of that file is kept; a directory's other manifests are). A manifest
 * may be a Windows component manifest (<assembly> with <instrumentation> inside). A later
 * manifest's provider replaces an earlier one's of the same GUID. doc/format.md section 19.
 */
ETL_API int etl_decoder_add_manifest(etl_decoder *d, const char *path);
/* The same for a manifest in memory; name is used in messages. */
ETL_API int etl_decoder_add_manifest_memory(etl_decoder *d, const void *xml, size_t size, const char *name);

/*
 * Takes what an event teaches the decoder: the chunks of a .NET EventSource's manifest
 * (ManifestData events, id 65534, opcode 254), put together per provider and, once whole, read
 * like a manifest file for that provider alone (ETL_SCHEMA_EVENTSOURCE). etl_decoder_decode
 * does this itself; call it on the events of a first pass to decode events that come before
 * their manifest. ETL_OK (other events too); ETL_WARN when a chunk was left out (not a
 * ManifestEnvelope, or more than the memory kept for manifests: 16 MiB for one, 64 MiB for all
 * being put together, 256 providers at once) or a whole manifest did not load (message in
 * etl_decoder_error, and on_warning, up to 100 times).
 */
ETL_API int etl_decoder_learn(etl_decoder *d, const etl_event *ev);

/*
 * Decodes ev into *out: 1 when it has a schema and every field decoded; 0 when it has none
 * (out->source is ETL_SCHEMA_NONE, and out->provider_name is set when the provider is known);
 * ETL_FAILED when its payload does not fit its schema: the names and the fields before the one
 * that did not fit are in *out, and etl_decoder_error says which field, at which byte of the
 * payload, and where the event is in the file (buffer, its offset, the record's offset).
 */
ETL_API int etl_decoder_decode(etl_decoder *d, const etl_event *ev, etl_decoded_event *out);

/* The name of a provider the decoder knows (from a manifest, an EventSource manifest, a
   TraceLogging event it decoded, or a kernel class), else NULL. Valid until etl_decoder_close. */
ETL_API const char *etl_decoder_provider_name(const etl_decoder *d, const etl_guid *provider);
/* The provider's GUID for a name the decoder knows (any case): ETL_OK or ETL_FAILED. */
ETL_API int etl_decoder_provider_guid(const etl_decoder *d, const char *name, etl_guid *out);

/* What the decoder did for one provider, over every etl_decoder_decode call. */
typedef struct etl_decoder_provider_stats {
    etl_guid provider;
    const char *name;          /* NULL when unknown */
    uint64_t decoded;          /* events decoded whole */
    uint64_t undecoded;        /* events with no schema */
    uint64_t failed;           /* events whose payload did not fit their schema */
} etl_decoder_provider_stats;
/* Number of providers seen so far, and the index-th (in order of first sight): ETL_OK or
   ETL_FAILED when index is out of range. */
ETL_API unsigned etl_decoder_provider_count(const etl_decoder *d);
ETL_API int etl_decoder_provider_stats_get(const etl_decoder *d, unsigned index, etl_decoder_provider_stats *out);

/* Sets every provider's counts back to 0 (to count one file of several). */
ETL_API void etl_decoder_provider_stats_reset(etl_decoder *d);

/* The message of the last ETL_WARN or ETL_FAILED, or "". Valid until the next call on d. */
ETL_API const char *etl_decoder_error(const etl_decoder *d);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_DECODE_H */
