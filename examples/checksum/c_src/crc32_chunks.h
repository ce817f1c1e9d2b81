/* The CRC-32 job of Checksum.Native, written in C++ (crc32_chunks.cpp),
 * seen from the C file that registers the library's NIFs. */
#ifndef CRC32_CHUNKS_H
#define CRC32_CHUNKS_H

#include <wb_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* crc32_chunks(Data, ChunkBytes): the CRC-32 (the value of
 * erlang:crc32/1) of each ChunkBytes-long piece of Data, the last one
 * shorter, as a binary of 32-bit big-endian values. */
extern wb_job_type crc32_chunks_job;

#ifdef __cplusplus
}
#endif

#endif
