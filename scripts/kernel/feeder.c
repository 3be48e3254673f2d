// SPDX-License-Identifier: MIT
/*
 * feeder: plays a tiltd recording (docs/, "recording v1": t_ns,ax,ay,az,gx,gy,gz in m/s² and
 * rad/s) into an i2c-stub chip's data registers, so that the real IIO driver bound to that chip
 * reads real motion. Test tooling for scripts/kernel-test (runs inside the VM, built static);
 * not part of tiltd.
 *
 *   feeder --bus N --addr 0x68 --chip mpu6050|lsm6dsx|bmi160 --accel-dir D [--gyro-dir D]
 *          --csv FILE [--secs S] [--once] [--fire PATH]
 *
 * Values are encoded with the scale the driver chose (in_accel_scale, in_anglvel_scale read from
 * sysfs at start) and through the inverse of the driver's mount matrix, in the driver's byte
 * order. Each sample is one I2C block write (accel and gyro consistent). With --fire, "1" is
 * written to PATH after each sample (a software trigger's fire file). --once writes the first
 * sample and exits. Prints "feeder start_ns=T0 ..." (CLOCK_MONOTONIC of sample 0) on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct sample { int64_t t; double a[3], g[3]; };

static int read_double(const char *dir, const char *file, double *out)
{
    char path[512], buf[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    *out = strtod(buf, NULL);
    return 0;
}

/* The driver's mount matrix (rows "a, b, c; d, e, f; g, h, i"), identity when absent. */
static void read_mount(const char *dir, const char *prefix, double m[9])
{
    static const char *names[] = { "%s_mount_matrix", "mount_matrix" };
    for (int i = 0; i < 9; i++) m[i] = (i % 4 == 0);
    for (int n = 0; n < 2; n++) {
        char file[64], path[512], buf[256];
        snprintf(file, sizeof file, names[n], prefix);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ok = fgets(buf, sizeof buf, f) != NULL;
        fclose(f);
        if (!ok) continue;
        double v[9];
        if (sscanf(buf, "%lf, %lf, %lf; %lf, %lf, %lf; %lf, %lf, %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8]) == 9) {
            memcpy(m, v, sizeof v);
            return;
        }
    }
}

/* raw = M⁻¹·v / scale; M is a rotation, so M⁻¹ = Mᵀ. */
static void encode(const double m[9], const double v[3], double scale, int16_t out[3])
{
    for (int i = 0; i < 3; i++) {
        double s = m[0 * 3 + i] * v[0] + m[1 * 3 + i] * v[1] + m[2 * 3 + i] * v[2];
        double r = round(s / scale);
        out[i] = (int16_t)(r > 32767 ? 32767 : r < -32768 ? -32768 : r);
    }
}

static void put_le(uint8_t *p, int16_t v) { p[0] = (uint8_t)(v & 0xff); p[1] = (uint8_t)((uint16_t)v >> 8); }
static void put_be(uint8_t *p, int16_t v) { p[0] = (uint8_t)((uint16_t)v >> 8); p[1] = (uint8_t)(v & 0xff); }

static int block_write(int fd, uint8_t reg, const uint8_t *data, int len)
{
    union i2c_smbus_data d;
    struct i2c_smbus_ioctl_data args = { I2C_SMBUS_WRITE, reg, I2C_SMBUS_I2C_BLOCK_DATA, &d };
    d.block[0] = (uint8_t)len;
    memcpy(&d.block[1], data, (size_t)len);
    return ioctl(fd, I2C_SMBUS, &args);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: feeder --bus N --addr A --chip mpu6050|lsm6dsx|bmi160 --accel-dir D [--gyro-dir D] "
                    "--csv FILE [--secs S] [--once] [--fire PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int bus = -1, addr = -1, once = 0;
    double secs = 1e9;
    const char *chip = NULL, *adir = NULL, *gdir = NULL, *csv = NULL, *fire = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--once")) { once = 1; continue; }
        if (!v) usage();
        if (!strcmp(a, "--bus")) bus = atoi(v);
        else if (!strcmp(a, "--addr")) addr = (int)strtol(v, NULL, 0);
        else if (!strcmp(a, "--chip")) chip = v;
        else if (!strcmp(a, "--accel-dir")) adir = v;
        else if (!strcmp(a, "--gyro-dir")) gdir = v;
        else if (!strcmp(a, "--csv")) csv = v;
        else if (!strcmp(a, "--secs")) secs = atof(v);
        else if (!strcmp(a, "--fire")) fire = v;
        else usage();
        i++;
    }
    if (bus < 0 || addr < 0 || !chip || !adir || !csv) usage();
    if (!gdir) gdir = adir;

    double ascale, gscale, am[9], gm[9];
    if (read_double(adir, "in_accel_scale", &ascale) || ascale <= 0) {
        fprintf(stderr, "feeder: cannot read %s/in_accel_scale\n", adir);
        return 1;
    }
    if (read_double(gdir, "in_anglvel_scale", &gscale) || gscale <= 0) {
        fprintf(stderr, "feeder: cannot read %s/in_anglvel_scale\n", gdir);
        return 1;
    }
    read_mount(adir, "in_accel", am);
    read_mount(gdir, "in_anglvel", gm);

    FILE *f = fopen(csv, "r");
    if (!f) { perror(csv); return 1; }
    size_t n = 0, cap = 4096;
    struct sample *s = malloc(cap * sizeof *s);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        struct sample x;
        long long t;
        if (line[0] == '#' || line[0] == 't') continue;
        if (sscanf(line, "%lld,%lf,%lf,%lf,%lf,%lf,%lf", &t, &x.a[0], &x.a[1], &x.a[2], &x.g[0], &x.g[1], &x.g[2]) != 7)
            continue;
        x.t = t;
        if (n > 0 && (double)(x.t - s[0].t) / 1e9 > secs) break;
        if (n == cap) s = realloc(s, (cap *= 2) * sizeof *s);
        s[n++] = x;
    }
    fclose(f);
    if (n == 0) { fprintf(stderr, "feeder: no samples in %s\n", csv); return 1; }

    char dev[32];
    snprintf(dev, sizeof dev, "/dev/i2c-%d", bus);
    int fd = open(dev, O_RDWR);
    /* FORCE: the driver owns the address; i2c-stub serves both */
    if (fd < 0 || ioctl(fd, I2C_SLAVE_FORCE, addr) < 0) { perror(dev); return 1; }
    int ffd = -1;
    if (fire && (ffd = open(fire, O_WRONLY)) < 0) { perror(fire); return 1; }

    printf("feeder chip=%s accel_scale=%.9g gyro_scale=%.9g samples=%zu\n", chip, ascale, gscale, n);
    int64_t t0 = now_ns();
    if (!once) printf("feeder start_ns=%lld\n", (long long)t0);
    fflush(stdout);
    size_t errors = 0;
    for (size_t i = 0; i < (once ? 1 : n); i++) {
        int64_t due = t0 + (s[i].t - s[0].t);
        struct timespec ts = { (time_t)(due / 1000000000LL), (long)(due % 1000000000LL) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        int16_t a[3], g[3];
        uint8_t b[14] = { 0 };
        encode(am, s[i].a, ascale, a);
        encode(gm, s[i].g, gscale, g);
        int rc;
        if (!strcmp(chip, "mpu6050")) { /* ACCEL_XOUT_H 0x3b: accel, temp, gyro; big-endian */
            for (int k = 0; k < 3; k++) { put_be(b + 2 * k, a[k]); put_be(b + 8 + 2 * k, g[k]); }
            rc = block_write(fd, 0x3b, b, 14);
        } else if (!strcmp(chip, "lsm6dsx")) { /* OUTX_L_G 0x22: gyro then accel; little-endian */
            for (int k = 0; k < 3; k++) { put_le(b + 2 * k, g[k]); put_le(b + 6 + 2 * k, a[k]); }
            rc = block_write(fd, 0x22, b, 12);
        } else if (!strcmp(chip, "bmi160")) { /* DATA_GYRO_XOUT_L 0x0c: gyro then accel; little-endian */
            for (int k = 0; k < 3; k++) { put_le(b + 2 * k, g[k]); put_le(b + 6 + 2 * k, a[k]); }
            rc = block_write(fd, 0x0c, b, 12);
        } else {
            fprintf(stderr, "feeder: unknown chip %s\n", chip);
            return 2;
        }
        if (rc < 0) errors++;
        if (ffd >= 0 && write(ffd, "1", 1) < 0) errors++;
    }
    printf("feeder done samples=%zu errors=%zu end_ns=%lld\n", once ? (size_t)1 : n, errors, (long long)now_ns());
    return errors ? 1 : 0;
}
