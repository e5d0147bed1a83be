# Makefile for the fencing extension (PGXS).
#   make && make install            build (the C library and the install script
#                                   src/sql/fencing--<version>.sql) and install into
#                                   the server found by pg_config
#   make clean                      remove what make built, the install script too
#   make -C build -f ../Makefile    the same out of tree (VPATH), as Debian's dh --with pgxs does
#   test/run                        the whole test suite on throwaway clusters
#                                   (test/README.md: which test lives where, how to
#                                   run one kind alone)
# Paths below are relative to the source tree; wildcards look in $(srcdir), which
# PGXS sets (to "." in tree), so every one of them is expanded after the include.
EXTENSION = fencing
MODULE_big = fencing
# in layer order, bottom to top (src/fencing.h)
OBJS = src/base/input_checks.o \
       src/base/scope_tables.o \
       src/state/extension_state.o \
       src/state/direct_row.o \
       src/state/scope_rows.o \
       src/state/citus_shards.o \
       src/state/cluster_marks.o \
       src/state/citus_errors.o \
       src/durability/durable_commit.o \
       src/security/bypass.o \
       src/security/scope_acl.o \
       src/telemetry/fence_stats.o \
       src/telemetry/rejection.o \
       src/marks/scope_lock.o \
       src/marks/mark_cache.o \
       src/marks/scope_mark.o \
       src/marks/scope_admin.o \
       src/marks/cluster_apply.o \
       src/clock/term_band.o \
       src/clock/clock_generation.o \
       src/clock/epoch_clock.o \
       src/clock/term_retention.o \
       src/clock/failover_fence.o \
       src/tokens/declared_token.o \
       src/leases/lease.o \
       src/trigger/fence_config.o \
       src/trigger/running_statement.o \
       src/trigger/fence_trigger.o \
       src/trigger/protect.o \
       src/trigger/restored_fence.o \
       src/legacy/older_sql.o \
       src/end_of_xact.o \
       src/relcache_watch.o \
       src/fencing.o
# The SQL scripts PGXS installs.  src/sql/upgrade/ holds what is frozen: the
# install script of the first version (fencing--1.0.sql) and the upgrade
# chain (fencing--<from>--<to>.sql); Postgres installs any older version
# with them (CREATE EXTENSION fencing VERSION '1.2' runs 1.0, 1.0--1.1 and
# 1.1--1.2).  The current version's install script is built by make from
# src/sql/concepts/ (see the end of this file), into the build directory.
DATA = $(sort $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/src/sql/upgrade/fencing--*.sql)))
DATA_built = src/sql/fencing--$(FENCING_VERSION).sql
PGFILEDESC = "fencing - fencing tokens enforced by the database"

# Only the module's interface is exported: _PG_init, the magic block and the
# SQL-callable functions (PG_FUNCTION_INFO_V1 marks them PGDLLEXPORT); every
# other symbol is hidden, so nothing of ours collides with another library
# loaded into the same server.  Servers from 16 on build modules so
# themselves; for 15, PGDLLEXPORT is given its meaning here.
PG_CPPFLAGS = -I$(srcdir)/src '-DPGDLLEXPORT=__attribute__((visibility("default")))'
# PG headers have unused parameters. -Werror only when asked (our tests set
# FENCING_WERROR=1): a distribution's compiler may warn where ours does not.
# The write path is many small functions across files (an offerer set, a
# mark looked up): link-time optimisation and -O3 (after the server's -O2,
# so it wins) inline them; about 140 instructions of a one-row UPDATE.
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -fvisibility=hidden -flto=auto -O3 $(if $(FENCING_WERROR),-Werror)

REGRESS = $(basename $(notdir $(sort $(wildcard $(srcdir)/sql/*.sql))))
ISOLATION = $(basename $(notdir $(sort $(wildcard $(srcdir)/test/isolation/specs/*.spec))))
# appended, so that it is the last --inputdir (the one pg_isolation_regress
# keeps) also when ISOLATION_OPTS is given on the command line
override ISOLATION_OPTS += --inputdir=$(srcdir)/test/isolation
# test/run runs the specs a second time with fencing preloaded and room for
# 16 marks in shared memory (test/isolation/preloaded.conf): the specs whose
# expected output shows the library loading without preload are left out.
ISOLATION_PRELOADED = $(filter-out fence-upgrade-writers,$(ISOLATION))
# The expected files hold UTF-8 (scope names with accents): the test
# databases are UTF-8 too, whatever the locale of the machine running them.
override REGRESS_OPTS += --encoding=UTF8
TAP_TESTS = 1
# prove runs in $(srcdir), so this path stays relative
PROVE_TESTS = test/tap/*.pl

# The version being built: fencing.control's default_version
FENCING_VERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(srcdir)/fencing.control)

# PGXS tracks no header dependencies: rebuild everything when a header changes
FENCING_HEADERS = $(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(FENCING_HEADERS)

# Out of tree, the object files' subfolders do not exist yet (an order-only
# prerequisite would not do: make finds the folder in $(srcdir) through VPATH).
ifneq ($(VPATH),)
$(shell mkdir -p $(sort $(dir $(OBJS))))
endif

# The install script of the current version, src/sql/fencing--$(FENCING_VERSION).sql,
# is a build product (DATA_built): the SQL source read by concept
# (src/sql/concepts/*.sql, one file per concept, in file name order) put
# together under a banner.  It is not committed (.gitignore); make writes it
# into the build directory (out of tree too) before make install copies it,
# and make clean removes it.
#
# To change the SQL API: edit src/sql/concepts/*.sql, and APPEND the same
# change to the newest upgrade script, src/sql/upgrade/fencing--<prev>--<cur>.sql;
# the regression test 99_upgrade_objects proves that a fresh install and one
# upgraded from every earlier version have the same objects.  For a new
# version: raise default_version in fencing.control and start a new upgrade
# script src/sql/upgrade/fencing--<cur>--<new>.sql; the frozen scripts in
# src/sql/upgrade/ are never edited once released.
FENCING_SQL_CONCEPTS = $(sort $(wildcard $(srcdir)/src/sql/concepts/*.sql))

# the install script on stdout: a banner, the guard, then each concept file
define fencing_install_sql
{ printf '%s\n' \
    '-- fencing--$(FENCING_VERSION).sql: the SQL API of the fencing extension, version $(FENCING_VERSION).' \
    '-- GENERATED by make from src/sql/concepts/*.sql (one file per concept, in' \
    '-- file name order): edit those, then run make.  Older versions are' \
    '-- installed and upgraded by the scripts in src/sql/upgrade/.' \
    '' \
    '\echo Use "CREATE EXTENSION fencing" to load this file. \quit'; \
  for f in $(FENCING_SQL_CONCEPTS); do printf '\n'; cat "$$f" || exit 1; done; }
endef

# Out of tree, a copy left in $(srcdir) by an in-tree build would be found
# through VPATH and taken as up to date, and make install would then miss it
# in the build directory: there, it is always rewritten (it costs a cat).
ifneq ($(VPATH),)
$(DATA_built): fencing-force
endif
.PHONY: fencing-force
fencing-force:

$(DATA_built): $(FENCING_SQL_CONCEPTS) $(srcdir)/fencing.control
	@mkdir -p $(dir $@)
	@$(fencing_install_sql) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; echo "wrote $@"; fi

# The install script on stdout, built from the concept files as above; for
# test/stages/check_sql, which checks it.  Writes nothing into the tree.
.PHONY: print-install-sql
print-install-sql:
	@$(fencing_install_sql)

# The specs test/run runs a second time, preloaded (ISOLATION_PRELOADED above).
.PHONY: print-isolation-preloaded
print-isolation-preloaded:
	@echo $(ISOLATION_PRELOADED)
