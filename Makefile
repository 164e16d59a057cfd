# ota-prepull: build, test and install what both need.
#
#   make deps    install missing Debian packages and kubesim's npm package
#   make         build/ota-webhook, build/ota-controller and build/kubectl-ota
#   make test    unit, integration (webhook), kubesim and e2e (controller against
#                kubesim) tests, then unit, integration and e2e again in an
#                AddressSanitizer + UBSan build (build/asan/)
#                and a short pass of every libFuzzer harness (tests/fuzz/)
#   make fuzz    every libFuzzer harness for FUZZ_SECONDS (60) each
#   make demo    builds everything, then the narrated OTA story against kubesim
#                (demo/README.md); make demo-test runs it fast and checks it
#   make run     the webhook on 127.0.0.1 with throw-away certificates
#   make images  container images of both programs (docker, else podman with
#                bases made here); make images-test builds and runs them (podman)
#   make clean

CC ?= gcc
BUILD ?= build
SAN ?=

# -Werror on everything, and the stricter warnings the code is kept clean of.
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wconversion -Wformat=2 -Wvla
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -DH2O_USE_LIBUV=0 $(WARNINGS) -g
ifeq ($(FUZZ),1)
# The libFuzzer build (tests/fuzz/, clang only): every object gets the
# fuzzer's coverage hooks, only the harnesses link its main().
CFLAGS_OPT := -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS_SAN := -fsanitize=fuzzer,address,undefined
else ifeq ($(SAN),1)
CFLAGS_OPT := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_SAN := -fsanitize=address,undefined
else
CFLAGS_OPT := -O2
LDFLAGS_SAN :=
endif
CFLAGS ?=
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS_OPT) $(CFLAGS) -MMD -MP

# Version and commit compiled into the three programs (--version, and the
# build_info metric).  The commit comes from git, else from COMMIT, which
# `git archive` fills in (export-subst in .gitattributes), else "unknown".
# Only the main objects get them, rebuilt when they change (version.stamp).
OTA_VERSION ?= $(shell cat VERSION 2>/dev/null || echo 0.0.0)
OTA_COMMIT ?= $(or $(shell git rev-parse --short=12 HEAD 2>/dev/null || \
	grep -oE '^[0-9a-f]{12}' COMMIT 2>/dev/null),unknown)
VERSION_DEFS := -DOTA_VERSION='"$(OTA_VERSION)"' -DOTA_COMMIT='"$(OTA_COMMIT)"'

# The layers (README.md, "Layout").  Each folder compiles with the include
# paths of itself and the layers below it only, so an arrow that points the
# wrong way (lib/ including a program's header, kube/ including the
# controller's) does not compile.
INC_lib := -Ilib
INC_net := -Inet $(INC_lib)
INC_kube := -Ikube $(INC_lib)
INC_webhook := -Iwebhook $(INC_net)
INC_controller := -Icontroller -Ikube $(INC_net)
INC_cli := -Icli $(INC_kube)
INC_tests := -Itests/unit -Icontroller -Iwebhook -Icli -Ikube -Inet -Ilib

LIB_SRC := $(wildcard lib/*.c)
NET_SRC := $(wildcard net/*.c)
KUBE_SRC := $(wildcard kube/*.c)
WEBHOOK_SRC := $(filter-out webhook/main.c,$(wildcard webhook/*.c))
CONTROLLER_SRC := $(filter-out controller/main.c,$(wildcard controller/*.c))
CLI_SRC := $(filter-out cli/main.c,$(wildcard cli/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)

obj = $(1:%.c=$(BUILD)/obj/%.o)
LIB_OBJ := $(call obj,$(LIB_SRC))
NET_OBJ := $(call obj,$(NET_SRC))
KUBE_OBJ := $(call obj,$(KUBE_SRC))
WEBHOOK_OBJ := $(call obj,$(WEBHOOK_SRC))
CONTROLLER_OBJ := $(call obj,$(CONTROLLER_SRC))
CLI_OBJ := $(call obj,$(CLI_SRC))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# One archive per layer; programs (and unit tests) link the ones they use,
# and a program's main() stays out of its archive so tests can link it.
A_LIB := $(BUILD)/libota.a
A_NET := $(BUILD)/libotanet.a
A_KUBE := $(BUILD)/libkube.a
A_WEBHOOK := $(BUILD)/libwebhook.a
A_CONTROLLER := $(BUILD)/libcontroller.a
A_CLI := $(BUILD)/libcli.a

LIBS_WEBHOOK := -lh2o-evloop -lssl -lcrypto -lyajl -lpthread
LIBS_CONTROLLER := -lcurl -lyajl -lyaml -lpthread
LIBS_CLI := -lcurl -lyajl -lyaml

PROGRAMS := $(BUILD)/ota-webhook $(BUILD)/ota-controller $(BUILD)/kubectl-ota

# Libraries are checked as Debian packages; tools by command, since a machine
# may carry them from elsewhere (node with its own npm, python3 from pyenv).
DEB_LIBRARIES := libh2o-evloop-dev libssl-dev libyajl-dev libcurl4-openssl-dev libcmocka-dev tzdata \
	libyaml-dev libclang-rt-14-dev
DEB_TOOLS := gcc:gcc make:make openssl:openssl curl:curl wrk:wrk python3:python3 \
	node:nodejs npm:npm kubectl:kubernetes-client clang:clang \
	podman:podman runc:runc mmdebstrap:mmdebstrap

.PHONY: all deps test layout unit integration e2e kubesim-test manifests-test test-asan bench run \
	images images-test clean fuzz fuzz-smoke fuzz-build

all: $(PROGRAMS)

$(BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_lib) -c $< -o $@

$(BUILD)/obj/net/%.o: net/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_net) -c $< -o $@

$(BUILD)/obj/kube/%.o: kube/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_kube) -c $< -o $@

$(BUILD)/obj/webhook/%.o: webhook/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_webhook) -c $< -o $@

$(BUILD)/obj/controller/%.o: controller/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_controller) -c $< -o $@

$(BUILD)/obj/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_cli) -c $< -o $@

$(A_LIB): $(LIB_OBJ)
$(A_NET): $(NET_OBJ)
$(A_KUBE): $(KUBE_OBJ)
$(A_WEBHOOK): $(WEBHOOK_OBJ)
$(A_CONTROLLER): $(CONTROLLER_OBJ)
$(A_CLI): $(CLI_OBJ)
$(A_LIB) $(A_NET) $(A_KUBE) $(A_WEBHOOK) $(A_CONTROLLER) $(A_CLI):
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The link maps say which archive members each program pulled in; the layout
# check reads them (tests/check_layout.py).  They live in $(BUILD)/maps/, not
# beside the programs: with build/ on PATH (README.md), `kubectl plugin list`
# takes build/kubectl-ota.map for a plugin that cannot run and exits 1.
$(BUILD)/ota-webhook: $(BUILD)/obj/webhook/main.o $(A_WEBHOOK) $(A_NET) $(A_LIB)
	@mkdir -p $(BUILD)/maps
	$(CC) $(LDFLAGS_SAN) -Wl,-Map,$(BUILD)/maps/$(notdir $@).map -o $@ $^ $(LIBS_WEBHOOK)

$(BUILD)/ota-controller: $(BUILD)/obj/controller/main.o $(A_CONTROLLER) $(A_KUBE) $(A_NET) $(A_LIB)
	@mkdir -p $(BUILD)/maps
	$(CC) $(LDFLAGS_SAN) -Wl,-Map,$(BUILD)/maps/$(notdir $@).map -o $@ $^ $(LIBS_CONTROLLER)

# The node users' kubectl plugin: kubectl runs it as `kubectl ota` when it is
# on PATH as kubectl-ota (docs/node-users.md).
$(BUILD)/kubectl-ota: $(BUILD)/obj/cli/main.o $(A_CLI) $(A_KUBE) $(A_LIB)
	@mkdir -p $(BUILD)/maps
	$(CC) $(LDFLAGS_SAN) -Wl,-Map,$(BUILD)/maps/$(notdir $@).map -o $@ $^ $(LIBS_CLI)

MAIN_OBJ := $(BUILD)/obj/webhook/main.o $(BUILD)/obj/controller/main.o $(BUILD)/obj/cli/main.o
$(MAIN_OBJ): ALL_CFLAGS += $(VERSION_DEFS)
$(MAIN_OBJ): $(BUILD)/version.stamp
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION_DEFS)' | cmp -s - $@ || echo '$(VERSION_DEFS)' > $@
.PHONY: FORCE

TEST_ARCHIVES := $(A_CONTROLLER) $(A_WEBHOOK) $(A_CLI) $(A_KUBE) $(A_NET) $(A_LIB)
$(BUILD)/tests/%: tests/unit/%.c $(TEST_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_tests) $(LDFLAGS_SAN) -o $@ $< $(TEST_ARCHIVES) \
		-lcmocka $(LIBS_CONTROLLER) $(LIBS_WEBHOOK)

# libFuzzer harnesses (tests/fuzz/README.md), built by clang in build/fuzz.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= 20000
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_check.h tests/fuzz/json_ref.h $(TEST_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_tests) $(LDFLAGS_SAN) -o $@ $< $(TEST_ARCHIVES) \
		$(LIBS_CONTROLLER) $(LIBS_WEBHOOK)

fuzz-build: $(FUZZ_BIN)

# Each harness for FUZZ_SECONDS (new inputs go to build/fuzz/corpus, crashes
# to build/fuzz/artifacts); make fuzz-smoke: each for FUZZ_RUNS inputs from
# a fixed seed after its committed corpus, as part of make test.
fuzz:
	$(MAKE) CC=clang BUILD=build/fuzz FUZZ=1 fuzz-build
	tests/fuzz/run.sh build/fuzz -max_total_time=$(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-smoke:
	$(MAKE) CC=clang BUILD=build/fuzz FUZZ=1 fuzz-build
	tests/fuzz/run.sh build/fuzz "-runs=$(FUZZ_RUNS) -seed=1" $(FUZZ_NAMES)

# lib/ holds only what two or more programs link, and no layer includes a
# layer above it (README.md, "Layout").
layout: $(PROGRAMS)
	python3 tests/check_layout.py $(BUILD) $(PROGRAMS)

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

# (and the controller's command line, pinned beside the webhook's)
integration: $(BUILD)/ota-webhook $(BUILD)/ota-controller
	OTA_WEBHOOK=$(BUILD)/ota-webhook OTA_CONTROLLER=$(BUILD)/ota-controller \
		python3 tests/integration/run_all.py

# The controller, kubectl-ota, and the webhook registered from the rendered
# manifests, against kubesim (needs the programs built).
e2e: $(BUILD)/ota-controller $(BUILD)/ota-webhook $(BUILD)/kubectl-ota
	OTA_CONTROLLER=$(BUILD)/ota-controller OTA_WEBHOOK=$(BUILD)/ota-webhook \
		KUBECTL_OTA=$(BUILD)/kubectl-ota python3 tests/e2e/run_all.py

kubesim-test:
	bash tests/kubesim/test.sh

# manifests/ and certs/: every kustomization renders, the rendered objects
# have the properties docs/operations.md promises, and the controller's real
# API calls match its RBAC (tests/manifests/README.md).
manifests-test: $(PROGRAMS)
	OTA_CONTROLLER=$(BUILD)/ota-controller OTA_WEBHOOK=$(BUILD)/ota-webhook \
		python3 tests/manifests/run_all.py

test-asan:
	$(MAKE) BUILD=build/asan SAN=1 unit integration e2e manifests-test

test: deps
	$(MAKE) all
	$(MAKE) layout
	$(MAKE) unit
	$(MAKE) integration
	$(MAKE) kubesim-test
	$(MAKE) manifests-test
	$(MAKE) e2e
	$(MAKE) demo-test
	$(MAKE) images-test
	$(MAKE) test-asan
	$(MAKE) fuzz-smoke

# The narrated demo on loopback (demo/README.md), and its test: the story to
# the end (--fast), a failing step, SIGTERM and SIGINT midway; each run
# bounded (tests/demo/test_demo.py).
# Its ports: each a free one unless given (make demo DEMO_WEBHOOK_PORT=9443).
DEMO_PORT_VARS := DEMO_KUBESIM_PORT DEMO_WEBHOOK_PORT DEMO_WEBHOOK_HEALTH_PORT \
	DEMO_WEBHOOK_METRICS_PORT DEMO_CONTROLLER_HEALTH_PORT DEMO_CONTROLLER_METRICS_PORT
.PHONY: demo demo-test
demo: deps
	$(MAKE) all
	$(foreach v,$(DEMO_PORT_VARS),$(v)=$($(v))) bash demo/run.sh

demo-test: $(PROGRAMS)
	BUILD=$(BUILD) python3 tests/demo/test_demo.py

# Benchmarks (docs/BENCHMARKS.md); never part of make test.
$(BUILD)/bench/%: bench/%.c $(A_CONTROLLER) $(A_KUBE) $(A_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_controller) $(LDFLAGS_SAN) -o $@ $< $(A_CONTROLLER) $(A_KUBE) \
		$(A_LIB) $(LIBS_CONTROLLER)

bench: $(BUILD)/bench/cache_memory
	$(BUILD)/bench/cache_memory

# The webhook against its two reference servers (bench/webhook.py): the
# transport ceiling and the parse ceiling, one source built twice.
$(BUILD)/bench/webhook_ref_transport $(BUILD)/bench/webhook_ref_parse: bench/webhook_ref.c \
		bench/bench_util.c bench/bench_util.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DREF_PARSE=$(if $(findstring parse,$(notdir $@)),1,0) $(LDFLAGS_SAN) \
		-o $@ $< bench/bench_util.c $(LIBS_WEBHOOK)

# The decision alone, per body, without sockets (where the CPU goes).
$(BUILD)/bench/webhook_decide: $(BUILD)/bench/webhook_%: \
		bench/webhook_%.c bench/bench_util.c bench/bench_util.h $(A_WEBHOOK) $(A_NET) $(A_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_webhook) $(LDFLAGS_SAN) -o $@ $< bench/bench_util.c $(A_WEBHOOK) \
		$(A_NET) $(A_LIB) $(LIBS_WEBHOOK)

.PHONY: bench-webhook
bench-webhook: $(BUILD)/ota-webhook $(BUILD)/bench/webhook_ref_transport $(BUILD)/bench/webhook_ref_parse \
		$(BUILD)/bench/webhook_decide
	$(BUILD)/bench/webhook_decide bench/fixtures/pod-status-10k.json \
		bench/fixtures/pod-status-23k.json bench/fixtures/prepull.json:mutate \
		bench/fixtures/ds-update.json:mutate
	BUILD=$(BUILD) python3 bench/webhook.py

# The controller against kubesim: cold start, steady state, rollout RSS, and
# pre-pull reaction times (bench/controller.py; BENCH_ARGS for its flags).
.PHONY: bench-controller
bench-controller: $(BUILD)/ota-controller
	python3 bench/controller.py --binary $(BUILD)/ota-controller $(BENCH_ARGS)

# The webhook on loopback with a throw-away CA (see README.md), on these
# ports (make run WEBHOOK_PORT=19443).
WEBHOOK_PORT ?= 9443
HEALTH_PORT ?= 8081
METRICS_PORT ?= 8080
run: deps $(BUILD)/ota-webhook
	@mkdir -p $(BUILD)/certs
	@[ -f $(BUILD)/certs/tls.crt ] || certs/gen-certs.sh $(BUILD)/certs
	$(BUILD)/ota-webhook --tls-cert-file $(BUILD)/certs/tls.crt \
		--tls-private-key-file $(BUILD)/certs/tls.key \
		--bind-address 127.0.0.1:$(WEBHOOK_PORT) \
		--health-probe-bind-address 127.0.0.1:$(HEALTH_PORT) \
		--metrics-bind-address 127.0.0.1:$(METRICS_PORT)

# Container images (images/*/Dockerfile), tagged as manifests/base names
# them, with this tree's version and commit compiled in.  images/build.sh
# builds with docker where its daemon answers, else with podman from base
# images it makes here with mmdebstrap (no container registry needed);
# with neither it says so and builds nothing.  images-test builds with
# podman and runs both images as the manifests do (tests/images/).
IMAGE_PREFIX ?= ota-prepull/
IMAGE_TAG ?= $(OTA_VERSION)
IMAGE_ENV = IMAGE_PREFIX='$(IMAGE_PREFIX)' IMAGE_TAG='$(IMAGE_TAG)' \
	OTA_VERSION='$(OTA_VERSION)' OTA_COMMIT='$(OTA_COMMIT)'
images:
	$(IMAGE_ENV) images/build.sh

images-test:
	$(IMAGE_ENV) images/build.sh podman
	$(IMAGE_ENV) python3 tests/images/test_images.py

clean:
	rm -rf build

-include $(patsubst %.o,%.d,$(LIB_OBJ) $(NET_OBJ) $(KUBE_OBJ) $(WEBHOOK_OBJ) $(CONTROLLER_OBJ) $(CLI_OBJ)) \
	$(BUILD)/obj/webhook/main.d $(BUILD)/obj/controller/main.d $(BUILD)/obj/cli/main.d \
	$(UNIT_BIN:=.d) $(FUZZ_BIN:=.d)
