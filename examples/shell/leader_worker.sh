#!/usr/bin/env bash
# A leader worker with fencing's leases, in shell: each call is one psql run.
#
#   leader_worker.sh NAME [SCOPE]          # connection from PGHOST, PGPORT, ...
#
# The same loop as examples/python/leader_worker.py: elect yourself with
# fencing.acquire_lease() (the term is your fencing token), declare the term
# in every transaction with fencing.use_token(), renew between batches, and
# stop writing on SQLSTATE ZF001 or a refused renewal; then elect again (a new
# lease always comes with a new, higher term). The table is examples/schema.sql's.
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

renew() {
    local renewed holder current
    read -r renewed holder current < <(sql -v term="$term" <<'SQL'
SELECT renewed, coalesce(lease_holder, 'nobody'), lease_term
  FROM fencing.renew_lease(:'scope', :'holder', :term, :'ttl');
SQL
)
    [ "$renewed" = t ] && return 0
    log "renewal refused: the lease is $holder's (term $current); stop writing"
    return 1
}

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
    while [ "$done" -lt "$BATCHES" ]; do
        write_batch $((done + 1)) || break                  # fenced: elect again
        done=$((done + 1))
        [ "$done" -lt "$BATCHES" ] && { renew || break; }   # lost the lease: elect again
    done
    if [ "$done" -ge "$BATCHES" ]; then
        sql -v term="$term" -o /dev/null <<<"SELECT fencing.release_lease(:'scope', :'holder', :term);"
        log "released the lease"
    else
        sleep 0.5
    fi
done
log "done: $BATCHES batches"
