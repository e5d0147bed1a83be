#!/usr/bin/env bash
# A leader worker with fencing's leases, in shell: each call is one psql run.
#
#   leader_worker.sh NAME [SCOPE]          # connection from PGHOST, PGPORT, ...
#
# The same loop as examples/python/leader_worker.py: elect yourself with
# fencing.acquire_lease() (the term is your fencing token), declare the term
# in every transaction with fencing.use_token(), keep the lease renewed, and
# stop writing on SQLSTATE ZF001 or a refused renewal; then elect again (a new
# lease always comes with a new, higher term). The table is examples/schema.sql's.
#
# Each psql run costs a process and a connection, so a batch can take longer
# than the lease under load: the lease is renewed by a heartbeat in the
# background, every third of its TTL, whatever the batches take (as etcd's
# lock keeps its session alive). The heartbeat's verdict is read between
# batches; within a batch nothing is asked, and a worker that was paused (or
# stalled) past its lease is stopped by the fence: its next write is
# rejected with ZF001.
set -uo pipefail

NAME=$1
SCOPE=${2:-example-shell}
HOLDER="$NAME@$(hostname):$$"          # unique per process
TTL=${LEASE_TTL:-2}                     # lease, seconds
BATCHES=${BATCHES:-3} ITEMS=${ITEMS:-3} GAP=${ITEM_GAP:-0.3}
# a frozen worker must not keep a transaction open past its lease
export PGOPTIONS="-c idle_in_transaction_session_timeout=$((TTL * 500))ms"

log() { echo "$NAME: $*"; }

# sql [psql options] <<'SQL' ... : values are passed as psql variables
# (:'scope' quotes them), never pasted into the SQL text.
sql() {
    psql -X -q -At -F ' ' -v ON_ERROR_STOP=1 -v VERBOSITY=verbose \
         -v scope="$SCOPE" -v holder="$HOLDER" -v ttl="$TTL seconds" "$@"
}

acquire() {   # sets term
    local granted holder until
    while :; do
        read -r granted term holder until < <(sql <<'SQL'
SELECT granted, term, lease_holder, to_char(expires_at, 'HH24:MI:SS.MS')
  FROM fencing.acquire_lease(:'scope', :'holder', :'ttl');
SQL
)
        [ "$granted" = t ] && { log "leading with token $term"; return 0; }
        log "lease held by ${holder:-?} (term ${term:-?}) until ${until:-?}; waiting"
        sleep 0.5
    done
}

renew() {      # one renewal; prints why when it is refused
    local renewed holder current
    read -r renewed holder current < <(sql -v term="$term" <<'SQL'
SELECT renewed, coalesce(lease_holder, ''), coalesce(lease_term::text, '')
  FROM fencing.renew_lease(:'scope', :'holder', :term, :'ttl');
SQL
)
    [ "$renewed" = t ] && return 0
    if [ -n "$holder" ]; then
        echo "renewal refused: the lease is $holder's (term $current); stop writing"
    else
        echo "renewal refused: the lease expired and nobody holds it (my term $term is over); stop writing"
    fi
    return 1
}

# heartbeat: renews the lease every TTL/3 seconds; when a renewal is
# refused it says why and ends, which the loop below sees between batches.
# Started after each election, stopped before the next; it ends with us.
beat=
start_heartbeat() {
    ( while sleep "$(awk -v t="$TTL" 'BEGIN { printf "%.3f", t / 3 }')"; do
          kill -0 $$ 2>/dev/null || exit 0               # the worker is gone
          why=$(renew) || { log "$why"; exit 0; }
      done ) &
    beat=$!
}
stop_heartbeat() {
    [ -n "$beat" ] || return 0
    kill "$beat" 2>/dev/null; wait "$beat" 2>/dev/null; beat=
}
lease_lost() { ! kill -0 "$beat" 2>/dev/null; }   # the heartbeat ended: refused
trap stop_heartbeat EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

write_batch() {   # write_batch BATCH: one transaction per item (psql -1)
    local item err
    for item in $(seq 1 "$ITEMS"); do
        if ! err=$(sql -1 -v term="$term" -v batch="$1" -v item="$item" 2>&1 >/dev/null <<'SQL'
SELECT fencing.use_token(:'scope', :term);
INSERT INTO example_writes (scope, worker, batch, item) VALUES (:'scope', :'holder', :batch, :item);
SQL
); then
            case $err in
            *ZF001*) log "write rejected, SQLSTATE ZF001: $(grep -m1 DETAIL <<<"$err"); stop writing" ;;
            *)       log "write failed: ${err//$'\n'/ }; stop writing" ;;
            esac
            return 1
        fi
        log "batch $1 item $item committed (token $term)"
        sleep "$GAP"
    done
}

done=0
while [ "$done" -lt "$BATCHES" ]; do
    acquire
    start_heartbeat
    while [ "$done" -lt "$BATCHES" ]; do
        write_batch $((done + 1)) || break                  # fenced: elect again
        done=$((done + 1))
        [ "$done" -lt "$BATCHES" ] && lease_lost && break   # lost the lease: elect again
    done
    stop_heartbeat
    if [ "$done" -ge "$BATCHES" ]; then
        sql -v term="$term" -o /dev/null <<<"SELECT fencing.release_lease(:'scope', :'holder', :term);"
        log "released the lease"
    else
        sleep 0.5
    fi
done
log "done: $BATCHES batches"
