#define _POSIX_C_SOURCE 200809L
#include "thread_cpu.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool wb_is_normal_scheduler(const char *name) {
    const char *p = name;
    if (!isdigit((unsigned char)*p)) return false;
    while (isdigit((unsigned char)*p))
        p++;
    static const char suffix[] = "_scheduler";
    if (strncmp(p, suffix, sizeof suffix - 1) != 0) return false;
    p += sizeof suffix - 1;
    return *p == '\0' || (p[0] == '\n' && p[1] == '\0');
}

/* The first line of dir/tid/file into buf (NUL-terminated); false when it
 * cannot be read. */
static bool read_line(const char *dir, const char *tid, const char *file, char *buf, size_t size) {
    char path[512];
    int n = snprintf(path, sizeof path, "%s/%s/%s", dir, tid, file);
    if (n < 0 || (size_t)n >= sizeof path) return false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

int64_t wb_other_threads_cpu_ns(const char *task_dir) {
    DIR *dir = opendir(task_dir);
    if (!dir) return -1;
    int64_t total = 0;
    struct dirent *entry;
    char line[128];
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        if (!read_line(task_dir, entry->d_name, "comm", line, sizeof line) ||
            wb_is_normal_scheduler(line))
            continue;
        int64_t ns;
        if (read_line(task_dir, entry->d_name, "schedstat", line, sizeof line) &&
            sscanf(line, "%" SCNd64, &ns) == 1 && ns >= 0 && ns <= INT64_MAX - total)
            total += ns;
    }
    closedir(dir);
    return total;
}
