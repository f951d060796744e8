/* SPDX-License-Identifier: MIT */
/* The machine as Windows' SystemConfig events describe it, read from Linux: CPU (uname, sysconf, /proc/meminfo, /proc/cpuinfo), PhyDisk (/sys/block), LogDisk (/proc/mounts, statvfs), NIC (/sys/class/net, getifaddrs, /etc/resolv.conf). */
#define _GNU_SOURCE 1 /* getdomainname */
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
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

/* ---- disks and network adapters ---- */

/* The first line of a small file, its newline cut ("" when it cannot be read). */
static void read_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "re");

    out[0] = '\0';
    if (!f) return;
    if (!fgets(out, (int)size, f)) out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static unsigned long long read_ull(const char *path)
{
    char line[64];

    read_line(path, line, sizeof line);
    return strtoull(line, NULL, 10);
}

/* A block device's dev_t as the block tracepoints give it: MAJOR << 20 | MINOR (the kernel's own
   encoding), from /sys/.../dev's "MAJOR:MINOR". */
static uint32_t kernel_devt(const char *sysdir)
{
    char path[512], line[64];
    unsigned maj = 0, min = 0;

    snprintf(path, sizeof path, "%s/dev", sysdir);
    read_line(path, line, sizeof line);
    if (sscanf(line, "%u:%u", &maj, &min) != 2) return 0;
    return maj << 20 | (min & 0xFFFFF);
}

/* 1 when /sys/block/NAME is a device of hardware (not under /sys/devices/virtual). */
static int physical(const char *dir, const char *name)
{
    char path[512], target[512];
    ssize_t n;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    n = readlink(path, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    return !strstr(target, "/devices/virtual/");
}

unsigned etl_ksysconfig_phydisks(void (*cb)(void *ctx, const etl_ksysconfig_phydisk *d), void *ctx)
{
    DIR *dir = opendir("/sys/block"), *parts;
    struct dirent *e, *p;
    unsigned count = 0;

    if (!dir) return 0;
    while ((e = readdir(dir))) {
        etl_ksysconfig_phydisk d;
        char sys[300], path[600], vendor[128], model[128], link[512];
        unsigned long long sectors;
        ssize_t n;
        if (e->d_name[0] == '.' || !physical("/sys/block", e->d_name)) continue;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "%.63s", e->d_name);
        snprintf(sys, sizeof sys, "/sys/block/%s", e->d_name);
        d.disk_number = kernel_devt(sys);
        snprintf(path, sizeof path, "%s/queue/logical_block_size", sys);
        d.bytes_per_sector = (uint32_t)read_ull(path);
        if (!d.bytes_per_sector) d.bytes_per_sector = 512;
        /* Linux keeps no geometry: the conventional LBA one (255 heads, 63 sectors a track), so
           that Cylinders x TracksPerCylinder x SectorsPerTrack x BytesPerSector is the size, as
           Windows' tools compute it, to within a cylinder */
        d.sectors_per_track = 63;
        d.tracks_per_cylinder = 255;
        snprintf(path, sizeof path, "%s/size", sys);
        sectors = read_ull(path); /* 512-byte units */
        d.cylinders = sectors * 512 / ((uint64_t)d.bytes_per_sector * 63 * 255);
        /* SCSI disks: the device's name is HOST:CHANNEL:TARGET:LUN */
        snprintf(path, sizeof path, "%s/device", sys);
        n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            const char *base;
            link[n] = '\0';
            base = strrchr(link, '/');
            sscanf(base ? base + 1 : link, "%u:%u:%u:%u", &d.scsi_port, &d.scsi_path, &d.scsi_target, &d.scsi_lun);
        }
        snprintf(path, sizeof path, "%s/device/vendor", sys);
        read_line(path, vendor, sizeof vendor);
        snprintf(path, sizeof path, "%s/device/model", sys);
        read_line(path, model, sizeof model);
        snprintf(d.manufacturer, sizeof d.manufacturer, "%s%s%s", vendor, *vendor && *model ? " " : "", model);
        for (size_t i = strlen(d.manufacturer); i > 0 && d.manufacturer[i - 1] == ' '; i--) d.manufacturer[i - 1] = '\0';
        snprintf(path, sizeof path, "%s/queue/write_cache", sys);
        read_line(path, vendor, sizeof vendor);
        d.write_cache_enabled = strcmp(vendor, "write back") == 0;
        if ((parts = opendir(sys))) {
            while ((p = readdir(parts))) {
                struct stat st;
                snprintf(path, sizeof path, "%s/%s/partition", sys, p->d_name);
                if (p->d_name[0] != '.' && stat(path, &st) == 0) d.partition_count++;
            }
            closedir(parts);
        }
        cb(ctx, &d);
        count++;
    }
    closedir(dir);
    return count;
}

unsigned etl_ksysconfig_logdisks(void (*cb)(void *ctx, const etl_ksysconfig_logdisk *d), void *ctx)
{
    FILE *f = fopen("/proc/mounts", "re");
    char line[1024];
    unsigned count = 0;

    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        char src[256], mnt[256], fs[64], sys[300], path[400], disk[300];
        etl_ksysconfig_logdisk d;
        struct stat st;
        struct statvfs v;
        ssize_t n;
        if (sscanf(line, "%255s %255s %63s", src, mnt, fs) != 3 || strncmp(src, "/dev/", 5) != 0) continue;
        if (stat(src, &st) != 0 || !S_ISBLK(st.st_mode) || statvfs(mnt, &v) != 0) continue;
        memset(&d, 0, sizeof d);
        snprintf(d.mount_point, sizeof d.mount_point, "%s", mnt);
        snprintf(d.file_system, sizeof d.file_system, "%.15s", fs);
        snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
        snprintf(path, sizeof path, "%s/partition", sys);
        d.partition_number = (uint32_t)read_ull(path);
        snprintf(path, sizeof path, "%s/start", sys);
        d.start_offset = read_ull(path) * 512;
        snprintf(path, sizeof path, "%s/size", sys);
        d.partition_size = read_ull(path) * 512;
        /* the disk: the partition's parent directory, else the device itself */
        snprintf(disk, sizeof disk, "%s", sys);
        if (d.partition_number) {
            char real[300];
            if (realpath(sys, real)) {
                char *slash = strrchr(real, '/');
                if (slash) *slash = '\0';
                snprintf(disk, sizeof disk, "%s", real);
            }
        }
        d.disk_number = kernel_devt(disk);
        snprintf(path, sizeof path, "%s/queue/logical_block_size", disk);
        d.bytes_per_sector = (uint32_t)read_ull(path);
        if (!d.bytes_per_sector) d.bytes_per_sector = 512;
        snprintf(path, sizeof path, "%s/removable", disk);
        d.drive_type = read_ull(path) ? 2 : 3; /* DRIVE_REMOVABLE, DRIVE_FIXED */
        d.sectors_per_cluster = v.f_frsize >= d.bytes_per_sector ? (uint32_t)(v.f_frsize / d.bytes_per_sector) : 1;
        d.total_clusters = (int64_t)v.f_blocks;
        d.free_clusters = (int64_t)v.f_bfree;
        (void)n;
        cb(ctx, &d);
        count++;
    }
    fclose(f);
    return count;
}

/* Appends text to a ';'-separated list in out (size bytes), whole items only. */
static void list_add(char *out, size_t size, const char *text)
{
    size_t len = strlen(out), add = strlen(text) + (len ? 1 : 0);

    if (len + add + 1 > size) return;
    snprintf(out + len, size - len, "%s%s", len ? ";" : "", text);
}

unsigned etl_ksysconfig_nics(void (*cb)(void *ctx, const etl_ksysconfig_nic *n), void *ctx)
{
    DIR *dir = opendir("/sys/class/net");
    struct dirent *e;
    struct ifaddrs *ifa = NULL;
    char dns[512] = "", line[256];
    unsigned count = 0;
    FILE *f;

    if (!dir) return 0;
    if ((f = fopen("/etc/resolv.conf", "re"))) {
        char addr[128];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "nameserver %127s", addr) == 1) list_add(dns, sizeof dns, addr);
        fclose(f);
    }
    if (getifaddrs(&ifa) != 0) ifa = NULL;
    while ((e = readdir(dir))) {
        etl_ksysconfig_nic n;
        char path[512], mac[64];
        unsigned b[8];
        int got;
        if (e->d_name[0] == '.' || !physical("/sys/class/net", e->d_name)) continue;
        memset(&n, 0, sizeof n);
        snprintf(n.description, sizeof n.description, "%s", e->d_name);
        snprintf(path, sizeof path, "/sys/class/net/%s/address", e->d_name);
        read_line(path, mac, sizeof mac);
        got = sscanf(mac, "%x:%x:%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]);
        for (int i = 0; i < got; i++) n.physical_addr |= (uint64_t)(b[i] & 0xFF) << (8 * i);
        n.physical_addr_len = got > 0 ? (uint32_t)got : 0;
        snprintf(path, sizeof path, "/sys/class/net/%s/ifindex", e->d_name);
        n.ipv4_index = n.ipv6_index = (uint32_t)read_ull(path);
        for (struct ifaddrs *a = ifa; a; a = a->ifa_next) {
            char text[INET6_ADDRSTRLEN];
            if (!a->ifa_addr || strcmp(a->ifa_name, e->d_name) != 0) continue;
            if (a->ifa_addr->sa_family == AF_INET &&
                inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr, text, sizeof text))
                list_add(n.ip_addresses, sizeof n.ip_addresses, text);
            else if (a->ifa_addr->sa_family == AF_INET6 &&
                     inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr, text,
                               sizeof text))
                list_add(n.ip_addresses, sizeof n.ip_addresses, text);
        }
        snprintf(n.dns_servers, sizeof n.dns_servers, "%s", dns);
        cb(ctx, &n);
        count++;
    }
    if (ifa) freeifaddrs(ifa);
    closedir(dir);
    return count;
}
