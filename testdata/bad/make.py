#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Makes the damaged files of testdata/bad/ from the bundled samples (run once, from this
# directory; the files are committed). README.md says what each one is and what a reader
# must do with it.
import struct

SAMPLES = '../samples/'


def sample(name):
    with open(SAMPLES + name, 'rb') as f:
        return bytearray(f.read())


def put32(d, off, v):
    struct.pack_into('<I', d, off, v)


def write(name, d):
    with open(name, 'wb') as f:
        f.write(d)


# The base of most files: the first four 8 KiB buffers of krabsetw_powershell.etl (a real
# Windows 11 trace; 32 KiB, 20 events): buffer 0 the header buffer (2 events), buffer 1 at
# 8192 (5 events), buffer 2 at 16384 (6 events, records at 16456, 18000, 19544, 19624, 20976,
# 22344), buffer 3 at 24576 (7 events). A file of whole buffers reads without damage.
base = sample('krabsetw_powershell.etl')[:4 * 8192]

write('zero-length.etl', b'')
# The logfile header record (at 72, 396 bytes) cut at byte 200.
write('truncated-logfile-header.etl', base[:200])
# Cut in the middle of buffer 2's header (it starts at 16384).
write('truncated-buffer-header.etl', base[:16384 + 40])
# Cut inside buffer 2, in its fourth record (19624..20976): three of its records are whole.
write('truncated-in-buffer.etl', base[:20000])

# Buffer 2's fourth record (an EVENT_HEADER, its size in the marker's low word) claims 8192
# bytes: past the buffer's used size (7328).
d = bytearray(base)
put32(d, 19624, (struct.unpack_from('<I', d, 19624)[0] & 0xFFFF0000) | 0x2000)
write('event-length-past-buffer.etl', d)

# Buffer 2's fourth record starts with 0x00 where the 0xC0 marker of a trace header is.
d = bytearray(base)
d[19624 + 3] = 0x00
write('record-bad-marker.etl', d)

# Buffer 2's fourth record starts with 0xFFFFFFFF, the fill that ends a buffer's records, though
# it lies inside the used area (7328 bytes): the records after it are unreadable, and a reader
# must say so rather than end the buffer there in silence.
d = bytearray(base)
put32(d, 19624, 0xFFFFFFFF)
write('record-header-0xffffffff-inside-used-area.etl', d)

# Buffer 2's used size (WMI_BUFFER_HEADER.Offset, at +0x30) is 9000: more than its 8192 bytes.
d = bytearray(base)
put32(d, 16384 + 0x30, 9000)
write('used-size-past-buffer-size.etl', d)

# Buffer 2's BufferSize (at +0x00) is 8000, not a power of two (nor the file's 8192).
d = bytearray(base)
put32(d, 16384 + 0x00, 8000)
write('buffer-size-not-power-of-two.etl', d)

# perfview_SelfDescribingSingleEvent.etl (7403 bytes: a 1024-byte header buffer, then two
# XPRESS-compressed buffers at 1024 and 7177): 32 bytes of the first compressed buffer's
# stream, from byte 1024 + 0x48 + 64, set to 0xFF.
d = sample('perfview_SelfDescribingSingleEvent.etl')
d[1024 + 0x48 + 64:1024 + 0x48 + 96] = b'\xff' * 32
write('bad-xpress-stream.etl', d)
