# shellcheck shell=dash disable=SC2034 # its variables are guest-init's
# SPDX-License-Identifier: Apache-2.0
# The magnetometer's part of scripts/kernel/guest-init (sourced by it in the VM as
# /rig/guest-mag.sh; busybox sh): which chip, on which bus, its attributes, and the cases that
# use it without tiltd's daemon — magvalues (its values through sysfs) and magcal (`tiltd
# calibrate mag` against the real driver). Uses guest-init's BUS, MOD, SECS, now_ns, wait_for,
# iio_dev_named, write_config. Test tooling only.

# mag_info ID -> MNAME, MADDR, MMOD, MKIND (feeder --mag-chip), MDEVNAME, MPRESET (ID registers and
# the status the driver polls). Anything that is not a magnetometer: MNAME empty.
mag_info() {
    MNAME="" MADDR="" MMOD="" MKIND="" MDEVNAME="" MPRESET=""
    case "$1" in
        # WHO_AM_I 0x0f = 0x3d, at 0x8f: st_sensors' regmap sets the auto-increment bit (0x80) in
        # the address of every read, which i2c-stub takes as another register (writes keep 0x0f).
        lis3mdl) MNAME=lis3mdl MADDR=0x1e MMOD=st_magn_i2c MKIND=lis3mdl MDEVNAME=lis3mdl
                 MPRESET="0x8f=0x3d" ;;
        # The LSM9DS1's magnetometer: st_magn drives it as a LIS3MDL (the same registers and
        # WHO_AM_I), under its own name.
        lsm9ds1mag) MNAME=lsm9ds1_magn MADDR=0x1e MMOD=st_magn_i2c MKIND=lis3mdl MDEVNAME=lsm9ds1_magn
                    MPRESET="0x8f=0x3d" ;;
        # ID_A..C 0x0a-0x0c = "H43"; STATUS 0x09 RDY, which every read waits for.
        hmc5883l) MNAME=hmc5883l MADDR=0x1e MMOD=hmc5843_i2c MKIND=hmc5883l MDEVNAME=hmc5883l
                  MPRESET="0x0a=0x48 0x0b=0x34 0x0c=0x33 0x09=0x01" ;;
    esac
}

# MBUS: the bus the magnetometer is bound on. Beside an MPU-6050 (a GY-87) it hangs off the
# MPU-6050's auxiliary I2C pins, which inv_mpu6050 offers as an I2C mux adapter ("i2c-N-mux
# (chan_id 0)") that switches the MPU-6050's bypass on for each transfer; i2c-stub, the parent,
# answers for it as for any address.
mag_bus() {
    local a
    MBUS=$BUS
    [ "$MOD" = inv-mpu6050-i2c ] || return 0
    for a in /sys/bus/i2c/devices/i2c-*; do
        [ "$(cat "$a/name" 2>/dev/null)" = "i2c-$BUS-mux (chan_id 0)" ] && MBUS=${a##*/i2c-} && return 0
    done
    echo "no inv_mpu6050 mux adapter on i2c-$BUS"
    return 1
}

find_mag_dir() {
    MDIR=""
    [ -n "$MNAME" ] || return 0
    wait_for 5 iio_dev_named "$MDEVNAME" || return 1
    MDIR=$(iio_dev_named "$MDEVNAME")
}

mag_facts() { # the magnetometer's attributes, without its *_raw files (each a one-shot read)
    local f
    echo "== $MDIR ($(cat "$MDIR/name"))"
    for f in "$MDIR"/*; do
        [ -f "$f" ] || continue
        case "$f" in *uevent|*_raw) continue ;; esac
        printf '%s: %s\n' "${f##*/}" "$(cat "$f" 2>&1 | tr '\n' ' ')"
    done
    [ -d "$MDIR/buffer" ] && echo "has buffer/" || echo "no buffer/"
    [ -d "$MDIR/trigger" ] && echo "has trigger/" || echo "no trigger/"
}

# run_magvalues DIR FEED: the magnetometer's values through the driver's sysfs files, one after
# the other (no tiltd), at the chip's highest rate (the driver starts at its lowest: a one-shot
# read of st_magn then sleeps two output periods, 2 s at 1 Hz).
run_magvalues() {
    local d=$1 feed=$2 rate_file max_rate
    rate_file=$MDIR/sampling_frequency # st_magn; hmc5843: in_magn_sampling_frequency
    [ -f "$rate_file" ] || rate_file=$MDIR/in_magn_sampling_frequency
    echo "mag_rate_at_probe=$(cat "$rate_file")" >> "$d/case"
    max_rate=$(tr ' ' '\n' < "$MDIR/sampling_frequency_available" | grep . | tail -1)
    echo "$max_rate" > "$rate_file"
    echo "mag_rate=$(cat "$rate_file")" >> "$d/case"
    timeout $((SECS + 10)) $feed --secs "$SECS" > "$d/feeder.txt" 2>&1 &
    FPID=$!
    timeout $((SECS + 10)) magread --dir "$MDIR" --secs "$((SECS - 1))" --rate "${max_rate%%.*}" \
        > "$d/magread.txt" 2>&1
    wait "$FPID"
}

# run_magcal DIR FEED: `tiltd calibrate mag`, live, against the real driver (issue 29). First the
# demo head of FEED's recording (nods only: too few directions), which must be refused with exit
# status 3 and nothing written; then /rig/rec-tumble.csv (make-demo-recording --tumble: every
# direction, a known hard-iron offset and soft iron), whose calibration file analyze compares
# with the recording's hard iron. Each run's exit status, output and time go to the case's files.
run_magcal() {
    local d=$1 feed=$2 cal=/tmp/store/calibration.toml tumble t0 t1 rc
    mkdir -p /tmp/store; rm -f "$cal"
    printf '[calibration]\nfile = "%s"\n' "$cal" >> "$d/tiltd.toml"
    timeout $((SECS + 10)) $feed --secs "$SECS" > "$d/feeder.txt" 2>&1 &
    FPID=$!
    t0=$(now_ns); rc=0
    timeout 60 tiltd calibrate mag --config "$d/tiltd.toml" --timeout $((SECS - 3)) > "$d/calibrate-poor.txt" 2>&1 || rc=$?
    t1=$(now_ns)
    echo "poor_exit=$rc poor_ms=$(( (t1 - t0) / 1000000 ))" >> "$d/case"
    [ -f "$cal" ] && echo "poor_wrote=yes" >> "$d/case"
    wait "$FPID"
    # The tumble: the feeder plays all of it; calibrate stops once the coverage is enough.
    tumble=$(echo "$feed" | sed 's|--csv [^ ]*|--csv /rig/rec-tumble.csv|; s|--mag-log [^ ]*|--mag-log '"$d"'/maglog-tumble.txt|')
    timeout 60 $tumble --secs 31 > "$d/feeder-tumble.txt" 2>&1 &
    FPID=$!
    t0=$(now_ns); rc=0
    timeout 60 tiltd calibrate mag --config "$d/tiltd.toml" --timeout 29 > "$d/calibrate.txt" 2>&1 || rc=$?
    t1=$(now_ns)
    echo "calibrate_exit=$rc calibrate_ms=$(( (t1 - t0) / 1000000 ))" >> "$d/case"
    wait "$FPID"
    [ -f "$cal" ] && cp "$cal" "$d/calibration.toml"
}

# mag_extras DIR: st_magn's one-shot raw read (no interrupt) at each rate, timed: it switches the
# chip on and sleeps two output periods before it reads.
mag_extras() {
    local d=$1 f t0 t1
    chip_info lsm6dso+lis3mdl
    if bind_chip > "$d/lis3mdl-bind.txt" 2>&1; then
        {
            for f in $(cat "$MDIR/sampling_frequency_available"); do
                echo "$f" > "$MDIR/sampling_frequency"
                t0=$(now_ns)
                cat "$MDIR/in_magn_x_raw" > /dev/null; cat "$MDIR/in_magn_x_raw" > /dev/null
                t1=$(now_ns)
                echo "odr=$f cat of in_magn_x_raw $(( (t1 - t0) / 2000 )) us"
            done
        } > "$d/lis3mdl-oneshot.txt" 2>&1
    fi
    unbind_all
}
