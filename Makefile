# Makefile for the fencing extension (PGXS).
#   make && make install            build and install into the server found by pg_config
#   make -C build -f ../Makefile    the same out of tree (VPATH), as Debian's dh --with pgxs does
#   test/run                        the whole test suite on a throwaway cluster
# Paths below are relative to the source tree; wildcards look in $(srcdir), which
# PGXS sets (to "." in tree), so every one of them is expanded after the include.
EXTENSION = fencing
MODULE_big = fencing
OBJS = src/fencing.o \
       src/checks/input_checks.o \
       src/state/extension_state.o \
       src/clock/epoch_clock.o \
       src/clock/term_band.o \
       src/durability/durable_commit.o \
       src/marks/scope_mark.o \
       src/marks/mark_cache.o \
       src/marks/scope_lock.o \
       src/security/bypass.o \
       src/security/scope_acl.o \
       src/security/scope_admin.o \
       src/telemetry/fence_stats.o \
       src/tokens/declared_token.o \
       src/trigger/fence_config.o \
       src/trigger/fence_trigger.o \
       src/trigger/running_statement.o \
       src/trigger/protect.o
DATA = $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/src/sql/fencing--*.sql))
PGFILEDESC = "fencing - fencing tokens enforced by the database"

PG_CPPFLAGS = -I$(srcdir)/src
# PG headers have unused parameters. -Werror only when asked (our tests set
# FENCING_WERROR=1): a distribution's compiler may warn where ours does not.
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter $(if $(FENCING_WERROR),-Werror)

REGRESS = $(basename $(notdir $(sort $(wildcard $(srcdir)/sql/*.sql))))
ISOLATION = $(basename $(notdir $(sort $(wildcard $(srcdir)/test/specs/*.spec))))
ISOLATION_OPTS = --inputdir=$(srcdir)/test
TAP_TESTS = 1
# prove runs in $(srcdir), so this path stays relative
PROVE_TESTS = test/t/*.pl

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
