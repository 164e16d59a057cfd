# ota-prepull: build, test and install what both need.
#
#   make deps    install missing Debian packages and kubesim's npm package
#   make         build/ota-webhook and build/ota-controller
#   make test    unit, integration (webhook), kubesim and e2e (controller against
#                kubesim) tests, then unit, integration and e2e again in an
#                AddressSanitizer + UBSan build (build/asan/)
#   make run     the webhook on 127.0.0.1 with throw-away certificates
#   make clean

CC ?= gcc
BUILD ?= build
SAN ?=

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -DH2O_USE_LIBUV=0 -Wall -Wextra -Werror -g -Ilib
ifeq ($(SAN),1)
CFLAGS_OPT := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_SAN := -fsanitize=address,undefined
else
CFLAGS_OPT := -O2
LDFLAGS_SAN :=
endif
CFLAGS ?=
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS_OPT) $(CFLAGS) -MMD -MP

LIB_SRC := $(wildcard lib/*.c)
WEBHOOK_SRC := $(wildcard webhook/*.c)
CONTROLLER_SRC := $(wildcard controller/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
WEBHOOK_OBJ := $(WEBHOOK_SRC:%.c=$(BUILD)/obj/%.o)
CONTROLLER_OBJ := $(CONTROLLER_SRC:%.c=$(BUILD)/obj/%.o)
# Everything of the controller but main(), so unit tests can link it.
CTL_LIB_OBJ := $(filter-out $(BUILD)/obj/controller/main.o,$(CONTROLLER_OBJ))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

LIBS_LIB := -lyajl
LIBS_WEBHOOK := -lh2o-evloop -lssl -lcrypto -lyajl -lpthread
LIBS_CONTROLLER := -lcurl -lyajl -lyaml -lpthread

PROGRAMS := $(BUILD)/ota-webhook $(if $(wildcard controller/main.c),$(BUILD)/ota-controller)

# Libraries are checked as Debian packages; tools by command, since a machine
# may carry them from elsewhere (node with its own npm, python3 from pyenv).
DEB_LIBRARIES := libh2o-evloop-dev libssl-dev libyajl-dev libcurl4-openssl-dev libcmocka-dev \
	libyaml-dev
DEB_TOOLS := gcc:gcc make:make openssl:openssl curl:curl wrk:wrk python3:python3 \
	node:nodejs npm:npm kubectl:kubernetes-client

.PHONY: all deps test unit integration e2e kubesim-test test-asan bench run clean

all: $(PROGRAMS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libota.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BUILD)/ota-webhook: $(WEBHOOK_OBJ) $(BUILD)/libota.a
	$(CC) $(LDFLAGS_SAN) -o $@ $^ $(LIBS_WEBHOOK)

$(BUILD)/libctl.a: $(CTL_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BUILD)/ota-controller: $(BUILD)/obj/controller/main.o $(BUILD)/libctl.a $(BUILD)/libota.a
	$(CC) $(LDFLAGS_SAN) -o $@ $^ $(LIBS_CONTROLLER)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libctl.a $(BUILD)/libota.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Icontroller $(LDFLAGS_SAN) -o $@ $< $(BUILD)/libctl.a $(BUILD)/libota.a \
		-lcmocka $(LIBS_CONTROLLER)

# Installs only what is missing; a no-op on a machine that has it all.
deps:
	@missing=$$(for p in $(DEB_LIBRARIES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done; for t in $(DEB_TOOLS); do \
		command -v $${t%%:*} >/dev/null 2>&1 || echo $${t#*:}; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@if [ -f tests/kubesim/cel/package-lock.json ] && [ ! -d tests/kubesim/cel/node_modules ]; then \
		cd tests/kubesim/cel && npm ci --no-audit --no-fund --loglevel=error; \
	fi

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

integration: $(BUILD)/ota-webhook
	OTA_WEBHOOK=$(BUILD)/ota-webhook python3 tests/integration/run_tests.py

# The controller against kubesim (needs the programs built).
e2e: $(BUILD)/ota-controller
	OTA_CONTROLLER=$(BUILD)/ota-controller python3 tests/e2e/run_tests.py

kubesim-test:
	bash tests/kubesim/test.sh

test-asan:
	$(MAKE) BUILD=build/asan SAN=1 unit integration e2e

test: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) integration
	$(MAKE) kubesim-test
	$(MAKE) e2e
	$(MAKE) test-asan

# Benchmarks (docs/BENCHMARKS.md); never part of make test.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libctl.a $(BUILD)/libota.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Icontroller $(LDFLAGS_SAN) -o $@ $< $(BUILD)/libctl.a $(BUILD)/libota.a \
		$(LIBS_CONTROLLER)

bench: $(BUILD)/bench/cache_memory
	$(BUILD)/bench/cache_memory

# The webhook on loopback with a throw-away CA (see README.md).
run: deps $(BUILD)/ota-webhook
	@mkdir -p $(BUILD)/certs
	@[ -f $(BUILD)/certs/tls.crt ] || certs/gen-certs.sh $(BUILD)/certs
	$(BUILD)/ota-webhook --tls-cert-file $(BUILD)/certs/tls.crt \
		--tls-private-key-file $(BUILD)/certs/tls.key \
		--bind-address 127.0.0.1:9443 --health-probe-bind-address 127.0.0.1:8081 \
		--metrics-bind-address 127.0.0.1:8080

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(WEBHOOK_OBJ:.o=.d) $(CONTROLLER_OBJ:.o=.d) $(UNIT_BIN:=.d)
