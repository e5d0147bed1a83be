#!/usr/bin/env bash
# A worker that takes its fencing token from etcd.
#
#   ETCDCTL_ENDPOINTS=http://127.0.0.1:2379 etcd_worker.sh NAME [SCOPE]
#                                        # database from PGHOST, PGPORT, ...
#
# Leadership is an etcd lock (`etcdctl lock`, a session with a TTL kept alive
# by etcdctl). The token is the lock key's mod_revision: etcd revisions only go
# up, so each new holder of the lock has a higher one. (Not the response
# header's revision, nor ETCD_LOCK_REV, which is that header's.) The worker
# declares it with fencing.use_token() in every transaction. Right after it
# gets the lock it calls fencing.takeover(scope, token), which raises the
# scope's mark at once: from then on the previous holder's writes fail with
# SQLSTATE ZF001 — even though nothing tells a paused etcdctl, or its child,
# that the session was lost, and before this worker writes anything.
# (TAKEOVER=0 leaves that out: the mark then rises only at the first write,
# and a resumed old holder can still commit until then; test/stages/etcd_takeover
# shows both.)
# The table is examples/schema.sql's. Debian: apt-get install etcd-client.
set -uo pipefail

NAME=$1
SCOPE=${2:-example-etcd}
HOLDER="$NAME@$(hostname):$$"
LOCK=fencing-example/$SCOPE             # the etcd lock's name
TTL=${LEASE_TTL:-2}                     # etcd session TTL, seconds
BATCHES=${BATCHES:-3} ITEMS=${ITEMS:-3} GAP=${ITEM_GAP:-0.3}
TAKEOVER=${TAKEOVER:-1}                 # fence the previous holder at once
HOLD=${HOLD_BEFORE_WRITE:-0}            # seconds between takeover and first write (tests)
HOLD_UNTIL=${HOLD_UNTIL_FILE:-}         # then also until this file exists, at most 120 s (tests)
export ETCDCTL_API=3 PGOPTIONS="-c idle_in_transaction_session_timeout=$((TTL * 500))ms"

log() { echo "$NAME: $*"; }

lock_pid=
acquire() {   # wait for the lock; sets key and token
    coproc LOCKER { exec etcdctl lock --ttl="$TTL" "$LOCK"; }
    lock_pid=$LOCKER_PID
    read -r key <&"${LOCKER[0]}" || { log "etcdctl lock failed"; return 1; }
    token=$(etcdctl get "$key" -w fields | awk '$1 == "\"ModRevision\"" {print $3}')
    [ -n "$token" ] || { log "lock key $key is gone already"; release; return 1; }
    log "leading with token $token (mod_revision of $key)"
    if [ "$TAKEOVER" = 1 ]; then
        local err
        if ! err=$(psql -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -v scope="$SCOPE" -v token="$token" \
                        2>&1 >/dev/null <<<"SELECT fencing.takeover(:'scope', :token)"); then
            log "takeover failed: ${err//$'\n'/ }"; release; return 1
        fi
        log "took over with token $token: the previous holder is fenced"
    fi
    sleep "$HOLD"
    if [ -n "$HOLD_UNTIL" ]; then
        local i
        for i in $(seq 1 1200); do [ -e "$HOLD_UNTIL" ] && break; sleep 0.1; done
    fi
}

holding() {   # is our lock key still there? (the etcd session is alive)
    [ "$(etcdctl get "$key" -w fields | awk '$1 == "\"Count\"" {print $3}')" = 1 ]
}

release() {   # etcdctl unlocks on SIGTERM
    [ -n "$lock_pid" ] && { kill "$lock_pid" 2>/dev/null; wait "$lock_pid" 2>/dev/null; }
    lock_pid=
}
trap release EXIT

write_batch() {   # write_batch BATCH: one transaction per item
    local item err
    for item in $(seq 1 "$ITEMS"); do
        if ! err=$(psql -X -q -1 -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -v scope="$SCOPE" \
                        -v holder="$HOLDER" -v token="$token" -v batch="$1" -v item="$item" \
                        2>&1 >/dev/null <<'SQL'
SELECT fencing.use_token(:'scope', :token);
INSERT INTO example_writes (scope, worker, batch, item) VALUES (:'scope', :'holder', :batch, :item);
SQL
); then
            case $err in
            *ZF001*) log "write rejected, SQLSTATE ZF001: $(grep -m1 DETAIL <<<"$err"); stop writing" ;;
            *)       log "write failed: ${err//$'\n'/ }; stop writing" ;;
            esac
            return 1
        fi
        log "batch $1 item $item committed (token $token)"
        sleep "$GAP"
    done
}

done=0
while [ "$done" -lt "$BATCHES" ]; do
    acquire || { sleep 0.5; continue; }
    while [ "$done" -lt "$BATCHES" ]; do
        write_batch $((done + 1)) || break                 # fenced: stop, lock again
        done=$((done + 1))
        [ "$done" -lt "$BATCHES" ] && ! holding && { log "lock lost (etcd session expired); stop writing"; break; }
    done
    release
    [ "$done" -ge "$BATCHES" ] && log "released the lock"
done
log "done: $BATCHES batches"
