# test/lib.sh: shared by test/run, test/demo and test/bench.
# Installs prerequisites, builds and installs the extension, and gives a
# non-root user and a scratch directory for throwaway clusters.
# Source it; it defines functions only.

FENCING_PG_MAJOR=${FENCING_PG_MAJOR:-15}
FENCING_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# Debian packages the tests and the demo need, and any named as arguments
# (the packaging check and the examples add theirs); installed with apt-get
# when root, or with sudo.
fencing_prereqs() {
    local pkgs=(make gcc "postgresql-$FENCING_PG_MAJOR" "postgresql-server-dev-$FENCING_PG_MAJOR"
                "postgresql-client-$FENCING_PG_MAJOR" libipc-run-perl perl python3 "$@")
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            say "missing Debian packages: ${missing[*]} (run as root, or install them first)"
            return 1
        fi
    fi
    say "installing: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Debian packages that building the .deb needs (debian/control's Build-Depends).
FENCING_PACKAGE_PREREQS=(dpkg-dev debhelper postgresql-server-dev-all)

# Debian packages that test/exporter needs (the Prometheus exporter, an HTTP client).
FENCING_EXPORTER_PREREQS=(prometheus-postgres-exporter curl)

# FENCING_PG_CONFIG chooses another (e.g. relocated) installation of the server.
fencing_pg_config() {
    echo "${FENCING_PG_CONFIG:-/usr/lib/postgresql/$FENCING_PG_MAJOR/bin/pg_config}"
}

# Ports of the throwaway clusters: FENCING_PORT_BASE + n, below the
# kernel's ephemeral range (32768 up) so that no outgoing connection holds
# one when a server binds it (several checkouts
# can then run their suites side by side).
fencing_port() {
    echo $(( ${FENCING_PORT_BASE:-25410} + $1 ))
}

fencing_bindir() {
    "$(fencing_pg_config)" --bindir
}

# Build warning-free (-Werror: FENCING_WERROR=1) and install into the
# server's directories.
fencing_build_install() {
    local pgc; pgc=$(fencing_pg_config)
    make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" FENCING_WERROR=1 >&2 || return 1
    if [ -w "$("$pgc" --pkglibdir)" ]; then
        make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
    else
        sudo make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
    fi
}

# The user that runs Postgres: Postgres refuses to run as root.
fencing_test_user() {
    if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the test user, keeping the environment we pass explicitly.
as_test_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- env PATH="$(fencing_bindir):$PATH" "$@"
    else
        env PATH="$(fencing_bindir):$PATH" "$@"
    fi
}

# A scratch directory the test user owns.
fencing_scratch() {
    local dir; dir=$(mktemp -d "${TMPDIR:-/tmp}/fencing.XXXXXX")
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
    [ -f "$dir/data/postmaster.pid" ] && as_test_user pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1
    return 0
}
