/* SPDX-License-Identifier: MIT */
/* The SQLite loader's connections: prepared inserts, rows batched into multi-row INSERTs, errors. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load/load.h"

static const char *const stmt_sql[S_COUNT] = {
    [S_EVENT] = "INSERT INTO events VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)",
    [S_EXT] = "INSERT INTO event_ext VALUES (?1,?2,?3,?4,?5)",
    [S_PROVIDER] = "INSERT INTO providers VALUES (?1,?2,?3)",
    [S_PROCESS] = "INSERT INTO processes VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)",
    [S_THREAD] = "INSERT INTO threads VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)",
    [S_IMAGE] = "INSERT INTO images VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
    [S_CSWITCH] = "INSERT INTO cswitches VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
    [S_READY] = "INSERT INTO ready_threads VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
    [S_SAMPLE] = "INSERT INTO samples VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)",
    [S_STACK] = "INSERT INTO stacks VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    [S_FRAME] = "INSERT INTO stack_frames VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [S_LBR] = "INSERT INTO lbr VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [S_LBR_ENTRY] = "INSERT INTO lbr_entries VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
    [S_LOST] = "INSERT INTO lost VALUES (?1,?2,?3,?4,?5,?6)",
    [S_DISK_IO] = "INSERT INTO disk_io VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
    [S_SYSCALL] = "INSERT INTO syscalls VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [S_ISR_DPC] = "INSERT INTO isr_dpc VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
    [S_PAGE_FAULT] = "INSERT INTO page_faults VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [S_TCPIP] = "INSERT INTO tcpip VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)",
    [S_FILE_IO] = "INSERT INTO file_io VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)",
    [S_VIRTUAL_ALLOC] = "INSERT INTO virtual_alloc VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
    [S_MAP_FILE] = "INSERT INTO file_maps VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    [S_PROCESS_COUNTERS] = ("INSERT INTO process_counters VALUES "
                            "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)"),
    [S_HARD_FAULT] = "INSERT INTO hard_faults VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
    [S_NAME] = "INSERT INTO event_names VALUES (?1,?2,?3,?4,?5,?6)",
    [S_NAME_FIELD] = "INSERT INTO event_name_fields VALUES (?1,?2,?3,?4,?5)",
    [S_FUNCTION] = "INSERT INTO functions VALUES (?1,?2,?3,?4,?5)",
};

const int etl_sink_columns[S_COUNT] = {
    [S_EVENT] = 23, [S_EXT] = 5, [S_PROVIDER] = 3, [S_PROCESS] = 17, [S_THREAD] = 19, [S_IMAGE] = 14,
    [S_CSWITCH] = 15, [S_READY] = 8, [S_SAMPLE] = 17, [S_STACK] = 12, [S_FRAME] = 9, [S_LBR] = 9,
    [S_LBR_ENTRY] = 8, [S_LOST] = 6, [S_DISK_IO] = 15, [S_SYSCALL] = 9, [S_ISR_DPC] = 10, [S_PAGE_FAULT] = 9,
    [S_TCPIP] = 17, [S_FILE_IO] = 16, [S_VIRTUAL_ALLOC] = 10, [S_MAP_FILE] = 12, [S_PROCESS_COUNTERS] = 19,
    [S_HARD_FAULT] = 13,
    [S_NAME] = 6, [S_NAME_FIELD] = 5, [S_FUNCTION] = 5,
};

int etl_sink_error(struct sink *k, const char *what)
{
    if (!k->failed && k->backend && !k->db)
        etl_load_message(k->l, ETL_FATAL, 0, NULL, -1, "%s: %s", k->label, what);
    else if (!k->failed)
        etl_load_message(k->l, ETL_FATAL, 0, NULL, -1, "%s: %s: %s", k->label, what,
                         k->db ? sqlite3_errmsg(k->db) : "out of memory");
    k->failed = 1;
    return -1;
}

int etl_sink_exec(struct sink *k, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(k->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    if (!k->failed) etl_load_message(k->l, ETL_FATAL, 0, NULL, -1, "%s: %s", k->label, msg ? msg : sqlite3_errmsg(k->db));
    sqlite3_free(msg);
    k->failed = 1;
    return -1;
}

int etl_sink_step(struct sink *k, enum stmt_id id)
{
    sqlite3_stmt *s = k->stmt[id];
    int rc = sqlite3_step(s);

    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return etl_sink_error(k, "insert");
    return 0;
}

/* The tables whose rows are batched, and their column counts. */
static const struct { enum stmt_id id; int cols; } batched[] = {
    { S_CSWITCH, 15 }, { S_READY, 8 }, { S_SAMPLE, 17 }, { S_STACK, 12 }, { S_FRAME, 9 }, { S_LBR_ENTRY, 8 },
    { S_DISK_IO, 15 }, { S_SYSCALL, 9 }, { S_ISR_DPC, 10 }, { S_PAGE_FAULT, 9 },
    { S_VIRTUAL_ALLOC, 10 }, { S_MAP_FILE, 12 }, { S_PROCESS_COUNTERS, 19 },
    { S_HARD_FAULT, 13 },
};

/* "INSERT INTO table VALUES (?,...),..." for ROW_BATCH rows, from the single-row statement. */
static char *multi_row_sql(const char *single, int cols)
{
    const char *values = strstr(single, " VALUES ");
    size_t head = (size_t)(values - single) + strlen(" VALUES "), cap = head + (size_t)ROW_BATCH * ((size_t)cols * 2 + 3) + 1;
    char *sql = malloc(cap);
    size_t n = head;

    if (!sql) return NULL;
    memcpy(sql, single, head);
    for (unsigned r = 0; r < ROW_BATCH; r++) {
        if (r) sql[n++] = ',';
        sql[n++] = '(';
        for (int c = 0; c < cols; c++) {
            if (c) sql[n++] = ',';
            sql[n++] = '?';
        }
        sql[n++] = ')';
    }
    sql[n] = '\0';
    return sql;
}

/* The row buffers of the tables that are not batched: one row, inserted at its end. */
static int single_rows(struct sink *k)
{
    for (int i = 0; i < S_COUNT; i++) {
        if (k->rows[i] || i == S_EVENT) continue;
        if (!(k->rows[i] = calloc(1, sizeof *k->rows[i]))) return etl_sink_error(k, "out of memory");
        k->rows[i]->cols = etl_sink_columns[i];
    }
    return 0;
}

int etl_sink_prepare(struct sink *k)
{
    if (k->backend) return single_rows(k);
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v3(k->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &k->stmt[i], NULL) != SQLITE_OK)
            return etl_sink_error(k, "prepare");
    for (size_t i = 0; i < sizeof batched / sizeof batched[0]; i++) {
        struct rowbuf *rb = calloc(1, sizeof *rb);
        char *sql = multi_row_sql(stmt_sql[batched[i].id], batched[i].cols);
        int rc = rb && sql ? sqlite3_prepare_v3(k->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &rb->multi, NULL) : SQLITE_NOMEM;
        free(sql);
        if (rc != SQLITE_OK) {
            free(rb);
            return etl_sink_error(k, "prepare");
        }
        rb->cols = batched[i].cols;
        k->rows[batched[i].id] = rb;
    }
    return single_rows(k);
}

static void bind_row(sqlite3_stmt *s, int base, const struct rowval *r, int cols)
{
    for (int c = 0; c < cols; c++) {
        if (r[c].type == 1) sqlite3_bind_int64(s, base + c + 1, r[c].i);
        else if (r[c].type == 2) sqlite3_bind_text(s, base + c + 1, r[c].t, -1, SQLITE_STATIC);
        else if (r[c].type == 3) sqlite3_bind_blob(s, base + c + 1, r[c].t, (int)r[c].i, SQLITE_STATIC);
        else if (r[c].type == 4) sqlite3_bind_text(s, base + c + 1, r[c].t, (int)r[c].i, SQLITE_STATIC);
        else sqlite3_bind_null(s, base + c + 1);
    }
}

void etl_sink_bind_row(sqlite3_stmt *s, const struct rowval *r, int cols)
{
    bind_row(s, 0, r, cols);
}

/* The row is complete: to the back end; into SQLite at once (a table not batched) or with its
   batch when that is full. */
int etl_sink_row_end(struct sink *k, enum stmt_id id)
{
    struct rowbuf *rb = k->rows[id];
    int rc;

    if (k->backend) {
        if (k->backend->row(k->backend->arg, id, rb->v[0], rb->cols) == 0) return 0;
        k->failed = 1;
        return -1;
    }
    if (!rb->multi) {
        bind_row(k->stmt[id], 0, rb->v[0], rb->cols);
        return etl_sink_step(k, id);
    }
    if (++rb->n < ROW_BATCH) return 0;
    for (unsigned r = 0; r < ROW_BATCH; r++) bind_row(rb->multi, (int)r * rb->cols, rb->v[r], rb->cols);
    rc = sqlite3_step(rb->multi);
    sqlite3_reset(rb->multi);
    rb->n = 0;
    return rc == SQLITE_DONE ? 0 : etl_sink_error(k, "insert");
}

int etl_sink_flush(struct sink *k)
{
    for (int id = 0; id < S_COUNT; id++) {
        struct rowbuf *rb = k->rows[id];
        for (unsigned r = 0; rb && r < rb->n; r++) {
            bind_row(k->stmt[id], 0, rb->v[r], rb->cols);
            if (etl_sink_step(k, (enum stmt_id)id) != 0) return -1;
        }
        if (rb) rb->n = 0;
    }
    return 0;
}

void etl_sink_finalize(struct sink *k)
{
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(k->stmt[i]);
        k->stmt[i] = NULL;
        if (k->rows[i]) sqlite3_finalize(k->rows[i]->multi);
        free(k->rows[i]);
        k->rows[i] = NULL;
    }
}

void etl_sink_close(struct sink *k)
{
    etl_sink_finalize(k);
    if (k->db) sqlite3_close(k->db);
    k->db = NULL;
    for (int i = 0; i < 4; i++) {
        free(k->scratch[i]);
        k->scratch[i] = NULL;
    }
}

double etl_load_thread_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec / 1e9 : 0;
}

int etl_sink_rv_string(struct sink *k, struct rowval *r, int col, const etl_string *str, unsigned slot)
{
    size_t n;

    if (!str->data) {
        rv_null(r, col);
        return 0;
    }
    n = etl_string_to_utf8(str, k->scratch[slot], k->scratch_cap[slot]);
    if (n >= k->scratch_cap[slot]) {
        size_t cap = n + 1 < 256 ? 256 : n + 1;
        char *p = realloc(k->scratch[slot], cap);
        if (!p) return -1;
        k->scratch[slot] = p;
        k->scratch_cap[slot] = cap;
        n = etl_string_to_utf8(str, p, cap);
    }
    r[col - 1].type = 4;
    r[col - 1].t = k->scratch[slot];
    r[col - 1].i = (int64_t)n;
    return 0;
}

/* The name is the image map's: it outlives the batch. */
void etl_load_rv_image(const struct input *in, struct rowval *r, int i, int64_t pid, uint64_t addr, int64_t ts)
{
    etl_image_info info;

    if (in->map && etl_image_map_find(in->map, pid < 0 ? 0 : (uint32_t)pid, addr, ts, &info) == 1) {
        rv_text(r, i, info.base_name);
        rv_u64(r, i + 1, addr - info.base);
    }
    else {
        rv_null(r, i);
        rv_null(r, i + 1);
    }
}

int64_t etl_sink_max(struct sink *k, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = 0;

    if (sqlite3_prepare_v2(k->db, sql, -1, &s, NULL) != SQLITE_OK) return etl_sink_error(k, "reading");
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}
