// SPDX-License-Identifier: MIT
/*
 * magread: reads a magnetometer's raw values through the IIO driver's sysfs files, one after the
 * other, for the kernel rig's value check (scripts/kernel/analyze: every value the driver gives
 * must be the recording's, in the same axis, sign and scale). Test tooling for
 * scripts/kernel-test (runs inside the VM, built static); not part of tiltd. MIT.
 *
 *   magread --dir /sys/bus/iio/devices/iio:deviceN --secs S [--rate HZ]
 *
 * With --rate, one x, y, z read starts every 1/HZ s (as tiltd polls; a read that ends late is
 * followed at once); without, they follow one another. Back-to-back reads of a driver that does
 * not sleep (hmc5843: about 2000 values/s) starve the feeder on the VM's one CPU.
 * Prints "magread scale_x=… scale_y=… scale_z=…" and then one line per value read,
 * "START END AXIS RAW": CLOCK_MONOTONIC (ns) when that file's read began and ended (a one-shot raw
 * read may sleep in the driver for several output periods), AXIS x, y or z.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int read_text(const char *dir, const char *file, char *buf, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    double secs = 10, rate = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
        else if (!strcmp(argv[i], "--secs")) secs = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
    }
    if (!dir) {
        fprintf(stderr, "usage: magread --dir IIO_DEVICE_DIR [--secs S]\n");
        return 2;
    }
    static const char axes[] = "xyz";
    char buf[64], file[32];
    printf("magread");
    for (int k = 0; k < 3; k++) {
        snprintf(file, sizeof file, "in_magn_%c_scale", axes[k]);
        if (read_text(dir, file, buf, sizeof buf) && read_text(dir, "in_magn_scale", buf, sizeof buf)) {
            fprintf(stderr, "magread: no scale in %s\n", dir);
            return 1;
        }
        printf(" scale_%c=%s", axes[k], strtok(buf, "\n"));
    }
    printf("\n");
    int64_t end = now_ns() + (int64_t)(secs * 1e9);
    size_t errors = 0;
    int64_t due = now_ns(), period = rate > 0 ? (int64_t)(1e9 / rate) : 0;
    while (now_ns() < end) {
        if (period) {
            struct timespec ts = { (time_t)(due / 1000000000LL), (long)(due % 1000000000LL) };
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
            due += period;
            if (due < now_ns()) due = now_ns();
        }
        for (int k = 0; k < 3; k++) {
            snprintf(file, sizeof file, "in_magn_%c_raw", axes[k]);
            int64_t a = now_ns();
            int rc = read_text(dir, file, buf, sizeof buf);
            int64_t b = now_ns();
            if (rc) {
                errors++;
                continue;
            }
            printf("%lld %lld %c %ld\n", (long long)a, (long long)b, axes[k], strtol(buf, NULL, 10));
        }
    }
    printf("magread done errors=%zu\n", errors);
    return 0;
}
