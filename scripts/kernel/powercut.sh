# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# Sourced by guest-init for kt.suite=powercut (busybox sh). One boot of the power-cut series:
# checks the store the previous boot left on /dev/vdb (PRAGMA integrity_check, the ledger), then,
# unless this is the last boot (kt.last=1), starts tiltd on it with a GPX walk that earns credits
# and prints every credit/quest line a client receives; the host kills QEMU at a random moment.
# Console lines: KT-PC-INTEGRITY, KT-PC-LEDGER <request_id> <kind> <amount>, KT-PC-BALANCE,
# KT-PC-QC <cell_id> <t_ns> (quest_completions), KT-PC-READY, KT-PC-SEEN <json line>,
# KT-PC-CREDITS <reply>.
boot=0 last=0
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        kt.boot=*) boot=${arg#kt.boot=} ;;
        kt.last=*) last=${arg#kt.last=} ;;
    esac
done
modprobe crc32c_generic 2>/dev/null
modprobe ext4
mkdir -p /store
n=50; while [ $n -gt 0 ] && [ ! -b /dev/vdb ]; do usleep 100000; n=$((n - 1)); done
if ! mount -t ext4 /dev/vdb /store; then
    echo "KT-PC-MOUNT failed"
else
    echo "KT-PC-MOUNT ok boot=$boot"
    db=/store/tiltd.sqlite
    if [ -f "$db" ]; then
        echo "KT-PC-INTEGRITY $(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1 | tr '\n' ' ')"
        sqlite3 -separator ' ' "$db" 'SELECT request_id, kind, amount FROM credit_ledger ORDER BY id' 2>&1 |
            while read -r l; do echo "KT-PC-LEDGER $l"; done
        echo "KT-PC-BALANCE $(sqlite3 "$db" 'SELECT balance FROM credit_balance' 2>&1) $(sqlite3 "$db" 'SELECT COALESCE(SUM(amount), 0) FROM credit_ledger' 2>&1)"
        sqlite3 -separator ' ' "$db" 'SELECT cell_id, t_ns FROM quest_completions ORDER BY id' 2>&1 |
            while read -r l; do echo "KT-PC-QC $l"; done
    else
        echo "KT-PC-INTEGRITY none (no store yet)"
    fi
    if [ "$last" != 1 ]; then
        # Each boot walks on another day, so every boot earns new credits (request ids carry the
        # enter time); the same walk twice in a boot would not.
        day=$(printf '%02d' $(( (boot % 28) + 1 )))
        sed "s/2024-05-04T/2024-06-${day}T/g" /rig/walk.gpx > /tmp/walk.gpx
        cat > /tmp/pc.toml <<CFG
[socket]
path = "/run/tiltd.sock"
[store]
path = "$db"
[places]
file = "/rig/places.geojson"
credit_categories = ["cafe"]
[quests]
enabled = true
[log]
level = "info"
CFG
        tiltd run --config /tmp/pc.toml --replay /rig/rec.csv --gpx /tmp/walk.gpx --gpx-speed "${KT_GPX_SPEED:-400}" \
            > /tmp/tiltd.log 2>&1 &
        n=300; while [ $n -gt 0 ] && [ ! -S /run/tiltd.sock ]; do usleep 100000; n=$((n - 1)); done
        if [ -S /run/tiltd.sock ]; then
            echo "KT-PC-READY boot=$boot uptime=$(cut -d' ' -f1 /proc/uptime)"
            # The client: records every credit/quest line on the console and completes each quest
            # it is offered (a quest.complete through the same connection, held open on fd 3).
            rm -f /tmp/pc.in; mkfifo /tmp/pc.in
            socat - UNIX-CONNECT:/run/tiltd.sock < /tmp/pc.in |
                while read -r l; do
                    case "$l" in
                        *'"class":"quest"'*'"event":"available"'*)
                            echo "KT-PC-SEEN $l"
                            cell=$(echo "$l" | sed -n 's/.*"cell_name":"\([^"]*\)".*/\1/p')
                            echo "{\"cmd\":\"quest.complete\",\"id\":2,\"cell\":\"$cell\"}" > /tmp/pc.in ;;
                        *'"class":"credit"'*|*'"class":"quest"'*) echo "KT-PC-SEEN $l" ;;
                        *'"cmd":"credits"'*) echo "KT-PC-CREDITS $l" ;;
                    esac
                done &
            # The client ahead of the daemon on the one busy virtual CPU, so that a line it gets
            # reaches the console before the next cut rather than seconds later.
            # shellcheck disable=SC2046 # pidof prints several pids
            renice -n -15 -p $! $(pidof socat) > /dev/null 2>&1
            exec 3> /tmp/pc.in
            echo '{"cmd":"watch","classes":["credit","quest"],"attitude_hz":0}' >&3
            echo '{"cmd":"credits","id":1}' >&3
            sleep 600
        else
            echo "KT-PC-NOSOCKET"; tail -20 /tmp/tiltd.log
        fi
    fi
    umount /store
fi
