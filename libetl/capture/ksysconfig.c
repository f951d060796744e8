/* SPDX-License-Identifier: MIT */
/* The machine as Windows' SystemConfig/CPU event describes it, read from Linux (uname, sysconf, /proc/meminfo, /proc/cpuinfo). */
#define _GNU_SOURCE 1 /* getdomainname */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture/capture.h"

/* The number after "key<spaces>:" on a line of /proc/cpuinfo's first processor, or -1. */
static double cpuinfo_value(FILE *f, const char *key)
{
    char line[512];
    size_t n = strlen(key);

    rewind(f);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n') break; /* the first processor's end */
        if (strncmp(line, key, n) == 0) {
            const char *p = line + n;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == ':') return strtod(p + 1, NULL); /* ("model", not "model name") */
        }
    }
    return -1;
}

void etl_ksysconfig_cpu_read(etl_ksysconfig_cpu *c)
{
    struct utsname u;
    long page = sysconf(_SC_PAGESIZE), online = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f;

    memset(c, 0, sizeof *c);
    if (uname(&u) == 0) {
        char *dot = strchr(u.nodename, '.');
        if (dot) {
            *dot = '\0';
            snprintf(c->domain_name, sizeof c->domain_name, "%s", dot + 1);
        }
        snprintf(c->computer_name, sizeof c->computer_name, "%s", u.nodename);
    }
    if (!c->domain_name[0]) {
        char d[256] = "";
        if (getdomainname(d, sizeof d - 1) == 0 && strcmp(d, "(none)") != 0) snprintf(c->domain_name, sizeof c->domain_name, "%s", d);
    }
    c->processors = online > 0 ? (uint32_t)online : 0;
    c->page_size = page > 0 ? (uint32_t)page : 0;
    c->allocation_granularity = c->page_size; /* (mmap's granularity on Linux) */
    if ((f = fopen("/proc/meminfo", "re"))) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
                c->mem_mb = (uint32_t)(kb / 1024);
                break;
            }
        fclose(f);
    }
#if defined(__x86_64__)
    c->architecture = 9; /* PROCESSOR_ARCHITECTURE_AMD64 */
    c->highest_user_address = 0x7fffffffefffull; /* below TASK_SIZE, 47-bit address space */
    c->nx = c->pae = 1;
#elif defined(__aarch64__)
    c->architecture = 12; /* PROCESSOR_ARCHITECTURE_ARM64 */
    c->nx = 1;
#endif
    if ((f = fopen("/proc/cpuinfo", "re"))) {
        double mhz = cpuinfo_value(f, "cpu MHz"), family = cpuinfo_value(f, "cpu family"),
               model = cpuinfo_value(f, "model"), stepping = cpuinfo_value(f, "stepping");
        if (mhz > 0 && mhz < 1e6) c->mhz = (uint32_t)(mhz + 0.5);
        if (family >= 0 && family < 65536) c->level = (uint16_t)family;
        if (model >= 0 && model < 256 && stepping >= 0 && stepping < 256)
            c->revision = (uint16_t)((unsigned)model << 8 | (unsigned)stepping);
        fclose(f);
    }
}
