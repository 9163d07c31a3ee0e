# The two set-up commands of the README:
#   make sample   writes sample-report.html from the bundled real sample
#   make test     installs what the tests need, then runs the whole test suite
# CI runs .ci/run, which runs `make test`.
# Packages are tested one at a time (-p 1): several of them time a real llama.cpp
# server or the recorder, and on 2 cores two such tests at once measure each other.

GO ?= go
SAMPLE ?= samples/llamacpp-d768-4slots.parquet

.PHONY: sample test vet build image bench bench-analyze bench-analyze-scale sample-record

build:
	$(GO) build -o ceiling ./cmd/ceiling

# The container image deploy/kubernetes runs, as an archive for docker load,
# podman load or kind load image-archive (no daemon, no registry: deploy/image).
IMAGE_ARCHIVE ?= ceiling-image.tar
image:
	$(GO) run ./deploy/image -o $(IMAGE_ARCHIVE) $(if $(IMAGE_TAG),--tag $(IMAGE_TAG))

sample:
	$(GO) run ./cmd/ceiling report $(SAMPLE) -o sample-report.html
	$(GO) run ./cmd/ceiling analyze $(SAMPLE)
	@echo "wrote sample-report.html"

test:
	@eval "$$(scripts/deps.sh)" && \
	  echo "== gofmt" && test -z "$$(gofmt -l . | tee /dev/stderr)" && \
	  echo "== go vet" && $(GO) vet ./... && \
	  echo "== go mod tidy -diff" && $(GO) mod tidy -diff && \
	  echo "== staticcheck" && "$$STATICCHECK" ./... && \
	  echo "== go test -race" && $(GO) test -race -count=1 -p 1 -timeout 60m ./...

# Benchmarks: benchstat-friendly output (go test -bench), plus whole-process figures.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./... | tee bench.txt

bench-analyze:
	scripts/bench-analyze.sh

# 1M and 10M requests side by side (about 3 GB of traces in /tmp; minutes).
bench-analyze-scale:
	scripts/bench-analyze-scale.sh

# Re-records the bundled sample against a real llama.cpp server (see samples/README.md).
sample-record:
	scripts/record-sample.sh
	scripts/record-sample-unified.sh
