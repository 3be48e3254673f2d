// SPDX-License-Identifier: MIT
/*
 * feeder: plays a tiltd recording (docs/, "recording v1": t_ns,ax,ay,az,gx,gy,gz in m/s² and
 * rad/s; v2 adds mx,my,mz in µT) into i2c-stub chips' data registers, so that the real IIO
 * drivers bound to those chips read real motion. Test tooling for scripts/kernel-test (runs
 * inside the VM, built static); not part of tiltd. MIT, like the rest of the test tooling.
 *
 *   feeder --bus N --addr 0x68 --chip mpu6050|lsm6dsx|lsm9ds1|bmi160|nxp9dof|bmx055|bma255 --accel-dir D [--gyro-dir D]
 *          [--gyro-addr A]
 *          [--mag-chip lis3mdl|hmc5883l --mag-addr 0x1e --mag-dir D [--mag-log FILE]]
 *          --csv FILE [--secs S] [--once] [--fire PATH]
 *
 * Values are encoded with the scale the driver chose (in_accel_scale, in_anglvel_scale read from
 * sysfs at start) and through the inverse of the driver's mount matrix, in the driver's byte
 * order. Each sample is one I2C block write (accel and gyro consistent). With --fire, "1" is
 * written to PATH after each sample (a software trigger's fire file). --once writes the first
 * sample and exits. Prints "feeder start_ns=T0 ..." (CLOCK_MONOTONIC of sample 0) on stdout.
 *
 * With --mag-chip, the recording's mx,my,mz go into a magnetometer at its own address on the same
 * bus, at the chip's own output rate (its sampling_frequency, read again every half second, as
 * the driver or tiltd may change it): at each output period the latest row is written, with the
 * chip's per-axis scale (gauss per LSB), the inverse of its mount matrix and its register layout.
 * lsm9ds1: st_lsm6dsx's LSM9DS1, its gyroscope from OUT_X_L_G 0x18 and its accelerometer from
 * OUT_X_L_XL 0x28 (two writes: the chip's two blocks are apart).
 * bmx055: Bosch's BMX055/BMI055, a bmc150_accel (at --addr; 12 bits left-justified) and a bmg160
 * (gyro, at --gyro-addr), both little-endian from 0x02. bma255: that accelerometer alone (no
 * gyroscope: the recording's gyro columns are not written, gyro_scale is printed as 0).
 * nxp9dof: the NXP 9-DOF board, an FXOS8700 (accel, at --addr; 14 bits left-justified, which
 * 6.1's driver shifts right by 2) and an FXAS21002C (gyro, at --gyro-addr), both big-endian from
 * OUT_X_MSB 0x01; Linux 6.1's drivers print their scales in g and in millidegrees/s, which the
 * feeder turns into m/s² and rad/s per LSB (and prints, so that analyze compares in SI).
 * --mag-log FILE lists each of those writes as "END_NS ROW" (CLOCK_MONOTONIC when the write had
 * ended, the recording's data row from 0), so that a value read can be traced to the row the
 * registers held, however late the feeder ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct sample { int64_t t; double a[3], g[3], m[3]; int has_mag; };

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
    static const char *names[] = { "%s_mount_matrix", "mount_matrix", "in_mount_matrix" };
    for (int i = 0; i < 9; i++) m[i] = (i % 4 == 0);
    for (int n = 0; n < 3; n++) {
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
static void encode3(const double m[9], const double v[3], const double scale[3], int16_t out[3])
{
    for (int i = 0; i < 3; i++) {
        double s = m[0 * 3 + i] * v[0] + m[1 * 3 + i] * v[1] + m[2 * 3 + i] * v[2];
        double r = round(s / scale[i]);
        out[i] = (int16_t)(r > 32767 ? 32767 : r < -32768 ? -32768 : r);
    }
}

static void encode(const double m[9], const double v[3], double scale, int16_t out[3])
{
    const double s3[3] = { scale, scale, scale };
    encode3(m, v, s3, out);
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

/* A magnetometer beside the IMU: its own address, scale, mount matrix and output rate. */
struct mag {
    const char *chip, *dir;
    int fd;
    double scale[3], mount[9], odr;
    int64_t next_due, odr_read_at;
};

/* The chip's output rate (its sampling_frequency; the driver or tiltd may change it). */
static void mag_read_odr(struct mag *m)
{
    double hz;
    if (read_double(m->dir, "sampling_frequency", &hz) == 0 && hz > 0) m->odr = hz;
    else if (read_double(m->dir, "in_magn_sampling_frequency", &hz) == 0 && hz > 0) m->odr = hz;
}

static int mag_setup(struct mag *m)
{
    static const char *axes = "xyz";
    for (int i = 0; i < 3; i++) {
        char file[32];
        snprintf(file, sizeof file, "in_magn_%c_scale", axes[i]); /* st_magn: per axis */
        if (read_double(m->dir, file, &m->scale[i]) && read_double(m->dir, "in_magn_scale", &m->scale[i])) {
            fprintf(stderr, "feeder: cannot read the scale of %s/in_magn_%c\n", m->dir, axes[i]);
            return -1;
        }
        if (m->scale[i] <= 0) return -1;
    }
    /* The hmc5843 driver's scales are 1e7/gain in nano units (its hmc5883l_regval_to_nanoscale):
     * 100 times below gauss per LSB (the HMC5883L's default gain, 1090 LSB/gauss, shows as
     * 0.000009174). The chip's registers count in its real LSB, so the feeder encodes with that. */
    if (!strcmp(m->chip, "hmc5883l"))
        for (int i = 0; i < 3; i++) m->scale[i] *= 100;
    read_mount(m->dir, "in_magn", m->mount);
    m->odr = 10;
    mag_read_odr(m);
    return 0;
}

/* Writes one field (µT) into the chip's data and status registers. */
static int mag_write(struct mag *m, const double ut[3])
{
    const double gauss[3] = { ut[0] / 100, ut[1] / 100, ut[2] / 100 }; /* IIO's magn unit */
    int16_t r[3];
    uint8_t b[7];
    encode3(m->mount, gauss, m->scale, r);
    if (!strcmp(m->chip, "lis3mdl")) {
        /* STATUS_REG 0x27 (ZYXDA and each axis's new-data bit), then OUT_X_L 0x28 .. OUT_Z_H 0x2d,
         * little-endian, at 0xa7: st_sensors' regmap sets the auto-increment bit (0x80) in the
         * address of every read (read_flag_mask), which i2c-stub takes as another register. */
        b[0] = 0x0f;
        for (int k = 0; k < 3; k++) put_le(b + 1 + 2 * k, r[k]);
        return block_write(m->fd, 0x27 | 0x80, b, 7) < 0 ? -1 : 0;
    }
    if (!strcmp(m->chip, "hmc5883l")) {
        /* DATA_OUT_X_MSB 0x03: X, Z, Y big-endian (the HMC5883's order), then STATUS 0x09 with
         * RDY, which the driver polls before every read. */
        put_be(b, r[0]); put_be(b + 2, r[2]); put_be(b + 4, r[1]);
        b[6] = 0x01;
        return block_write(m->fd, 0x03, b, 7) < 0 ? -1 : 0;
    }
    fprintf(stderr, "feeder: unknown magnetometer %s\n", m->chip);
    exit(2);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: feeder --bus N --addr A --chip mpu6050|lsm6dsx|lsm9ds1|bmi160|nxp9dof|bmx055|bma255 --accel-dir D [--gyro-dir D] "
                    "[--gyro-addr A] "
                    "[--mag-chip lis3mdl|hmc5883l --mag-addr A --mag-dir D] --csv FILE [--secs S] [--once] "
                    "[--fire PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int bus = -1, addr = -1, gaddr = -1, maddr = -1, once = 0, rt = 1;
    struct mag mag = { 0 };
    double secs = 1e9;
    const char *chip = NULL, *adir = NULL, *gdir = NULL, *csv = NULL, *fire = NULL, *mag_log = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--once")) { once = 1; continue; }
        if (!strcmp(a, "--no-rt")) { rt = 0; continue; }
        if (!v) usage();
        if (!strcmp(a, "--bus")) bus = atoi(v);
        else if (!strcmp(a, "--addr")) addr = (int)strtol(v, NULL, 0);
        else if (!strcmp(a, "--chip")) chip = v;
        else if (!strcmp(a, "--accel-dir")) adir = v;
        else if (!strcmp(a, "--gyro-dir")) gdir = v;
        else if (!strcmp(a, "--gyro-addr")) gaddr = (int)strtol(v, NULL, 0);
        else if (!strcmp(a, "--csv")) csv = v;
        else if (!strcmp(a, "--secs")) secs = atof(v);
        else if (!strcmp(a, "--fire")) fire = v;
        else if (!strcmp(a, "--mag-chip")) mag.chip = v;
        else if (!strcmp(a, "--mag-addr")) maddr = (int)strtol(v, NULL, 0);
        else if (!strcmp(a, "--mag-dir")) mag.dir = v;
        else if (!strcmp(a, "--mag-log")) mag_log = v;
        else usage();
        i++;
    }
    if (bus < 0 || addr < 0 || !chip || !adir || !csv) usage();
    if (!gdir) gdir = adir;
    if (mag.chip && (maddr < 0 || !mag.dir)) usage();
    if (mag.chip && mag_setup(&mag)) return 1;

    double ascale, gscale, am[9], gm[9];
    if (read_double(adir, "in_accel_scale", &ascale) || ascale <= 0) {
        fprintf(stderr, "feeder: cannot read %s/in_accel_scale\n", adir);
        return 1;
    }
    int accel_only = !strcmp(chip, "bma255");
    gscale = 0;
    if (!accel_only && (read_double(gdir, "in_anglvel_scale", &gscale) || gscale <= 0)) {
        fprintf(stderr, "feeder: cannot read %s/in_anglvel_scale\n", gdir);
        return 1;
    }
    if (!strcmp(chip, "nxp9dof")) { /* the drivers' units: g and millidegrees/s per LSB */
        ascale *= 9.80665;
        gscale *= M_PI / 180000.0;
    }
    read_mount(adir, "in_accel", am);
    if (accel_only) { for (int k = 0; k < 9; k++) gm[k] = k % 4 == 0; }
    else read_mount(gdir, "in_anglvel", gm);

    FILE *f = fopen(csv, "r");
    if (!f) { perror(csv); return 1; }
    size_t n = 0, cap = 4096;
    struct sample *s = malloc(cap * sizeof *s);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        struct sample x;
        long long t;
        if (line[0] == '#' || line[0] == 't') continue;
        int got = sscanf(line, "%lld,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &t, &x.a[0], &x.a[1], &x.a[2], &x.g[0],
                         &x.g[1], &x.g[2], &x.m[0], &x.m[1], &x.m[2]);
        if (got != 7 && got != 10) continue;
        x.has_mag = got == 10;
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
    int gfd = -1; /* the gyro's own chip (nxp9dof) */
    if (gaddr >= 0 && ((gfd = open(dev, O_RDWR)) < 0 || ioctl(gfd, I2C_SLAVE_FORCE, gaddr) < 0)) {
        perror(dev);
        return 1;
    }
    if (mag.chip) {
        if ((mag.fd = open(dev, O_RDWR)) < 0 || ioctl(mag.fd, I2C_SLAVE_FORCE, maddr) < 0) { perror(dev); return 1; }
        if (!s[0].has_mag) { fprintf(stderr, "feeder: %s has no mx,my,mz columns\n", csv); return 1; }
    }
    int ffd = -1;
    if (fire && (ffd = open(fire, O_WRONLY)) < 0) { perror(fire); return 1; }

    printf("feeder chip=%s accel_scale=%.9g gyro_scale=%.9g samples=%zu\n", chip, ascale, gscale, n);
    if (mag.chip)
        printf("feeder mag_chip=%s mag_scale_x=%.9g mag_scale_y=%.9g mag_scale_z=%.9g mag_odr=%g\n", mag.chip,
               mag.scale[0], mag.scale[1], mag.scale[2], mag.odr);
    /* A chip's registers change on the chip's own clock, whatever the CPU is doing. In the rig
     * the feeder is that clock, and it shares the guest's one CPU with tiltd, its client and the
     * drivers: when the host is busy the guest stalls, and after a stall whichever task the guest
     * runs first decides whether a poll finds the registers of now or of the stall's start (read
     * late and stamped now: a time-line error no driver or estimator makes on real hardware).
     * Run as a real-time task, the feeder's due writes come first. */
    if (!once && rt) {
        struct sched_param sp = { .sched_priority = 50 };
        if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) printf("feeder sched=fifo\n");
        else printf("feeder sched=other (SCHED_FIFO: %s)\n", strerror(errno));
    }
    int64_t t0 = now_ns();
    if (!once) printf("feeder start_ns=%lld\n", (long long)t0);
    fflush(stdout);
    size_t errors = 0, mag_writes = 0;
    int64_t *late = malloc(n * sizeof *late); /* how long after its due time each row was written */
    /* (end time, row) of every magnetometer write, written out at the end: no file I/O between
     * the timed writes */
    int64_t *mag_written = mag.chip ? malloc(n * 2 * sizeof *mag_written) : NULL;
    mag.next_due = mag.odr_read_at = t0;
    size_t mag_row = 0; /* the latest row with a field */
    for (size_t i = 0; i < (once ? 1 : n); i++) {
        int64_t due = t0 + (s[i].t - s[0].t);
        struct timespec ts = { (time_t)(due / 1000000000LL), (long)(due % 1000000000LL) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        int16_t a[3], g[3] = { 0 };
        uint8_t b[14] = { 0 };
        encode(am, s[i].a, ascale, a);
        if (!accel_only) encode(gm, s[i].g, gscale, g);
        int rc;
        if (!strcmp(chip, "mpu6050")) { /* ACCEL_XOUT_H 0x3b: accel, temp, gyro; big-endian */
            for (int k = 0; k < 3; k++) { put_be(b + 2 * k, a[k]); put_be(b + 8 + 2 * k, g[k]); }
            rc = block_write(fd, 0x3b, b, 14);
        } else if (!strcmp(chip, "lsm6dsx")) { /* OUTX_L_G 0x22: gyro then accel; little-endian */
            for (int k = 0; k < 3; k++) { put_le(b + 2 * k, g[k]); put_le(b + 6 + 2 * k, a[k]); }
            rc = block_write(fd, 0x22, b, 12);
        } else if (!strcmp(chip, "lsm9ds1")) { /* OUT_X_L_G 0x18 and OUT_X_L_XL 0x28; little-endian */
            for (int k = 0; k < 3; k++) { put_le(b + 2 * k, g[k]); put_le(b + 6 + 2 * k, a[k]); }
            rc = block_write(fd, 0x18, b, 6);
            if (rc >= 0) rc = block_write(fd, 0x28, b + 6, 6);
        } else if (!strcmp(chip, "bmi160")) { /* DATA_GYRO_XOUT_L 0x0c: gyro then accel; little-endian */
            for (int k = 0; k < 3; k++) { put_le(b + 2 * k, g[k]); put_le(b + 6 + 2 * k, a[k]); }
            rc = block_write(fd, 0x0c, b, 12);
        } else if ((!strcmp(chip, "bmx055") && gfd >= 0) || accel_only) { /* ACCD_X_LSB / RATE_X_LSB 0x02; LE */
            /* the accel is 12 bits, left-justified: bmc150_accel shifts the word right by 4 */
            for (int k = 0; k < 3; k++) {
                int v = a[k] > 2047 ? 2047 : a[k] < -2048 ? -2048 : a[k];
                put_le(b + 2 * k, (int16_t)(v * 16));
                put_le(b + 6 + 2 * k, g[k]);
            }
            rc = block_write(fd, 0x02, b, 6);
            if (rc >= 0 && !accel_only) rc = block_write(gfd, 0x02, b + 6, 6);
        } else if (!strcmp(chip, "nxp9dof") && gfd >= 0) { /* OUT_X_MSB 0x01 on each chip; big-endian */
            /* the FXOS8700's accel is 14 bits, left-justified: 6.1's driver shifts the word right by 2 */
            for (int k = 0; k < 3; k++) {
                int v = a[k] > 8191 ? 8191 : a[k] < -8192 ? -8192 : a[k];
                put_be(b + 2 * k, (int16_t)(v * 4));
                put_be(b + 6 + 2 * k, g[k]);
            }
            rc = block_write(fd, 0x01, b, 6);
            if (rc >= 0) rc = block_write(gfd, 0x01, b + 6, 6);
        } else {
            fprintf(stderr, "feeder: unknown chip %s\n", chip);
            return 2;
        }
        if (rc < 0) errors++;
        late[i] = now_ns() - due;
        if (ffd >= 0 && write(ffd, "1", 1) < 0) errors++;
        /* The magnetometer's registers change at its own output rate: this row, when an output
         * period has begun since the last write (the recording's rate is above the chip's). */
        if (s[i].has_mag) mag_row = i; /* a v2 row may leave mx,my,mz empty */
        if (mag.chip && (once || due >= mag.next_due)) {
            if (due - mag.odr_read_at >= 500000000LL) { mag_read_odr(&mag); mag.odr_read_at = due; }
            if (mag_write(&mag, s[mag_row].m) < 0) errors++;
            mag_written[2 * mag_writes] = now_ns();
            mag_written[2 * mag_writes + 1] = (int64_t)mag_row;
            mag_writes++;
            int64_t period = (int64_t)(1e9 / mag.odr);
            mag.next_due += period * ((due - mag.next_due) / period + 1);
        }
    }
    FILE *ml = mag_log && mag_writes ? fopen(mag_log, "w") : NULL;
    for (size_t k = 0; ml && k < mag_writes; k++)
        fprintf(ml, "%lld %lld\n", (long long)mag_written[2 * k], (long long)mag_written[2 * k + 1]);
    if (ml) fclose(ml);
    size_t rows = once ? 1 : n;
    qsort(late, rows, sizeof *late, cmp_i64);
    printf("feeder done samples=%zu mag_writes=%zu errors=%zu end_ns=%lld late_p50_ms=%.2f late_p99_ms=%.2f "
           "late_max_ms=%.2f\n",
           rows, mag_writes, errors, (long long)now_ns(), late[rows / 2] / 1e6, late[rows * 99 / 100] / 1e6,
           late[rows - 1] / 1e6);
    return errors ? 1 : 0;
}
