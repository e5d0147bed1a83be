# test/lib.sh: shared by test/run, the stages (test/stages/*) and the
# benchmarks (test/bench/*).  Installs prerequisites, builds and installs the
# extension, gives a non-root user and a scratch directory for throwaway
# clusters, and holds the one table of the ports they listen on.
# Source it; it defines functions and that table only.

FENCING_PG_MAJOR=${FENCING_PG_MAJOR:-15}
FENCING_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# The script's path in the tree (test/run, test/demo, ...), for messages.
fencing_cmd() {
    local here
    here=$(cd "$(dirname "$0")" && pwd)
    echo "${here#"$FENCING_TOP"/}/$(basename "$0")"
}

# FENCING_ASROOT: how to run a command as root: nothing when we are root,
# "sudo -n" when sudo works without a password; false when neither (sudo is
# never asked for a password: a test must not stop at a prompt).
fencing_asroot() {
    FENCING_ASROOT=()
    [ "$(id -u)" -eq 0 ] && return 0
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        FENCING_ASROOT=(sudo -n)
        return 0
    fi
    return 1
}

# Debian packages the tests and the demo need, and any named as arguments
# (the packaging check and the examples add theirs); installed with apt-get
# when root, or with sudo (fencing_apt_install: quietly, no service started).
fencing_prereqs() {
    local pkgs=(make gcc "postgresql-$FENCING_PG_MAJOR" "postgresql-server-dev-$FENCING_PG_MAJOR"
                "postgresql-client-$FENCING_PG_MAJOR" libipc-run-perl perl python3 "$@")
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! fencing_asroot; then
        say "$(fencing_cmd) needs the Debian packages ${missing[*]}, which are not installed: run it as root or as a user with sudo (after \`sudo -v\` if sudo asks for a password: the tests never prompt; it installs them with apt-get), or have them installed first."
        return 1
    fi
    fencing_apt_install "${missing[@]}"
}

# Where apt-get's and dpkg's output goes (the screen gets one line per
# install): FENCING_INSTALL_LOG, else ~/.local/state/fencing/install.log.
fencing_install_log() {
    local dir
    if [ -n "${FENCING_INSTALL_LOG:-}" ]; then echo "$FENCING_INSTALL_LOG"; return; fi
    dir=${XDG_STATE_HOME:-${HOME:-/root}/.local/state}/fencing
    if mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ]; then echo "$dir/install.log"; else echo /dev/null; fi
}

# fencing_apt_install PACKAGE...: apt-get install as root (FENCING_ASROOT set
# by fencing_asroot), its output in the install log.  No service of what it
# installs is started or left enabled: /usr/sbin/policy-rc.d (exit 101: Debian's
# maintainer scripts then start nothing) while it runs, written only if the
# machine had none and removed again; then every systemd unit of a package
# that this install added is disabled (Debian's scripts enable them, policy or
# not).  Says on one line what it installed and which services it kept off;
# the list goes to FENCING_INSTALL_RECORD too when that names a file
# (test/run prints it at the end).
fencing_apt_install() {
    local log rc policy=/usr/sbin/policy-rc.d made_policy= saved_traps= added=() units=() u p
    local -A had=()
    log=$(fencing_install_log)
    while read -r p; do had[$p]=1; done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 ~ /^.i/ {print $2}')
    say "installing Debian packages (apt-get, output in $log): $*"
    if [ ! -e "$policy" ]; then
        # removed however this ends: interrupted, a policy left behind would
        # keep every service of the machine from starting at its next install
        saved_traps=$(trap -p INT TERM HUP EXIT) made_policy=1
        trap '"${FENCING_ASROOT[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
        trap '"${FENCING_ASROOT[@]}" rm -f /usr/sbin/policy-rc.d; exit 130' INT
        trap '"${FENCING_ASROOT[@]}" rm -f /usr/sbin/policy-rc.d; exit 143' TERM
        trap '"${FENCING_ASROOT[@]}" rm -f /usr/sbin/policy-rc.d; exit 129' HUP
        printf '#!/bin/sh\n# fencing test/lib.sh: no service starts during its apt-get install (removed after it)\nexit 101\n' |
            "${FENCING_ASROOT[@]}" tee "$policy" >/dev/null &&
            "${FENCING_ASROOT[@]}" chmod 755 "$policy"
    fi
    {
        echo "=== $(date -u '+%F %T UTC') apt-get install $*"
        "${FENCING_ASROOT[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q || true
        "${FENCING_ASROOT[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends "$@"
    } >> "$log" 2>&1
    rc=$?
    if [ -n "$made_policy" ]; then
        "${FENCING_ASROOT[@]}" rm -f "$policy"
        trap - INT TERM HUP EXIT
        eval "$saved_traps"
    fi
    while read -r p; do
        [ -n "${had[$p]:-}" ] || added+=("$p")
    done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 ~ /^.i/ {print $2}')
    for p in "${added[@]}"; do
        while read -r u; do
            [ -n "$u" ] || continue
            u=${u##*/}
            case $u in *@.*) continue ;; esac      # templates: their instances are others' to enable
            # as the package's own scripts enabled it (deb-systemd-helper
            # works only for them: it wants DPKG_MAINTSCRIPT_PACKAGE), so
            # that its record agrees and an upgrade keeps it disabled
            if command -v deb-systemd-helper >/dev/null &&
               "${FENCING_ASROOT[@]}" env DPKG_MAINTSCRIPT_PACKAGE="$p" \
                   deb-systemd-helper --quiet was-enabled "$u" 2>/dev/null; then
                "${FENCING_ASROOT[@]}" env DPKG_MAINTSCRIPT_PACKAGE="$p" \
                    deb-systemd-helper disable "$u" >> "$log" 2>&1
                units+=("$u")
            elif command -v systemctl >/dev/null && systemctl --quiet is-enabled "$u" 2>/dev/null; then
                "${FENCING_ASROOT[@]}" systemctl disable --quiet "$u" >> "$log" 2>&1
                units+=("$u")
            fi
        done < <(dpkg-query -L "$p" 2>/dev/null | grep -E '^(/usr)?/lib/systemd/system/[^/]+\.(service|socket|timer)$')
    done
    if [ "$rc" -ne 0 ]; then
        say "apt-get install $* failed (status $rc): the last lines of $log:"
        tail -n 15 "$log" >&2
        return "$rc"
    fi
    say "installed ${#added[@]} Debian packages (${added[*]:-none new}); services kept from starting and disabled: ${units[*]:-none}"
    if [ -n "${FENCING_INSTALL_RECORD:-}" ]; then
        { [ ${#added[@]} -gt 0 ] && echo "packages: ${added[*]}"
          [ ${#units[@]} -gt 0 ] && echo "services disabled: ${units[*]}"; } >> "$FENCING_INSTALL_RECORD" 2>/dev/null
    fi
    return 0
}

# Debian packages that building the .deb needs (debian/control's Build-Depends).
# build-essential too: dpkg-checkbuilddeps always wants it, and dpkg-dev only
# recommends it (the installs here leave recommends out).
FENCING_PACKAGE_PREREQS=(build-essential dpkg-dev debhelper postgresql-server-dev-all)

# Debian packages that test/stages/exporter needs (the Prometheus exporter, an HTTP
# client, YAML for reading monitoring/fencing-rules.yml).
FENCING_EXPORTER_PREREQS=(prometheus-postgres-exporter curl python3-yaml)

# FENCING_PG_CONFIG chooses another (e.g. relocated) installation of the server.
fencing_pg_config() {
    echo "${FENCING_PG_CONFIG:-/usr/lib/postgresql/$FENCING_PG_MAJOR/bin/pg_config}"
}

# The ports of the throwaway servers: FENCING_PORT_BASE (default 25410) plus
# the offset of a named slot of this table, the one place that says which
# port is whose.  One slot per port: no two stages share one, so that a
# server (or a TIME_WAIT) one stage left behind never collides with the next.
# Below the kernel's ephemeral range (32768 up), so that no outgoing
# connection holds one when a server binds it; several checkouts can run
# their suites side by side with different bases.  A stage takes its ports
# with fencing_port SLOT; the environment variable beside each slot, when
# set, overrides it (test/stages/fresh_clone gives the stages it runs from
# its clone the fresh_* slots that way).  The TAP tests are not here:
# PostgreSQL::Test::Cluster finds free ports itself.
declare -gA FENCING_PORT_SLOTS=(
    [regress]=1                 # test/run: pg_regress --temp-instance
    [isolation]=2               # test/run: pg_isolation_regress --temp-instance
    [demo]=3                    # test/demo                 FENCING_DEMO_PORT
    [examples]=4                # test/stages/examples: PostgreSQL FENCING_EXAMPLES_PORT
    [examples_etcd]=5           #   etcd, client                   FENCING_ETCD_PORT
    [examples_etcd_peer]=6      #   etcd, peer                     FENCING_ETCD_PEER_PORT
    [exporter]=7                # test/stages/exporter: PostgreSQL FENCING_EXPORTER_PG_PORT
    [exporter_http]=8           #   postgres_exporter's /metrics   FENCING_EXPORTER_HTTP_PORT
    [takeover]=9                # test/stages/etcd_takeover: PG    FENCING_TAKEOVER_PORT
    [takeover_etcd]=10          #   etcd, client                   FENCING_TAKEOVER_ETCD_PORT
    [takeover_etcd_peer]=11     #   etcd, peer                     FENCING_TAKEOVER_ETCD_PEER_PORT
    [patroni_etcd]=12           # test/stages/patroni: etcd client FENCING_PATRONI_ETCD_PORT
    [patroni_etcd_peer]=13      #   etcd, peer                     FENCING_PATRONI_ETCD_PEER_PORT
    [patroni_pg]=14             #   PostgreSQL (both nodes)        FENCING_PATRONI_PG_PORT
    [patroni_api]=15            #   Patroni's REST API (both)      FENCING_PATRONI_API_PORT
    [readme]=16                 # test/stages/readme_examples      FENCING_README_PORT
    [package]=17                # test/stages/package: pg_regress  FENCING_PACKAGE_PORT
    [isolation_preloaded]=18    # test/run: pg_isolation_regress, fencing preloaded
    [fresh_demo]=20             # test/stages/fresh_clone: its demo
    [fresh_patroni_etcd]=21     #   its patroni: etcd client
    [fresh_patroni_etcd_peer]=22 #  etcd, peer
    [fresh_patroni_pg]=23       #   PostgreSQL
    [fresh_patroni_api]=24      #   REST API
    [citus_coordinator]=25      # test/stages/citus: coordinator    FENCING_CITUS_PORT
    [citus_worker1]=26          #   first worker                   FENCING_CITUS_WORKER1_PORT
    [citus_worker2]=27          #   second worker                  FENCING_CITUS_WORKER2_PORT
    [citus_worker3]=28          #   a worker added later           FENCING_CITUS_WORKER3_PORT
    [citus_worker4]=29          #   a worker disabled, removed...  FENCING_CITUS_WORKER4_PORT
    [bench_run]=30              # test/bench/run                   BENCH_PORT
    [bench_callgrind]=31        # test/bench/callgrind             BENCH_PORT
    [bench_leases]=32           # test/bench/leases                BENCH_PORT
    [bench_callgrind_leases]=33 # test/bench/callgrind_leases      BENCH_PORT
    [bench_takeover]=34         # test/bench/takeover              BENCH_PORT
    [bench_scale]=35            # test/bench/scale                 BENCH_PORT
    [bench_terms]=36            # test/bench/terms_monitoring      BENCH_PORT
    [histories]=37              # test/histories/run (one history at a time) FENCING_HISTORIES_PORT
    [histories_standby]=38      #   its streaming standby         FENCING_HISTORIES_STANDBY_PORT
    [bench_scope_walk]=39       # test/bench/scope_walk/run         BENCH_PORT
    [histories_citus]=1890      # test/histories/run --citus: coordinator (27300 by default;
                                #   its 4 workers take the next 4) FENCING_HISTORIES_CITUS_PORT
    [matrix_pg15_regress]=101   # test/stages/matrix, per version: pg_regress,
    [matrix_pg15_isolation]=102 #   pg_isolation_regress, as is and preloaded
    [matrix_pg15_isolation_preloaded]=103
    [matrix_pg17_regress]=121
    [matrix_pg17_isolation]=122
    [matrix_pg17_isolation_preloaded]=123
    [matrix_pg18_regress]=131
    [matrix_pg18_isolation]=132
    [matrix_pg18_isolation_preloaded]=133
)

# The base the table's offsets are added to.
fencing_port_base() { echo "${FENCING_PORT_BASE:-25410}"; }

# fencing_port SLOT: the port of a slot of the table above.
fencing_port() {
    local off=${FENCING_PORT_SLOTS[$1]:-}
    if [ -z "$off" ]; then
        say "fencing_port: no slot \"$1\" in test/lib.sh's table of ports"
        return 1
    fi
    echo $(( $(fencing_port_base) + off ))
}

fencing_bindir() {
    "$(fencing_pg_config)" --bindir
}

# Build warning-free (-Werror: FENCING_WERROR=1) and install into the
# server's directories: directly when we may write there, else as root or
# with password-less sudo.  Returns 1 when the build failed, 2 when only the
# install could not be done (no rights; it says in one sentence what would
# do), 0 when installed (or when what is installed is this build already).
fencing_build_install() {
    local pgc pkglib share f same=1
    pgc=$(fencing_pg_config)
    if ! "$pgc" --version >/dev/null 2>&1; then
        say "$(fencing_cmd): no PostgreSQL at $pgc: install postgresql-server-dev-$FENCING_PG_MAJOR (as root or with sudo), or set FENCING_PG_CONFIG to the pg_config of the PostgreSQL to use."
        return 2
    fi
    make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" FENCING_WERROR=1 >&2 || { say "$(fencing_cmd): the build failed (make, output above)."; return 1; }
    pkglib=$("$pgc" --pkglibdir) share=$("$pgc" --sharedir)
    if [ -w "$pkglib" ] && [ -w "$share/extension" ]; then
        make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
        return
    fi
    if fencing_asroot; then
        "${FENCING_ASROOT[@]}" make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
        return
    fi
    # no rights: fine if this very build is installed already
    cmp -s "$FENCING_TOP/fencing.so" "$pkglib/fencing.so" || same=
    for f in "$FENCING_TOP"/fencing.control "$FENCING_TOP"/src/sql/fencing--*.sql "$FENCING_TOP"/src/sql/upgrade/fencing--*.sql; do
        cmp -s "$f" "$share/extension/$(basename "$f")" || same=
    done
    if [ -n "$same" ]; then
        say "$(fencing_cmd): this build is installed in $pkglib already; not installing it again."
        return 0
    fi
    say "$(fencing_cmd) built the extension but cannot install it into $pkglib (you may not write there): run it as root or as a user with sudo (after \`sudo -v\` if sudo asks for a password: the tests never prompt), or set FENCING_PG_CONFIG to the pg_config of a PostgreSQL installation you own."
    return 2
}

# The user that runs Postgres: Postgres refuses to run as root.
fencing_test_user() {
    if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the test user, keeping the environment we pass explicitly.
# As root, from a directory postgres can enter (FENCING_TEST_CWD, else /):
# the caller's may be /root or a mode-700 mktemp directory, and postgres,
# initdb, pg_ctl and Patroni's children all change to their working
# directory or complain that they cannot.
as_test_user() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd "${FENCING_TEST_CWD:-/}" && exec runuser -u postgres -- env PATH="$(fencing_bindir):$PATH" "$@")
    else
        env PATH="$(fencing_bindir):$PATH" "$@"
    fi
}

# A scratch directory the test user owns.
fencing_scratch() {
    local dir; dir=$(mktemp -d "${TMPDIR:-/tmp}/fencing.XXXXXX") || { say "$(fencing_cmd): mktemp -d failed in ${TMPDIR:-/tmp}"; return 1; }
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    echo "$dir"
}

# A copy of the source tree the test user can write test results into.
fencing_tree_copy() {
    local dest=$1
    (cd "$FENCING_TOP" && tar --exclude=.git --exclude=results --exclude=output_iso \
        --exclude=tmp_check --exclude=log -cf - .) | (cd "$dest" && tar -xf -)
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dest"
    return 0
}

# Start a throwaway cluster in $1 on port $2, private socket in $1.
fencing_cluster_start() {
    local dir=$1 port=$2; shift 2
    as_test_user initdb -D "$dir/data" -A trust -U postgres --no-sync >/dev/null || return 1
    {
        echo "port = $port"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$dir'"
        for opt in "$@"; do echo "$opt"; done
    } >> "$dir/data/postgresql.conf"
    as_test_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

fencing_cluster_stop() {
    local dir=$1
    [ -f "$dir/data/postmaster.pid" ] || return 0
    as_test_user pg_ctl -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
        as_test_user pg_ctl -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1
    return 0
}

# fencing_stop_pid PID [GRACE]: SIGTERM, then SIGKILL after GRACE seconds
# (default 10); never waits longer.  Reaps PID if it is our child.
fencing_stop_pid() {
    local pid=$1 grace=${2:-10} i
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    for i in $(seq 1 $((grace * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && { say "pid $pid did not stop within $grace s: SIGKILL"; kill -KILL "$pid" 2>/dev/null; }
    wait "$pid" 2>/dev/null
    return 0
}

# fencing_on_exit FUNCTION: run FUNCTION once when the script ends, however
# it ends (normally, on an error, on Ctrl-C, on a timeout's SIGTERM).  While
# it runs, further INT/TERM are ignored: a second signal (a timeout, an
# impatient Ctrl-C) does not cut the cleanup short.  Every wait in it must be
# bounded (fencing_stop_pid, pg_ctl -t).
fencing_on_exit() {
    FENCING_CLEANUP_FN=$1
    trap '_fencing_cleanup' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
}
_fencing_cleanup() {
    local rc=$?
    trap '' INT TERM HUP PIPE
    trap - EXIT
    "$FENCING_CLEANUP_FN"
    exit "$rc"
}
