/* SPDX-License-Identifier: MIT */
/* libetl public API, providers: register, ask whether enabled, write into the sessions that enabled them. */
#ifndef LIBETL_ETL_PROVIDER_H
#define LIBETL_ETL_PROVIDER_H

#include <stdint.h>

#include "types.h"
#include "decode.h"
#include "writer.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Providers: register, ask whether enabled, write (ETW's EventRegister/EventWrite) ---- */

/*
 * A provider writes its events into every session that enabled it (etl_session_enable_provider)
 * and whose filter the event passes: ETW's rules, where an event passes when the session's
 * level is 0 (all levels), or the event's level is 0 (always) or not above the session's; and
 * its keywords are 0, or share a bit with the session's MatchAnyKeyword (0: any) and contain
 * every bit of its MatchAllKeyword. Providers registered before or after a session enables
 * them are picked up either way; many sessions may enable one provider, and one session many.
 * Registration and enabling take a lock; writing and asking do not.
 */
typedef struct etl_provider etl_provider;

/* ETL_OK, or ETL_FAILED without memory (*out NULL). */
ETL_API int etl_provider_register(etl_provider **out, const etl_guid *guid);
/*
 * The same for a provider with a name, which TraceLogging events need (etl_tlg_event_define):
 * name is UTF-8, 1 to 255 bytes, copied; group is the provider group's GUID or NULL. Its
 * traits (the provider name and the group) go into every TraceLogging event it writes.
 * ETL_OK, or ETL_FAILED (*out NULL) with errno EINVAL (no name, or a name longer than 255
 * bytes) or ENOMEM.
 */
ETL_API int etl_provider_register_named(etl_provider **out, const char *name, const etl_guid *guid,
                                        const etl_guid *group);
/* No write through p may be running or start. Frees the TraceLogging events defined on p.
   NULL is allowed. */
ETL_API void etl_provider_unregister(etl_provider *p);
ETL_API const etl_guid *etl_provider_guid(const etl_provider *p);
/* The name given to etl_provider_register_named, or NULL. Valid until p is unregistered. */
ETL_API const char *etl_provider_name(const etl_provider *p);
/* 1 when an event of this level and these keywords would go to at least one session. */
ETL_API int etl_provider_enabled(etl_provider *p, uint8_t level, uint64_t keywords);

/* etl_provider_write flags */
#define ETL_WRITE_STACK 0x1u /* add the caller's stack (a STACK_TRACE64 extended item) */
#define ETL_PROVIDER_MAX_STACK 192 /* frames at most, as ETW's stack walks */

/* Writes the event into every session it passes: ETL_OK (also when it passes none), or
   ETL_FAILED when a session lost it (counted in that session's EventsLost), or when a shared
   session was stopping (errno ESHUTDOWN, not counted: the event came after its end). */
ETL_API int etl_provider_write(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                               unsigned ndata, unsigned flags);
/*
 * The same, and after the event, in every session that took it, an LBR record
 * (etl_session_write_lbr: LbrFilterFlags filters, count entries, most recent branch first)
 * whose trigger timestamp is the event's own, to the tick, and whose process and thread ids
 * are the caller's: the pair Windows writes for an event with LBR. ETL_OK, or ETL_FAILED
 * when a session lost the event or its LBR record (counted in its EventsLost) or was stopping
 * (ESHUTDOWN, as for etl_provider_write); a session that did not take the event gets no LBR
 * record for it.
 */
ETL_API int etl_provider_write_lbr(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                                   unsigned ndata, unsigned flags, uint32_t filters, const etl_lbr_entry *entries,
                                   unsigned count);

/* ---- TraceLogging: self-describing events (doc/libetl.md "TraceLogging events") ---- */

/*
 * A TraceLogging event carries its own schema: the provider's traits (its name) and the
 * event's metadata (its name and each field's name and type) ride with every record as the
 * PROV_TRAITS and EVENT_SCHEMA_TL extended items, as Windows writes them, so that any
 * decoder (libetl's etl_decoder, TraceEvent, TDH) shows its fields with no manifest.
 * etl_tlg_event_define builds those bytes once; a write copies them with the payload.
 */

/* TraceLogging's out types (TlgOut): how a value is shown; 0 leaves it to the in type. */
enum etl_tlg_out {
    ETL_TLG_OUT_NULL = 0, ETL_TLG_OUT_NOPRINT = 1, ETL_TLG_OUT_STRING = 2, ETL_TLG_OUT_BOOLEAN = 3,
    ETL_TLG_OUT_HEX = 4, ETL_TLG_OUT_PID = 5, ETL_TLG_OUT_TID = 6, ETL_TLG_OUT_PORT = 7, ETL_TLG_OUT_IPV4 = 8,
    ETL_TLG_OUT_IPV6 = 9, ETL_TLG_OUT_SOCKETADDRESS = 10, ETL_TLG_OUT_XML = 11, ETL_TLG_OUT_JSON = 12,
    ETL_TLG_OUT_WIN32ERROR = 13, ETL_TLG_OUT_NTSTATUS = 14, ETL_TLG_OUT_HRESULT = 15, ETL_TLG_OUT_FILETIME = 16,
    ETL_TLG_OUT_SIGNED = 17, ETL_TLG_OUT_UNSIGNED = 18, ETL_TLG_OUT_DATETIME_CULTURE_INSENSITIVE = 33,
    ETL_TLG_OUT_UTF8 = 35, ETL_TLG_OUT_PKCS7_WITH_TYPE_INFO = 36, ETL_TLG_OUT_CODE_POINTER = 37,
    ETL_TLG_OUT_DATETIME_UTC = 38
};

/*
 * A field's type: an in type (enum etl_in_type 1 to 25: how its bytes are laid out) and an
 * out type (enum etl_tlg_out: how they are shown), the pairs TraceLoggingProvider.h's wrapper
 * macros write. Any pair may be given with ETL_TLG_TYPE (an out type is a hint decoders may
 * ignore). What each puts in the payload, little-endian, nothing between fields:
 */
#define ETL_TLG_TYPE(in, out) ((uint16_t)((unsigned)(in) | (unsigned)(out) << 8))
/* Strings: zero-terminated (its bytes and the terminator: strlen + 1 bytes; UTF-16: its code
   units and a 0 unit), or counted (a u16 byte count, not characters, then the bytes). */
#define ETL_TLG_UTF8           ETL_TLG_TYPE(ETL_IN_ANSI_STRING, ETL_TLG_OUT_UTF8)          /* TraceLoggingUtf8String */
#define ETL_TLG_ANSI           ETL_TLG_TYPE(ETL_IN_ANSI_STRING, 0)                         /* TraceLoggingString (Windows: code page 1252) */
#define ETL_TLG_UTF16          ETL_TLG_TYPE(ETL_IN_UNICODE_STRING, 0)                      /* TraceLoggingString16 */
#define ETL_TLG_COUNTED_UTF8   ETL_TLG_TYPE(ETL_IN_COUNTED_ANSI_STRING, ETL_TLG_OUT_UTF8)  /* TraceLoggingCountedUtf8String */
#define ETL_TLG_COUNTED_ANSI   ETL_TLG_TYPE(ETL_IN_COUNTED_ANSI_STRING, 0)                 /* TraceLoggingCountedString */
#define ETL_TLG_COUNTED_UTF16  ETL_TLG_TYPE(ETL_IN_COUNTED_STRING, 0)                      /* TraceLoggingCountedString16 */
#define ETL_TLG_JSON           ETL_TLG_TYPE(ETL_IN_ANSI_STRING, ETL_TLG_OUT_JSON)          /* zero-terminated JSON text */
/* Integers, of their size. */
#define ETL_TLG_INT8           ETL_TLG_TYPE(ETL_IN_INT8, 0)
#define ETL_TLG_UINT8          ETL_TLG_TYPE(ETL_IN_UINT8, 0)
#define ETL_TLG_INT16          ETL_TLG_TYPE(ETL_IN_INT16, 0)
#define ETL_TLG_UINT16         ETL_TLG_TYPE(ETL_IN_UINT16, 0)
#define ETL_TLG_INT32          ETL_TLG_TYPE(ETL_IN_INT32, 0)
#define ETL_TLG_UINT32         ETL_TLG_TYPE(ETL_IN_UINT32, 0)
#define ETL_TLG_INT64          ETL_TLG_TYPE(ETL_IN_INT64, 0)
#define ETL_TLG_UINT64         ETL_TLG_TYPE(ETL_IN_UINT64, 0)
#define ETL_TLG_HEXINT8        ETL_TLG_TYPE(ETL_IN_UINT8, ETL_TLG_OUT_HEX)
#define ETL_TLG_HEXINT16       ETL_TLG_TYPE(ETL_IN_UINT16, ETL_TLG_OUT_HEX)
#define ETL_TLG_HEXINT32       ETL_TLG_TYPE(ETL_IN_HEXINT32, 0)
#define ETL_TLG_HEXINT64       ETL_TLG_TYPE(ETL_IN_HEXINT64, 0)
#define ETL_TLG_FLOAT          ETL_TLG_TYPE(ETL_IN_FLOAT, 0)                               /* 4-byte IEEE 754 */
#define ETL_TLG_DOUBLE         ETL_TLG_TYPE(ETL_IN_DOUBLE, 0)                              /* 8-byte IEEE 754 */
#define ETL_TLG_BOOL32         ETL_TLG_TYPE(ETL_IN_BOOLEAN, 0)                             /* 4 bytes, 0 false (Win32 BOOL) */
#define ETL_TLG_BOOL8          ETL_TLG_TYPE(ETL_IN_UINT8, ETL_TLG_OUT_BOOLEAN)             /* 1 byte (BOOLEAN, C bool) */
#define ETL_TLG_CHAR8          ETL_TLG_TYPE(ETL_IN_UINT8, ETL_TLG_OUT_STRING)              /* one 8-bit character */
#define ETL_TLG_CHAR16         ETL_TLG_TYPE(ETL_IN_UINT16, ETL_TLG_OUT_STRING)             /* one UTF-16 code unit */
/* A pointer of this process's size (8 bytes on 64-bit hosts), written as HexInt64 (HexInt32
   on 32-bit hosts), as TraceLoggingPointer does. */
#define ETL_TLG_POINTER        ETL_TLG_TYPE(ETL_IN_POINTER, 0)
#define ETL_TLG_CODE_POINTER   ETL_TLG_TYPE(ETL_IN_POINTER, ETL_TLG_OUT_CODE_POINTER)
#define ETL_TLG_PID            ETL_TLG_TYPE(ETL_IN_UINT32, ETL_TLG_OUT_PID)
#define ETL_TLG_TID            ETL_TLG_TYPE(ETL_IN_UINT32, ETL_TLG_OUT_TID)
#define ETL_TLG_PORT           ETL_TLG_TYPE(ETL_IN_UINT16, ETL_TLG_OUT_PORT)               /* 2 bytes, network byte order */
#define ETL_TLG_IPV4           ETL_TLG_TYPE(ETL_IN_UINT32, ETL_TLG_OUT_IPV4)               /* the 4 bytes of the address in order */
#define ETL_TLG_IPV6           ETL_TLG_TYPE(ETL_IN_BINARY, ETL_TLG_OUT_IPV6)               /* u16 16, then the 16 bytes */
#define ETL_TLG_SOCKET_ADDRESS ETL_TLG_TYPE(ETL_IN_BINARY, ETL_TLG_OUT_SOCKETADDRESS)      /* u16 size, then a SOCKADDR_IN(6) */
#define ETL_TLG_WIN32ERROR     ETL_TLG_TYPE(ETL_IN_UINT32, ETL_TLG_OUT_WIN32ERROR)
#define ETL_TLG_NTSTATUS       ETL_TLG_TYPE(ETL_IN_UINT32, ETL_TLG_OUT_NTSTATUS)
#define ETL_TLG_HRESULT        ETL_TLG_TYPE(ETL_IN_INT32, ETL_TLG_OUT_HRESULT)
#define ETL_TLG_FILETIME       ETL_TLG_TYPE(ETL_IN_FILETIME, 0)                            /* u64: 100 ns since 1601 */
#define ETL_TLG_FILETIME_UTC   ETL_TLG_TYPE(ETL_IN_FILETIME, ETL_TLG_OUT_DATETIME_UTC)
#define ETL_TLG_SYSTEMTIME     ETL_TLG_TYPE(ETL_IN_SYSTEMTIME, 0)                          /* eight u16: year, month, weekday, day, h, m, s, ms */
#define ETL_TLG_SYSTEMTIME_UTC ETL_TLG_TYPE(ETL_IN_SYSTEMTIME, ETL_TLG_OUT_DATETIME_UTC)
#define ETL_TLG_GUID           ETL_TLG_TYPE(ETL_IN_GUID, 0)                                /* 16 bytes, Windows layout (an etl_guid) */
#define ETL_TLG_SID            ETL_TLG_TYPE(ETL_IN_SID, 0)                                 /* 8 + 4 x sub-authority count bytes */
#define ETL_TLG_BINARY         ETL_TLG_TYPE(ETL_IN_BINARY, 0)                              /* u16 byte count, then the bytes */
#define ETL_TLG_COUNTED_BINARY ETL_TLG_TYPE(ETL_IN_COUNTED_BINARY, 0)                      /* the same; arrays of it decode */
/* No bytes of its own: its members, the fields that follow it, make its value. */
#define ETL_TLG_STRUCT         ETL_TLG_TYPE(ETL_IN_STRUCT, 0)

/* Arrays: a fixed count of elements (in the metadata), or a variable one (a u16 element count
   in the payload before the elements). Elements follow each other as single values would. */
enum etl_tlg_array { ETL_TLG_SCALAR = 0, ETL_TLG_FIXED = 1, ETL_TLG_VARIABLE = 2 };

/* One field of a TraceLogging event's definition; the fields of an event are an array in
   payload order, a struct's members following it (depth first). */
typedef struct etl_tlg_field {
    const char *name;          /* UTF-8, not empty; copied */
    uint16_t type;             /* ETL_TLG_*, or ETL_TLG_TYPE(in, out) */
    uint8_t array;             /* enum etl_tlg_array */
    uint8_t members;           /* ETL_TLG_STRUCT: its members, 1 to 127 (a member struct counts
                                  as one with everything in it); else 0 */
    uint16_t count;            /* ETL_TLG_FIXED: the elements, 1 to 65535; else 0 */
} etl_tlg_field;

typedef struct etl_tlg_event etl_tlg_event;

/*
 * Defines a TraceLogging event of provider p (registered with etl_provider_register_named):
 * its name (UTF-8, not empty), its descriptor d (level, keywords, opcode, and id, version and
 * task, which TraceLoggingWrite leaves 0; channel 0 means 11, TraceLogging's), or NULL for
 * level 5 (TraceLogging's default) and zeros; and its fields. The metadata is built now and
 * checked: an unknown in or out type, a struct without members or whose members run past
 * the fields, structs nested more than 32 deep, an array of Binary (which Windows' decoder
 * cannot read: use CountedBinary), a fixed array of no element, or metadata too large for a
 * record (ETL_MAX_RECORD_SIZE) are refused. ETL_OK, or ETL_FAILED with *out NULL and the
 * reason in err (errsize bytes; "out of memory" without memory).
 * The event belongs to p: valid until etl_tlg_event_free or etl_provider_unregister(p).
 */
ETL_API int etl_tlg_event_define(etl_tlg_event **out, etl_provider *p, const char *name,
                                 const etl_event_descriptor *d, const etl_tlg_field *fields, unsigned count,
                                 char *err, size_t errsize);
/* No write through ev may be running or start. NULL is allowed. */
ETL_API void etl_tlg_event_free(etl_tlg_event *ev);
/* 1 when the event (its level and keywords) would go to at least one session. */
ETL_API int etl_tlg_event_enabled(const etl_tlg_event *ev);
/*
 * Writes the event into every session of its provider it passes, as etl_provider_write does
 * (flags, results and errno the same): data is its payload, the fields' values laid out as
 * the ETL_TLG_* types say, in the order of the fields, in as many pieces as the caller likes.
 * The record carries the event's traits and metadata after any other extended item. A record
 * larger than a session's buffers (or than ETL_MAX_RECORD_SIZE) is refused: ETL_FAILED with
 * errno E2BIG, counted in that session's EventsLost. The payload is not checked against the
 * fields (etl_tlg_event_check does that).
 */
ETL_API int etl_tlg_event_write(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, unsigned flags);
/* The same with an LBR record after the event, as etl_provider_write_lbr. */
ETL_API int etl_tlg_event_write_lbr(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, unsigned flags,
                                    uint32_t filters, const etl_lbr_entry *entries, unsigned count);
/* The largest payload a record of the event can carry (the rest of ETL_MAX_RECORD_SIZE); a
   session's buffers may take less. */
ETL_API uint32_t etl_tlg_event_max_payload(const etl_tlg_event *ev);
/*
 * Checks that data is a payload of the event: decodes it by the event's own metadata, as a
 * reader would. ETL_OK; ETL_FAILED with err naming the field that does not fit and its byte
 * in the payload, or the bytes left after the last field.
 */
ETL_API int etl_tlg_event_check(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, char *err,
                                size_t errsize);

/* Enables provider (registered or not yet) in s with a level and keywords (replacing an
   earlier enable of it), or disables it (ETL_FAILED when it was not enabled). Stopping a
   session disables all its providers. */
ETL_API int etl_session_enable_provider(etl_session *s, const etl_guid *provider, uint8_t level,
                                        uint64_t match_any_keyword, uint64_t match_all_keyword);
/*
 * The same with EnableTraceEx2's enable properties: ETL_ENABLE_STACK_TRACE
 * (EVENT_ENABLE_PROPERTY_STACK_TRACE) gives every event of the provider that the session
 * takes the writer's stack (a STACK_TRACE64 extended item), as ETL_WRITE_STACK does for one
 * write; other sessions get the event without it. Other bits: ETL_FAILED, errno EINVAL.
 */
#define ETL_ENABLE_STACK_TRACE 0x4u
ETL_API int etl_session_enable_provider_ex(etl_session *s, const etl_guid *provider, uint8_t level,
                                           uint64_t match_any_keyword, uint64_t match_all_keyword,
                                           uint32_t enable_properties);
ETL_API int etl_session_disable_provider(etl_session *s, const etl_guid *provider);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_PROVIDER_H */
