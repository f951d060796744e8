/* SPDX-License-Identifier: MIT */
/* Unit tests of the kernel state analyses (reader/kstate.c): DiskIo pairing, the thread on each
   processor, names over time. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "kstory.h"

static etl_kernel_event disk(int kclass, uint64_t irp)
{
    etl_kernel_event ke;

    memset(&ke, 0, sizeof ke);
    ke.kclass = kclass;
    ke.u.disk_io.irp = irp;
    return ke;
}

START_TEST(pairing_by_irp)
{
    etl_disk_io_pairing *p = etl_disk_io_pairing_new();
    etl_kernel_event init = disk(ETL_KCLASS_DISK_IO_INIT, 0xA1), done = disk(ETL_KCLASS_DISK_IO, 0xA1);
    etl_kernel_event other = disk(ETL_KCLASS_DISK_IO, 0xC3), cs = disk(ETL_KCLASS_CSWITCH, 0xA1);
    etl_disk_io_issue is;

    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &done, 5, 50, &is), 0); /* before any issue */
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &init, 10, 100, NULL), ETL_OK);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &cs, 11, 110, &is), 0);   /* other classes: ignored */
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &other, 12, 120, &is), 0);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &done, 13, 130, &is), 1);
    ck_assert_int_eq(is.time, 10);
    ck_assert_int_eq(is.tag, 100);
    /* Taken: a second completion of the same Irp finds nothing. */
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &done, 14, 140, &is), 0);
    /* Irps are reused: the latest issue is the one a completion takes. */
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &init, 15, 150, NULL), ETL_OK);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &init, 16, 160, NULL), ETL_OK);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &done, 17, 170, &is), 1);
    ck_assert_int_eq(is.tag, 160);
    /* Irp 0 is never paired. */
    init = disk(ETL_KCLASS_DISK_IO_INIT, 0);
    done = disk(ETL_KCLASS_DISK_IO, 0);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &init, 18, 180, NULL), ETL_OK);
    ck_assert_int_eq(etl_disk_io_pairing_add(p, &done, 19, 190, &is), 0);
    etl_disk_io_pairing_free(p);
    etl_disk_io_pairing_free(NULL);
}
END_TEST

/* Many requests in flight, completed out of order, with the table growing past taken slots. */
START_TEST(pairing_many)
{
    etl_disk_io_pairing *p = etl_disk_io_pairing_new();
    enum { N = 20000 };
    etl_disk_io_issue is;

    for (int round = 0; round < 3; round++) {
        for (uint64_t i = 1; i <= N; i++) {
            etl_kernel_event ke = disk(ETL_KCLASS_DISK_IO_INIT, i * 0x40);
            ck_assert_int_eq(etl_disk_io_pairing_add(p, &ke, (int64_t)i, (int64_t)(i + 1000000 * round), NULL), ETL_OK);
        }
        for (uint64_t k = 0; k < N; k++) {
            uint64_t i = (k * 7919) % N + 1; /* 7919 is prime to N: every request once */
            etl_kernel_event ke = disk(ETL_KCLASS_DISK_IO, i * 0x40);
            ck_assert_int_eq(etl_disk_io_pairing_add(p, &ke, 0, 0, &is), 1);
            ck_assert_int_eq(is.time, (int64_t)i);
            ck_assert_int_eq(is.tag, (int64_t)(i + 1000000 * round));
        }
    }
    etl_disk_io_pairing_free(p);
}
END_TEST

START_TEST(cpu_threads)
{
    etl_cpu_threads *t = etl_cpu_threads_new();
    etl_kernel_event ke;
    etl_event ev;

    ck_assert_ptr_nonnull(t);
    memset(&ev, 0, sizeof ev);
    memset(&ke, 0, sizeof ke);
    ck_assert_int_eq(etl_cpu_threads_running(t, 0), -1);
    ke.kclass = ETL_KCLASS_CSWITCH;
    ke.u.cswitch.new_tid = 4001;
    ev.cpu = 3;
    ck_assert_int_eq(etl_cpu_threads_add(t, &ev, &ke), ETL_OK);
    ck_assert_int_eq(etl_cpu_threads_running(t, 3), 4001);
    ck_assert_int_eq(etl_cpu_threads_running(t, 2), -1);
    ke.u.cswitch.new_tid = 0; /* the idle thread is a thread */
    ck_assert_int_eq(etl_cpu_threads_add(t, &ev, &ke), ETL_OK);
    ck_assert_int_eq(etl_cpu_threads_running(t, 3), 0);
    ev.cpu = 500;
    ke.u.cswitch.new_tid = 77;
    ck_assert_int_eq(etl_cpu_threads_add(t, &ev, &ke), ETL_OK);
    ck_assert_int_eq(etl_cpu_threads_running(t, 500), 77);
    ck_assert_int_eq(etl_cpu_threads_running(t, 3), 0);
    ck_assert_int_eq(etl_cpu_threads_running(t, 100000), -1);
    /* Other classes say nothing of who runs. */
    ke.kclass = ETL_KCLASS_READY_THREAD;
    ke.u.cswitch.new_tid = 99;
    ck_assert_int_eq(etl_cpu_threads_add(t, &ev, &ke), ETL_OK);
    ck_assert_int_eq(etl_cpu_threads_running(t, 500), 77);
    etl_cpu_threads_free(t);
    etl_cpu_threads_free(NULL);
}
END_TEST

/* The story read in time order, each analysis fed as a loader would. */
START_TEST(story)
{
    size_t size;
    uint8_t *file = kstory_file(&size);
    etl_reader *r = NULL;
    etl_cpu_threads *t = etl_cpu_threads_new();
    etl_disk_io_pairing *p = etl_disk_io_pairing_new();
    int64_t syscall_tid[3] = { -2, -2, -2 }, issue_of[KS_EVENTS];
    unsigned n = 0, nsys = 0;
    etl_event ev;
    int rc;

    ck_assert_ptr_nonnull(file);
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        etl_disk_io_issue is;
        int64_t i = ev.timestamp - KS_T0;
        if (i < 0) continue; /* the header buffer's */
        ck_assert(i < KS_EVENTS);
        issue_of[i] = -1;
        if (etl_kernel_decode(&ev, &ke) != 1) continue;
        n++;
        ck_assert_int_eq(etl_cpu_threads_add(t, &ev, &ke), ETL_OK);
        if (ke.kclass == ETL_KCLASS_SYSCALL_ENTER || ke.kclass == ETL_KCLASS_SYSCALL_EXIT)
            syscall_tid[nsys++] = etl_cpu_threads_running(t, ev.cpu);
        rc = etl_disk_io_pairing_add(p, &ke, ev.timestamp, i, &is);
        ck_assert_int_ge(rc, 0);
        if (rc == 1) issue_of[i] = is.tag;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_uint_eq(n, KS_EVENTS);
    ck_assert_uint_eq(nsys, 3);
    ck_assert_int_eq(syscall_tid[0], -1);   /* cpu 1 before its first CSwitch */
    ck_assert_int_eq(syscall_tid[1], 4001);
    ck_assert_int_eq(syscall_tid[2], 0);
    ck_assert_int_eq(issue_of[11], 9);
    ck_assert_int_eq(issue_of[12], -1);
    ck_assert_int_eq(issue_of[13], -1);
    ck_assert_int_eq(issue_of[15], 14);
    etl_reader_close(r);
    etl_cpu_threads_free(t);
    etl_disk_io_pairing_free(p);
    free(file);
}
END_TEST

START_TEST(names)
{
    size_t size;
    uint8_t *file = kstory_file(&size);
    etl_reader *r = NULL;
    etl_name_map *m = etl_name_map_new();
    etl_event ev;
    int rc;

    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_null(etl_name_map_process(m, 1000, KS_T0)); /* empty */
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) ck_assert_int_eq(etl_name_map_add(m, &ev), ETL_OK);
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_str_eq(etl_name_map_process(m, 4, KS_T0), "System");
    ck_assert_str_eq(etl_name_map_process(m, 4, KS_T0 + 100), "System");
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0), "app.exe");     /* the first after */
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 1), "app.exe"); /* at */
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 17), "app.exe");
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 18), "app2.exe");
    ck_assert_str_eq(etl_name_map_process(m, 2000, KS_T0), "late.exe");    /* only a rundown */
    ck_assert_ptr_null(etl_name_map_process(m, 999, KS_T0 + 5));
    ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0 + 2), "worker");
    ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0 + 15), "worker");
    ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0 + 16), "renamed");
    ck_assert_str_eq(etl_name_map_thread(m, 4001, 0), "worker");
    ck_assert_ptr_null(etl_name_map_thread(m, 4002, KS_T0 + 5)); /* its event has no name */
    ck_assert_ptr_null(etl_name_map_thread(m, 1000, KS_T0 + 5)); /* a pid is not a tid */
    etl_reader_close(r);
    etl_name_map_free(m);
    etl_name_map_free(NULL);
    free(file);
}
END_TEST

/* Fed in any order (the later half first, a query between): the same answers. */
START_TEST(names_any_order)
{
    size_t size;
    uint8_t *file = kstory_file(&size);
    etl_name_map *m = etl_name_map_new();
    etl_event ev;
    int rc;

    for (int pass = 0; pass < 2; pass++) {
        etl_reader *r = NULL;
        ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
        while ((rc = etl_reader_next(r, &ev)) == ETL_OK)
            if ((ev.timestamp - KS_T0 >= 10) == (pass == 0)) ck_assert_int_eq(etl_name_map_add(m, &ev), ETL_OK);
        ck_assert_int_eq(rc, ETL_EOF);
        etl_reader_close(r);
        if (pass == 0) {
            ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 1), "app.exe"); /* End's name, after */
            ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0), "renamed");
        }
    }
    ck_assert_str_eq(etl_name_map_process(m, 4, KS_T0), "System");
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 17), "app.exe");
    ck_assert_str_eq(etl_name_map_process(m, 1000, KS_T0 + 18), "app2.exe");
    ck_assert_str_eq(etl_name_map_process(m, 2000, KS_T0 + 1), "late.exe");
    ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0 + 2), "worker");
    ck_assert_str_eq(etl_name_map_thread(m, 4001, KS_T0 + 16), "renamed");
    etl_name_map_free(m);
    free(file);
}
END_TEST

/* The exec story: at an exec (a Process End and a Process Start at one time) the new program's
   name is in force, whatever the order the two were fed in. */
static void exec_names_check(etl_name_map *m)
{
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0), "etlrecord");     /* the first after */
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0 + 5), "etlrecord");
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0 + 6), "sh");         /* at the exec */
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0 + 7), "sh");
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0 + 8), "demo");
    ck_assert_str_eq(etl_name_map_process(m, 3000, KS_T0 + 100), "demo");     /* after its end */
    ck_assert_str_eq(etl_name_map_process(m, 3002, KS_T0 + 16), "demo");
    ck_assert_str_eq(etl_name_map_process(m, 3002, KS_T0 + 17), "dd");
    ck_assert_str_eq(etl_name_map_process(m, 3002, KS_T0 + 21), "dd");
    ck_assert_str_eq(etl_name_map_process(m, 2990, KS_T0 + 12), "etlrecord");
}

START_TEST(names_exec)
{
    size_t size;
    uint8_t *file = kstory_exec_file(&size);

    ck_assert_ptr_nonnull(file);
    /* pass 0: in time order; 1: every Start first (an exec's Start before its End); 2: every
       Start last */
    for (int order = 0; order < 3; order++) {
        etl_name_map *m = etl_name_map_new();
        for (int pass = 0; pass < (order ? 2 : 1); pass++) {
            etl_reader *r = NULL;
            etl_event ev;
            int rc;
            ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
            while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
                int start = ev.opcode == 1;
                if (order == 0 || start == ((pass == 0) == (order == 1))) ck_assert_int_eq(etl_name_map_add(m, &ev), ETL_OK);
            }
            ck_assert_int_eq(rc, ETL_EOF);
            etl_reader_close(r);
        }
        exec_names_check(m);
        etl_name_map_free(m);
    }
    free(file);
}
END_TEST

/* The runs of the exec story: each image a pid ran is one, its End (an exec's or the exit's)
   with it; rundowns in the run they fall in. */
START_TEST(process_runs)
{
    size_t size;
    uint8_t *file = kstory_exec_file(&size);
    etl_reader *r = NULL;
    etl_process_runs *pr = etl_process_runs_new();
    etl_event ev;
    int64_t tag = 0, run[KSX_EVENTS + 2];
    const char *kname[KSX_EVENTS + 2];
    int rc;

    ck_assert_ptr_nonnull(file);
    ck_assert_ptr_nonnull(pr);
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        ck_assert_int_lt(tag, KSX_EVENTS + 2);
        run[tag] = -1;
        kname[tag] = NULL;
        if (etl_kernel_decode(&ev, &ke) == 1) {
            int got = etl_process_runs_add(pr, &ke, tag, &run[tag]);
            ck_assert_int_eq(got, ke.kclass == ETL_KCLASS_PROCESS);
            if (got) kname[tag] = ke.name;
        }
        tag++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(tag, KSX_EVENTS + 2);
    /* tags: the header buffer's two events, then the story's (+0 is 2, the exec at +6 is 8 and 9) */
    ck_assert_int_eq(run[2], 2);                          /* DCStart 2990 */
    ck_assert_int_eq(run[3], 3);                          /* Start 3000 etlrecord (the fork) */
    ck_assert_str_eq(kname[8], "Process/End");
    ck_assert_int_eq(run[8], 3);                          /* the exec's End: etlrecord's run */
    ck_assert_int_eq(run[9], 9);                          /* its Start: sh's */
    ck_assert_int_eq(run[11], 9);                         /* sh's End at the next exec */
    ck_assert_int_eq(run[12], 12);                        /* demo */
    ck_assert_int_eq(run[18], 18);                        /* Start 3002 demo (the fork) */
    ck_assert_int_eq(run[21], 18);                        /* its exec's End */
    ck_assert_int_eq(run[22], 22);                        /* dd */
    ck_assert_int_eq(run[27], 22);                        /* dd's End at its exit */
    ck_assert_int_eq(run[29], 12);                        /* demo's End at its exit */
    ck_assert_int_eq(run[30], 2);                         /* DCEnd 2990 */
    etl_reader_close(r);
    etl_process_runs_free(pr);
    etl_process_runs_free(NULL);
    free(file);
}
END_TEST

/* Pids used again: another key, an event after an End; a Defunct stays with the End it follows. */
START_TEST(process_runs_reuse)
{
    etl_process_runs *pr = etl_process_runs_new();
    etl_kernel_event ke;
    int64_t run = -1;

    memset(&ke, 0, sizeof ke);
    ke.kclass = ETL_KCLASS_CSWITCH;
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 1, &run), 0);
    ck_assert_int_eq(run, -1);
    ke.kclass = ETL_KCLASS_PROCESS;
    ke.u.process.pid = 7;
    ke.u.process.unique_process_key = 0xA0;
    ke.name = "Process/DCStart";
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 10, &run), 1);
    ck_assert_int_eq(run, 10);
    ke.name = "Process/End";
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 11, &run), 1);
    ck_assert_int_eq(run, 10);
    ke.name = "Process/Defunct";
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 12, &run), 1);
    ck_assert_int_eq(run, 10);
    ke.name = "Process/DCEnd";                            /* after an End: a pid used again */
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 13, &run), 1);
    ck_assert_int_eq(run, 13);
    ke.u.process.unique_process_key = 0xB0;               /* another process's key */
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 14, &run), 1);
    ck_assert_int_eq(run, 14);
    /* many pids: the table grows and keeps each */
    for (uint32_t pid = 100; pid < 5100; pid++) {
        ke.u.process.pid = pid;
        ke.name = "Process/Start";
        ck_assert_int_eq(etl_process_runs_add(pr, &ke, pid, &run), 1);
    }
    for (uint32_t pid = 100; pid < 5100; pid++) {
        ke.u.process.pid = pid;
        ke.name = "Process/End";
        ck_assert_int_eq(etl_process_runs_add(pr, &ke, 100000 + pid, &run), 1);
        ck_assert_int_eq(run, pid);
    }
    ke.u.process.pid = 7;
    ke.name = "Process/DCEnd";
    ck_assert_int_eq(etl_process_runs_add(pr, &ke, 20, &run), 1);
    ck_assert_int_eq(run, 14);
    etl_process_runs_free(pr);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kstate");
    TCase *tc = tcase_create("analyses");

    tcase_add_test(tc, pairing_by_irp);
    tcase_add_test(tc, pairing_many);
    tcase_add_test(tc, cpu_threads);
    tcase_add_test(tc, story);
    tcase_add_test(tc, names);
    tcase_add_test(tc, names_any_order);
    tcase_add_test(tc, names_exec);
    tcase_add_test(tc, process_runs);
    tcase_add_test(tc, process_runs_reuse);
    suite_add_tcase(s, tc);
    return check_run(s);
}
