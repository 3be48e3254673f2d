# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154  # $container_init and the others are scripts/systemd-test's globals
# The checks of scripts/systemd-test, one function each, sourced by it after the container has
# booted: they use its helpers (inside, wait_for, journal, status_text, write_config, …) and
# globals ($container_init, $work). scripts/systemd-test runs them in order, each through `check`.

start_and_status() {
    inside systemctl start tiltd.service || return 1
    [ "$(inside systemctl show -P Type tiltd.service)" = notify ] || { echo "not Type=notify"; return 1; }
    wait_for 10 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl show -P StatusText tiltd.service | grep -q 'Hz from'" \
        || { echo "STATUS=$(status_text)"; return 1; }
    echo "STATUS=$(status_text)"
}

exposure_of() {  # exposure_of UNIT LIMIT
    local e
    e=$(inside systemd-analyze security --no-pager "$1" | sed -n "s/.*Overall exposure level for $1: \([0-9.]*\).*/\1/p")
    echo "$1: exposure $e (limit $2)"
    [ -n "$e" ] && awk -v e="$e" -v l="$2" 'BEGIN { exit !(e <= l) }'
}

clean_journal() {
    local warnings words
    warnings=$(journal -u tiltd.service -u tiltd.socket -p warning)
    words=$(journal -u tiltd.service | grep -Ei 'warn|error|fail|denied' || true)
    [ -z "$warnings$words" ] || { printf '%s\n%s\n' "$warnings" "$words"; return 1; }
}

# The unit allows io_uring, so fan-out uses it under the sandbox (else it falls back to write(2)).
fanout_writes() {
    local stats
    stats=$(inside runuser -u watcher -- tiltd-test-client reply stats) || return 1
    # The asking client's own reply went through the ring: its socket is in the file table.
    echo "$stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); w=s.get("fanout_writes"); r=s.get("fanout_registered_clients"); print("fanout_writes:", w, "registered clients:", r); sys.exit(0 if w == "io_uring" and (r or 0) >= 1 else 1)'
}

# ---- socket activation: the first client starts the daemon and its hello lists the sources
activation() {
    inside systemctl stop tiltd.service
    [ "$(inside systemctl is-active tiltd.socket)" = active ] || { echo "socket not listening"; return 1; }
    local hello
    hello=$(inside runuser -u watcher -- tiltd-test-client hello) || return 1
    echo "$hello" | cut -c1-400
    # The daemon serves the socket a moment before READY=1: activating, then active.
    wait_for 20 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl is-active tiltd.service | grep -qx active" \
        || { echo "tiltd.service: $(inside systemctl is-active tiltd.service)"; return 1; }
    echo "$hello" | python3 -c 'import json,sys; h=json.load(sys.stdin); s=[x["source"] for x in h["sources"]]; print("sources:", s); sys.exit(0 if "imu" in s and "gps" in s else 1)'
}

# ---- watchdog
watchdog() {
    local before restarts
    before=$(mainpid); restarts=$(inside systemctl show -P NRestarts tiltd.service)
    # MainPID 0 (not running) would make this `kill -STOP 0`: the test's own process group.
    [ -n "$before" ] && [ "$before" != 0 ] || { echo "tiltd.service is not running"; return 1; }
    inside kill -STOP "$before"
    wait_for 40 sh -c "p=\$(timeout 30 nsenter --target $container_init --all -- systemctl show -P MainPID tiltd.service); [ \"\$p\" != 0 ] && [ \"\$p\" != $before ]" \
        || { echo "MainPID still $(mainpid)"; return 1; }
    wait_for 20 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl is-active tiltd.service | grep -qx active" || return 1
    journal -u tiltd.service | grep -q 'Watchdog timeout' || { echo "no watchdog timeout in the journal"; return 1; }
    echo "restarts: $restarts -> $(inside systemctl show -P NRestarts tiltd.service)"
}

# ---- reload applied / refused
reload_good() {
    wait_for 15 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl show -P StatusText tiltd.service | grep -q 'Hz from'" || true
    write_config 2
    inside systemctl reload tiltd.service || { echo "systemctl reload failed"; return 1; }
    local hz
    hz=$(inside runuser -u watcher -- tiltd-test-client hello | python3 -c 'import json,sys; print(json.load(sys.stdin)["watch"]["attitude_hz"])')
    [ "$hz" = 2 ] || { echo "new clients got attitude_hz $hz, not 2"; return 1; }
    wait_for 10 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl show -P StatusText tiltd.service | grep -q 'Hz from'" \
        || { echo "STATUS= stayed '$(status_text)'"; return 1; }
    echo "STATUS=$(status_text)"
}

reload_bad() {
    local pid rc=0 hz since
    pid=$(mainpid)
    since=$(inside date '+%Y-%m-%d %H:%M:%S')
    write_config 5 'bogus = 1'
    inside systemctl reload tiltd.service || rc=$?
    echo "systemctl reload exit: $rc"
    [ "$rc" -ne 0 ] || { echo "a refused config must fail the reload"; return 1; }
    [ "$(mainpid)" = "$pid" ] && [ "$(inside systemctl is-active tiltd.service)" = active ] || { echo "daemon restarted or stopped"; return 1; }
    hz=$(inside runuser -u watcher -- tiltd-test-client hello | python3 -c 'import json,sys; print(json.load(sys.stdin)["watch"]["attitude_hz"])')
    [ "$hz" = 2 ] || { echo "old config not kept: attitude_hz $hz"; return 1; }
    journal -u tiltd.service --since "$since" | grep -E '/etc/tiltd/tiltd.toml:[0-9]+:' || { echo "no file:line in the journal"; return 1; }
}

# ---- GPS
gps() {
    local fix
    fix=$(inside runuser -u watcher -- tiltd-test-client fix) || return 1
    echo "$fix"
    echo "$fix" | python3 -c 'import json,sys; f=json.load(sys.stdin); sys.exit(0 if f["mode"] >= 2 and "lat" in f else 1)'
}

# ---- trust by supplementary group
trust() {
    local yes no
    yes=$(inside runuser -u player -- tiltd-test-client reply game.start) || return 1
    no=$(inside runuser -u watcher -- tiltd-test-client reply game.start) || return 1
    echo "player (supplementary gamers): $yes"; echo "watcher (tiltd only): $no"
    echo "$yes" | grep -q '"ok":true' && echo "$no" | grep -q '"forbidden"'
}

# ---- the web screen, as installed
clean_journal_of() {  # clean_journal_of UNIT SINCE
    local warnings
    warnings=$(journal -u "$1" --since "$2" -p warning)
    [ -z "$warnings" ] || { echo "$1 logged:"; echo "$warnings"; return 1; }
}

served() {  # served PATH [TEXT]: the web screen answers PATH (containing TEXT)
    inside python3 -c 'import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:8080" + sys.argv[1], timeout=5).read().decode()
sys.exit(0 if sys.argv[2] in body else 1)' "$1" "${2:-}"
}

web() {
    local since reply
    since=$(inside date '+%Y-%m-%d %H:%M:%S')
    exposure_of tiltd-web.service 2.0 || return 1
    inside systemctl start tiltd-web.service || return 1
    wait_for 20 served / '<html' \
        || { echo "tiltd-web.service: $(inside systemctl is-active tiltd-web.service), / not served"; journal -u tiltd-web.service | tail -n 5; return 1; }
    wait_for 10 served /metrics 'tiltd_up 1' || { echo "/metrics has no tiltd_up 1"; return 1; }
    echo "/ and /metrics (tiltd_up 1) served"
    # A round may run (the trust check started one): stop it, then start one.
    reply=$(inside tiltd-test-browser game.stop game.start 2>&1) || { echo "$reply"; return 1; }
    echo "browser's game.stop, game.start: $reply" | cut -c1-300
    tail -n 1 <<< "$reply" | grep -q '"ok":true' || return 1
    clean_journal_of tiltd-web.service "$since"
}

# ---- the MQTT bridge, as installed, against the container's Mosquitto
mqtt() {
    local since online reply discovery
    since=$(inside date '+%Y-%m-%d %H:%M:%S')
    exposure_of tiltd-mqtt.service 2.0 || return 1
    inside systemctl start mosquitto.service || return 1
    wait_for 20 sh -c "timeout 30 nsenter --target $container_init --all -- ss -Hltn 'sport = :1883' | grep -q LISTEN" \
        || { echo "mosquitto did not listen"; return 1; }
    inside systemctl start tiltd-mqtt.service || return 1
    online=$(inside mosquitto_sub -h 127.0.0.1 -t tiltd/pi/status -C 1 -W 20) \
        || { echo "no retained tiltd/pi/status"; journal -u tiltd-mqtt.service | tail -n 5; return 1; }
    echo "tiltd/pi/status: $online"
    [ "$online" = online ] || return 1
    discovery=$(inside mosquitto_sub -h 127.0.0.1 -t 'homeassistant/#' -v -W 3 2>/dev/null | grep -c '"availability' || true)
    echo "Home Assistant discovery configs: $discovery"
    [ "$discovery" -ge 1 ] || return 1
    # The reply topic is not retained: subscribe first, then send the command.
    inside sh -c 'mosquitto_sub -h 127.0.0.1 -t tiltd/pi/reply -C 1 -W 20 > /tmp/reply & sleep 1
        mosquitto_pub -h 127.0.0.1 -q 1 -t tiltd/pi/cmd -m "{\"cmd\":\"status\",\"id\":\"ha-1\"}"; wait $!' \
        || { echo "no reply on tiltd/pi/reply"; return 1; }
    reply=$(inside cat /tmp/reply)
    echo "tiltd/pi/reply: $reply" | cut -c1-200
    grep -q '"ok":true' <<< "$reply" && grep -q '"ha-1"' <<< "$reply" || return 1
    clean_journal_of tiltd-mqtt.service "$since"
}

# ---- tiltd calibrate gyro with the service running: the daemon measures (it holds the IMU), the
# command writes the calibration file and has the daemon reload it; the daemon is never restarted.
replay_file() {  # replay_file FILE: the unit replays /test/FILE from now on (restarted, streaming)
    inside sed -i "s#--replay /test/[a-z]*\.csv#--replay /test/$1#" /etc/systemd/system/tiltd.service.d/replay.conf
    inside systemctl daemon-reload
    # The earlier checks' restarts count towards StartLimitBurst= too; this one is the test's own.
    inside systemctl reset-failed tiltd.service
    inside systemctl restart tiltd.service || return 1
    wait_for 20 sh -c "timeout 30 nsenter --target $container_init --all -- systemctl show -P StatusText tiltd.service | grep -q 'Hz from replay $1'" \
        || { inside systemctl status --no-pager -n 15 tiltd.service; return 1; }
}
calibrate_gyro() {
    # The demo head nods and walks, never still for long: a still device with a known bias
    # (0.0120, -0.0080, 0.0050) rad/s and a little noise, ten minutes at 60 Hz (times with %.0f:
    # mawk's %d stops at 2^31 ns).
    awk 'BEGIN { print "t_ns,ax,ay,az,gx,gy,gz"; srand(3)
        for (i = 0; i < 36000; i++) printf "%.0f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f\n", 1000000000 + i * 16666667,
            0.02 + 0.01 * (rand() - 0.5), -0.01 + 0.01 * (rand() - 0.5), 9.80665 + 0.01 * (rand() - 0.5),
            0.012 + 0.002 * (rand() - 0.5), -0.008 + 0.002 * (rand() - 0.5), 0.005 + 0.002 * (rand() - 0.5) }' \
        > "$work/still.csv"
    replay_file still.csv || { echo "tiltd did not come back streaming the still recording"; return 1; }
    local before out applied
    before=$(mainpid)
    applied=$(inside systemctl show -P ExecMainStartTimestampMonotonic tiltd.service)
    out=$(inside tiltd calibrate gyro --seconds 2 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    grep -q 'the daemon measures' <<< "$out" || { echo "the command did not ask the daemon"; return 1; }
    grep -q 'the daemon reloaded its config and uses the new bias' <<< "$out" || return 1
    [ "$(mainpid)" = "$before" ] && [ "$(inside systemctl show -P ExecMainStartTimestampMonotonic tiltd.service)" = "$applied" ] \
        || { echo "tiltd.service was restarted (MainPID $before -> $(mainpid))"; return 1; }
    # The file holds the recording's bias (within the noise), and the daemon applied it.
    inside cat /etc/tiltd/calibration.toml | python3 -c 'import re, sys
t = sys.stdin.read(); m = re.search(r"^gyro_bias = \[([^]]*)\]", t, re.M)
b = [float(x) for x in m.group(1).split(",")] if m else []
print("calibration.toml: gyro_bias", b)
sys.exit(0 if len(b) == 3 and all(abs(x - w) < 0.0005 for x, w in zip(b, (0.012, -0.008, 0.005))) else 1)' || return 1
    journal -u tiltd.service | grep -q 'calibrate.gyro: bias' || { echo "no calibrate.gyro line in the journal"; return 1; }
    inside runuser -u watcher -- tiltd-test-client reply stats | grep -q '"applied":[1-9]' || { echo "no reload applied"; return 1; }
    # An untrusted user is refused before anything is measured; the file is not touched by it.
    out=$(inside runuser -u watcher -- tiltd calibrate gyro --seconds 1 --config /etc/tiltd/tiltd.toml 2>&1) \
        && { echo "an untrusted user's calibrate.gyro succeeded: $out"; return 1; }
    echo "untrusted: $out"
    grep -q 'forbidden\|not trusted' <<< "$out" || return 1
    replay_file head.csv
}

# ---- stop
stop() {
    local since
    since=$(inside date '+%Y-%m-%d %H:%M:%S')
    inside systemctl stop tiltd.service tiltd.socket || return 1
    local result state
    result=$(inside systemctl show -P Result tiltd.service); state=$(inside systemctl show -P ActiveState tiltd.service)
    echo "Result=$result ActiveState=$state"
    [ "$result" = success ] && [ "$state" = inactive ] || return 1
    ! journal -u tiltd.service --since "$since" | grep -E 'SIGKILL|timed out'
}

# ---- man pages, as scripts/install put them
man_pages() {
    local page out
    for page in tiltd tiltd-web tiltd.toml tiltd-protocol; do
        out=$(inside env MANPAGER=cat MANWIDTH=80 man "$page" 2>&1) || { echo "man $page: $out" | head -n 5; return 1; }
        echo "man $page: $(echo "$out" | head -n 1)"
    done
}
