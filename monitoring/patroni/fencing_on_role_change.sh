#!/usr/bin/env bash
# monitoring/patroni/fencing_on_role_change.sh: Patroni's on_role_change
# callback for fencing.  When this node becomes the primary, it runs
# SELECT * FROM fencing.fence_older_timelines() in every database that has
# the extension, again and again until it returns 0 (nothing left below the
# floor of the new timeline), so that a writer the old primary had fenced
# with a term an asynchronous failover lost is refused at once, without
# waiting for each scope's next term.  Retries while the server still ends
# its recovery or refuses connections; logs every step.  Any other role, and
# any other callback, does nothing.
#
# Patroni appends three arguments to the command it is configured with:
#   fencing_on_role_change.sh [OPTIONS] on_role_change <role> <cluster>
# (role master in Patroni 3, primary in Patroni 4).  OPTIONS, each also an
# environment variable (libpq's PGHOST, PGPORT, PGUSER, PGPASSFILE apply too):
#   --host H        PGHOST: the socket directory or host of this node's server
#   --port P        PGPORT
#   --user U        PGUSER: a superuser (fence_older_timelines() raises every
#                   owner's scopes)
#   --dbname D      FENCING_CALLBACK_DBNAME: the database that lists the
#                   others (default postgres)
#   --log FILE      FENCING_CALLBACK_LOG: append the log lines there too (they
#                   always go to standard error, i.e. Patroni's log)
#   --retries N     FENCING_CALLBACK_RETRIES: attempts (default 60)
#   --interval S    FENCING_CALLBACK_INTERVAL: seconds between them (default 2)
#   --psql PATH     FENCING_CALLBACK_PSQL: the psql to run (default: psql in PATH)
# Exits 0 when every database is fenced (or there is nothing to do), 1 when
# it gave up, 2 on bad arguments.  Patroni runs one callback at a time and
# kills a running one when the next starts (a quick demotion ends this one).
set -uo pipefail

host=${PGHOST:-} port=${PGPORT:-} user=${PGUSER:-}
dbname=${FENCING_CALLBACK_DBNAME:-postgres}
logfile=${FENCING_CALLBACK_LOG:-}
retries=${FENCING_CALLBACK_RETRIES:-60}
interval=${FENCING_CALLBACK_INTERVAL:-2}
psql_bin=${FENCING_CALLBACK_PSQL:-psql}

# One line per message: control characters (a newline in a database name or
# in psql's error) become spaces, so that no message fakes another line.
log() {
    local line
    line="$(date -u +%Y-%m-%dT%H:%M:%SZ) fencing_on_role_change[$$]: $*"
    line=${line//[[:cntrl:]]/ }
    printf '%s\n' "$line" >&2
    [ -n "$logfile" ] && printf '%s\n' "$line" >> "$logfile"
    return 0
}

while [ $# -gt 3 ]; do
    case $1 in
        --host) host=$2 ;;
        --port) port=$2 ;;
        --user) user=$2 ;;
        --dbname) dbname=$2 ;;
        --log) logfile=$2 ;;
        --retries) retries=$2 ;;
        --interval) interval=$2 ;;
        --psql) psql_bin=$2 ;;
        *) log "unknown option $1"; exit 2 ;;
    esac
    shift 2 || { log "option $1 needs a value"; exit 2; }
done
if [ $# -ne 3 ]; then
    log "usage: $0 [OPTIONS] on_role_change <role> <cluster> (Patroni appends the last three)"
    exit 2
fi
action=$1 role=$2 cluster=$3
case $retries in ''|*[!0-9]*) log "--retries must be a number, not \"$retries\""; exit 2 ;; esac
case $interval in ''|*[!0-9.]*) log "--interval must be a number of seconds, not \"$interval\""; exit 2 ;; esac

if [ "$action" != on_role_change ] && [ "$action" != on_start ]; then
    exit 0
fi
case $role in
    master|primary) ;;
    *) log "cluster $cluster: $action, role $role: nothing to do"; exit 0 ;;
esac

# Database $1's name as the log shows it: in double quotes, with " and \
# escaped.
dbq() {
    local v=$1
    v=${v//\\/\\\\}
    v=${v//\"/\\\"}
    printf '"%s"' "$v"
}

# A conninfo string for database $1: the name quoted, so that a database
# named like a connection string ("x host=elsewhere") stays a name.
conninfo() {
    local v=$1
    v=${v//\\/\\\\}
    v=${v//\'/\\\'}
    printf "dbname='%s'" "$v"
}

# sql DB SQL [PSQL OPTIONS]: one statement, its unaligned output (and
# errors); fails on any error.
sql() {
    local db=$1 q=$2 args=(-X -A -t -q -v ON_ERROR_STOP=1)
    shift 2
    [ -n "$host" ] && args+=(-h "$host")
    [ -n "$port" ] && args+=(-p "$port")
    [ -n "$user" ] && args+=(-U "$user")
    # notices and warnings (a library not preloaded) would mix with the
    # output; a lock wait (a long transaction of a scope's writer) fails and
    # is retried rather than hanging until Patroni's next callback
    PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=error -c lock_timeout=10s" \
    PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-5} "$psql_bin" "${args[@]}" "$@" -d "$(conninfo "$db")" -c "$q" 2>&1
}

# fence DB: fence_older_timelines() until it returns 0, then check that no
# 'issued' scope is left below the floor.  0 when done (or no extension), 1
# to retry, 2 when it cannot be done here (a version without the function).
fence() {
    local db=$1 out calls=0 lifted=0 n left tl
    out=$(sql "$db" "SELECT e.extversion OPERATOR(pg_catalog.||) CASE WHEN pg_catalog.to_regprocedure('fencing.fence_older_timelines(integer)') IS NULL THEN ' no' ELSE ' yes' END FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'fencing'") ||
        { log "database $(dbq "$db"): $out"; return 1; }
    [ -n "$out" ] || return 0
    if [ "${out##* }" != yes ]; then
        log "database $(dbq "$db"): fencing ${out% *} has no fence_older_timelines(): run ALTER EXTENSION fencing UPDATE there"
        return 2
    fi
    tl=$(sql "$db" "SELECT timeline OPERATOR(pg_catalog.||) ', floor ' OPERATOR(pg_catalog.||) term_floor FROM fencing.clock_timeline()") ||
        { log "database $(dbq "$db"): $tl"; return 1; }
    while :; do
        n=$(sql "$db" "SELECT * FROM fencing.fence_older_timelines()") ||
            { log "database $(dbq "$db"): fence_older_timelines() failed after $calls call(s), $lifted mark(s) raised: $n"; return 1; }
        calls=$((calls + 1))
        case $n in ''|*[!0-9]*) log "database $(dbq "$db"): fence_older_timelines() returned \"$n\""; return 1 ;; esac
        [ "$n" -eq 0 ] && break
        lifted=$((lifted + n))
        log "database $(dbq "$db"): fence_older_timelines() raised $n mark(s)"
    done
    left=$(sql "$db" "SELECT count(*) FROM fencing.scopes s, fencing.clock_timeline() c WHERE s.tokens OPERATOR(pg_catalog.=) 'issued' AND s.mark OPERATOR(pg_catalog.<) c.term_floor") ||
        { log "database $(dbq "$db"): $left"; return 1; }
    if [ "$left" != 0 ]; then
        log "database $(dbq "$db"): $left scope(s) still below the floor after $calls call(s)"
        return 1
    fi
    log "database $(dbq "$db"): timeline $tl: $lifted mark(s) raised in $calls call(s); nothing left"
    return 0
}

log "cluster $cluster: $action, role $role: fencing the terms of older timelines"
pending=()
unable=()
listed=
for attempt in $(seq 1 "$retries"); do
    [ "$attempt" -gt 1 ] && sleep "$interval"
    if ! out=$(sql "$dbname" "SELECT pg_catalog.pg_is_in_recovery()"); then
        log "attempt $attempt/$retries: cannot connect yet: ${out//$'\n'/ }"
        continue
    fi
    if [ "$out" != f ]; then
        log "attempt $attempt/$retries: the server is still in recovery"
        continue
    fi
    if [ -z "$listed" ]; then
        # NUL-separated: a database name may hold any character but NUL
        pending=()
        while IFS= read -r -d '' db; do
            pending+=("$db")
        done < <(sql "$dbname" "SELECT datname FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname" -0)
        if [ ${#pending[@]} -eq 0 ]; then
            log "attempt $attempt/$retries: cannot list the databases"
            continue
        fi
        listed=1
    fi
    still=()
    for db in "${pending[@]}"; do
        fence "$db"
        case $? in
            0) ;;
            2) unable+=("$db") ;;
            *) still+=("$db") ;;
        esac
    done
    pending=("${still[@]}")
    [ ${#pending[@]} -eq 0 ] && break
    log "attempt $attempt/$retries: ${#pending[@]} database(s) left"
done
if [ -n "$listed" ] && [ ${#pending[@]} -eq 0 ] && [ ${#unable[@]} -eq 0 ]; then
    log "cluster $cluster: every database is fenced"
    exit 0
fi
[ ${#unable[@]} -gt 0 ] &&
    log "cluster $cluster: databases whose fencing is too old to fence older timelines: ${unable[*]}"
[ -z "$listed" ] || [ ${#pending[@]} -gt 0 ] &&
    log "cluster $cluster: gave up after $retries attempt(s); databases not fenced: ${pending[*]:-(all: the server never accepted the queries)}"
log "cluster $cluster: not every database is fenced: run SELECT fencing.fence_older_timelines(); as a superuser in each database left, until it returns 0."
exit 1
