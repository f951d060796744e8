/* SPDX-License-Identifier: MIT */
/*
 * profload: the workload profbench records, a program that keeps two threads busy for the given
 * number of seconds in many functions of its own and in three shared libraries:
 *
 *   profload SECONDS
 *
 * The main thread turns among five hot functions of its own (a checksum, a sieve, a matrix
 * product, a string hash, a recursive walk), qsort and snprintf/strtod of libc, and compress2
 * and uncompress of zlib; the second thread inserts rows into an in-memory SQLite database and
 * queries them back. Built with -g and frame pointers, so that its stacks walk and its functions
 * have names and lines. Prints a checksum of the work so that none of it is optimized away.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static volatile int stop;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static uint64_t work_checksum(const uint8_t *p, size_t n)
{
    uint64_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}

__attribute__((noinline)) static uint64_t work_sieve(unsigned n)
{
    uint8_t *c = calloc(n + 1, 1);
    uint64_t primes = 0;
    if (!c) return 0;
    for (unsigned i = 2; i <= n; i++) {
        if (c[i]) continue;
        primes++;
        for (unsigned j = 2 * i; j <= n; j += i) c[j] = 1;
    }
    free(c);
    return primes;
}

#define M 48
__attribute__((noinline)) static double work_matrix(unsigned seed)
{
    static double a[M][M], b[M][M], c[M][M];
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < M; j++) {
            a[i][j] = (double)((i * 31 + j * 7 + seed) % 97) / 97.0;
            b[i][j] = (double)((i * 13 + j * 17 + seed) % 89) / 89.0;
        }
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < M; j++) {
            double s = 0;
            for (unsigned k = 0; k < M; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    return c[seed % M][(seed / M) % M];
}

__attribute__((noinline)) static uint64_t work_hash_strings(unsigned seed)
{
    char buf[64];
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < 2000; i++) {
        int n = snprintf(buf, sizeof buf, "key-%u-%u-%.3f", seed, i, (double)i / 7.0);
        for (int k = 0; k < n; k++) h = (h ^ (unsigned char)buf[k]) * 0x100000001b3ull;
        h += (uint64_t)strtod(buf + n - 5, NULL);
    }
    return h;
}

__attribute__((noinline)) static uint64_t work_walk(unsigned depth, uint64_t x)
{
    if (depth == 0) {
        for (unsigned i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
        return x;
    }
    return work_walk(depth - 1, x ^ depth) + (depth & 1);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

__attribute__((noinline)) static uint64_t work_sort(unsigned seed)
{
    enum { N = 20000 };
    static uint32_t v[N];
    uint64_t s = seed | 1;
    for (unsigned i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        v[i] = (uint32_t)s;
    }
    qsort(v, N, sizeof v[0], cmp_u32);
    return v[N / 2];
}

__attribute__((noinline)) static uint64_t work_zlib(unsigned seed)
{
    enum { N = 64 * 1024 };
    static uint8_t in[N], out[N + N / 8 + 64], back[N];
    uLongf clen = sizeof out, blen = sizeof back;
    for (unsigned i = 0; i < N; i++) in[i] = (uint8_t)((i * 7 + seed) % 61 + (i / 251) % 5);
    if (compress2(out, &clen, in, N, 6) != Z_OK) return 0;
    if (uncompress(back, &blen, out, clen) != Z_OK) return 0;
    return work_checksum(back, blen) + clen;
}

/* The second thread: SQLite inserts and queries, in batches. */
static void *sqlite_thread(void *arg)
{
    uint64_t *result = arg, sum = 0;
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *sel = NULL;
    unsigned batch = 0;

    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
    sqlite3_exec(db, "create table t(k integer primary key, g integer, v text)", NULL, NULL, NULL);
    sqlite3_exec(db, "create index t_g on t(g)", NULL, NULL, NULL);
    if (sqlite3_prepare_v2(db, "insert or replace into t values(?, ?, ?)", -1, &ins, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "select count(*), sum(length(v)) from t where g = ?", -1, &sel, NULL) != SQLITE_OK)
        goto out;
    while (!stop) {
        char text[48];
        sqlite3_exec(db, "begin", NULL, NULL, NULL);
        for (unsigned i = 0; i < 2000; i++) {
            unsigned k = (batch * 2000 + i) % 50000;
            snprintf(text, sizeof text, "row %u of batch %u", k, batch);
            sqlite3_bind_int(ins, 1, (int)k);
            sqlite3_bind_int(ins, 2, (int)(k % 97));
            sqlite3_bind_text(ins, 3, text, -1, SQLITE_TRANSIENT);
            sqlite3_step(ins);
            sqlite3_reset(ins);
        }
        sqlite3_exec(db, "commit", NULL, NULL, NULL);
        for (unsigned g = 0; g < 97; g += 3) {
            sqlite3_bind_int(sel, 1, (int)g);
            if (sqlite3_step(sel) == SQLITE_ROW) sum += (uint64_t)sqlite3_column_int64(sel, 1);
            sqlite3_reset(sel);
        }
        batch++;
    }
out:
    sqlite3_finalize(ins);
    sqlite3_finalize(sel);
    sqlite3_close(db);
    *result = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0, end;
    uint64_t sum = 0, sq = 0;
    unsigned round = 0;
    pthread_t th;
    int have_thread;

    if (argc != 2 || !(seconds > 0)) {
        fputs("usage: profload SECONDS\n", stderr);
        return 2;
    }
    have_thread = pthread_create(&th, NULL, sqlite_thread, &sq) == 0;
    end = now_s() + seconds;
    while (now_s() < end) {
        static uint8_t block[256 * 1024];
        for (size_t i = 0; i < sizeof block; i++) block[i] = (uint8_t)(i * 131 + round);
        sum += work_checksum(block, sizeof block);
        sum += work_sieve(400000);
        sum += (uint64_t)(work_matrix(round) * 1000);
        sum += work_hash_strings(round);
        sum += work_walk(40 + round % 20, round);
        sum += work_sort(round);
        sum += work_zlib(round);
        round++;
    }
    stop = 1;
    if (have_thread) pthread_join(th, NULL);
    printf("profload: %u rounds, checksum %llx, sqlite %llu\n", round, (unsigned long long)sum,
           (unsigned long long)sq);
    return 0;
}
