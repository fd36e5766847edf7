# Tandem's two set-up commands:
#   make demo   install what is missing, build for Open MPI and MPICH, show the overlap
#   make test   the same set-up, then the whole test suite
#
# Other targets: make build | check | format | bench | device-pack | device-check | clean

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python3
JOBS ?= 2
BUILDS := openmpi mpich
CMAKE_FLAGS_openmpi := -DMPI_C_COMPILER=mpicc.openmpi -DMPI_Fortran_COMPILER=mpif90.openmpi \
	-DMPIEXEC_EXECUTABLE=$$(command -v mpirun.openmpi)
CMAKE_FLAGS_mpich := -DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich \
	-DMPIEXEC_EXECUTABLE=$$(command -v mpiexec.mpich)
SANITIZE := address,undefined
C_SOURCES := $(filter-out src/wrappers/gen_% include/virt/gen_%,$(shell git ls-files '*.c' '*.h' 2>/dev/null))
CTEST := ctest --output-on-failure --timeout 300 -j $(JOBS)

.PHONY: all deps venv build demo bench test check generated-check envdoc-check format-check lint \
	include-check doc-links ctest asan tsan pytest mpi4py format clean device-pack device-check

all: build

deps:
	@tools/install-deps.sh

$(VPY): python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e 'python/[dev]'
	@touch $(VPY)

venv: deps $(VPY)

build: deps venv $(addprefix build/,$(addsuffix /libtandem.so,$(BUILDS)))
	@for b in $(BUILDS); do cmake --build build/$$b -j $(JOBS) >/dev/null || exit 1; done
	@echo "built: $(addprefix build/,$(addsuffix /libtandem.so,$(BUILDS)))"

build/%/libtandem.so:
	cmake -S . -B build/$* -DTANDEM_PYTHON=$(CURDIR)/$(VPY) $(CMAKE_FLAGS_$*) >/dev/null
	cmake --build build/$* -j $(JOBS) >/dev/null

demo: build
	$(VPY) bench/demo.py

# Every benchmark on every MPI and transport; results in docs/perf/.
# The shaped network and the simulated hosts need root (ip netns, unshare, tc).
bench: build
	$(VENV)/bin/tandem bench overlap --transports shaped,shm,tcp \
		--sizes 262144,1048576,4194304 --rounds 3 --trials 5 --timeout 20 --out docs/perf
	$(VENV)/bin/tandem bench eager --transports shaped,shm,tcp \
		--sizes 1024,4096,16384,65536 --rounds 3 --trials 5 --timeout 20 --out docs/perf
	$(VENV)/bin/tandem bench latency --transports shm,tcp --sizes 8,65536,4194304 \
		--rounds 9 --trials 7 --timeout 30 --out docs/perf
	$(VENV)/bin/tandem bench halo --transports shm,tcp --ranks 1,2,4 --rounds 3 \
		--trials 3 --timeout 30 --out docs/perf
	$(VENV)/bin/tandem bench halo --transports shaped --ranks 1,2,4 --cells 8388608 \
		--halo-bytes 262144 --rounds 3 --trials 3 --timeout 60 --out docs/perf/halo-shaped
	$(VENV)/bin/tandem bench io --ranks 1,2 --rounds 5 --trials 7 --timeout 60 --out docs/perf
	$(VENV)/bin/tandem bench coll --transports shaped,shm --sizes 65536,1048576,4194304 \
		--rounds 3 --trials 5 --timeout 30 --out docs/perf
	$(VENV)/bin/tandem bench nbc --transports shm --ranks 2,4 \
		--sizes 1024,16384,65536,1048576 --rounds 3 --trials 9 --timeout 120 --out docs/perf
	$(VENV)/bin/tandem bench post --transports shm --ranks 1,2 --sizes 1024 \
		--idle-us 0,100,1000 --rounds 3 --trials 1001 --timeout 60 --out docs/perf
	$(VENV)/bin/tandem bench ioapp --transports shm --ranks 2,4 --ops 0,400,2000 --rounds 3 \
		--trials 3 --timeout 150 --io-dir /tmp --out docs/perf
	$(VENV)/bin/tandem bench ioapp --transports shaped --ranks 2 --ops 400,2000 --rounds 2 \
		--trials 3 --timeout 60 --io-dir /tmp --out docs/perf/ioapp-shaped
	$(VENV)/bin/tandem bench monitor --sizes 8,4096 --ranks 2,4 --rounds 5 --trials 21 \
		--steps 20 --timeout 120 --out docs/perf
	$(VENV)/bin/tandem bench overlap --transports shaped --hosts 2 --link 2gbit \
		--sizes 262144,1048576,4194304 --rounds 5 --trials 5 --timeout 30 --out docs/perf/hosts
	$(VPY) bench/hosts_cost.py --rounds 9 --trials 5 --timeout 30 --out docs/perf/hosts

# Both MPIs from Debian's .deb files with Tandem built against each, for the
# lent 16-core machine (bench/device.sh); the check runs it with the system's
# MPI hidden (root). Not part of `make test`: it downloads the packages.
device-pack: deps
	tools/device-pack

device-check: device-pack
	tools/device-pack --check

test: build check ctest asan tsan pytest
	@echo "make test: all passed"

# Generated files and the formatting are current; the modules of src/ include
# each other without cycles; the documents' links lead somewhere.
check: generated-check envdoc-check format-check lint include-check doc-links

doc-links: venv
	$(VPY) tools/doc_links.py

generated-check: venv
	$(VPY) tools/gen_wrappers.py --check
	$(VPY) tools/gen_virt_names.py --check
	$(VPY) tools/gen_virt_fortran.py --check

envdoc-check: build
	build/openmpi/tandem-envdoc | diff -u docs/ENVIRONMENT.md - \
		|| { echo "docs/ENVIRONMENT.md is stale: run build/openmpi/tandem-envdoc > docs/ENVIRONMENT.md"; exit 1; }

format-check: deps
	clang-format --dry-run --Werror $(C_SOURCES)

include-check: venv
	$(VPY) tools/include_graph.py

lint: venv
	$(VENV)/bin/ruff check python tests bench tools
	$(VENV)/bin/ruff format --check python tests bench tools

ctest: build
	@for b in $(BUILDS); do echo "== ctest $$b"; (cd build/$$b && $(CTEST)) || exit 1; done

# The library and the C tests with AddressSanitizer and UBSan (no Fortran),
# but for the 4-rank runs of programs that also run on fewer ranks with the
# same settings, or with one progress process instead of two (label "wider",
# tests/CMakeLists.txt): they took half of the sanitized suite's time, and the
# plain builds run them (ctest).
asan: $(addprefix asan-,$(BUILDS))

asan-%: build
	cmake -S . -B build/asan-$* -DTANDEM_FORTRAN=OFF -DTANDEM_SANITIZE=$(SANITIZE) \
		-DTANDEM_PYTHON=$(CURDIR)/$(VPY) $(CMAKE_FLAGS_$*) >/dev/null
	cmake --build build/asan-$* -j $(JOBS) >/dev/null
	@echo "== ctest asan-$*"
	cd build/asan-$* && $(CTEST) -LE wider

# ThreadSanitizer: the progress engine's unit test, and MPI programs with the
# proxy strategy (Tandem's threads, proxies, the I/O worker and the completion
# hooks instrumented). The multi-threaded stress test is left out: Open MPI
# itself (not instrumented) draws race reports there without Tandem.
TSAN_ENV = --env TANDEM_PROGRESS=proxy --env TANDEM_EAGER_LIMIT=0 --env TANDEM_COLL=tandem
# Virtual ranks: user-level threads switched by hand, announced to
# ThreadSanitizer as fibers (src/virt/context.h).
TSAN_VIRT = p2p icoll
TSAN_PROGRAMS = p2p_nonblocking p2p_errors p2p_persistent io monitor_api coll_nonblocking coll_free_objects \
	coll_any_call coll_first_use coll_order rma_matrix
tsan: build
	cmake -S . -B build/tsan -DTANDEM_FORTRAN=OFF -DTANDEM_SANITIZE=thread \
		-DTANDEM_PYTHON=$(CURDIR)/$(VPY) $(CMAKE_FLAGS_openmpi) >/dev/null
	cmake --build build/tsan -j $(JOBS) --target test_progress tandem tandem-probe \
		$(addprefix test_,$(TSAN_PROGRAMS)) $(foreach t,$(TSAN_VIRT),test_virt_$(t) test_virt_$(t)_virt) \
		>/dev/null
	@echo "== ThreadSanitizer: progress engine"
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" build/tsan/tests/test_progress
	@for t in $(TSAN_PROGRAMS); do \
		echo "== ThreadSanitizer: $$t, 2 ranks, TANDEM_PROGRESS=proxy TANDEM_COLL=tandem"; \
		$(VPY) tests/compare.py --build $(CURDIR)/build/tsan -n 2 $(TSAN_ENV) \
			-- $(CURDIR)/build/tsan/tests/test_$$t >build/tsan/$$t.log 2>&1 \
			|| { grep -A30 "WARNING: ThreadSanitizer" build/tsan/$$t.log | head -80; \
			tail -40 build/tsan/$$t.log; exit 1; }; \
	done
	@for t in $(TSAN_VIRT); do \
		echo "== ThreadSanitizer: virtual ranks, $$t, 2 cores of 2 ranks, 2 processes of 2 with the progress thread"; \
		for where in "--cores 2" "--hosts 2 --env TANDEM_VIRT_PROGRESS=thread"; do \
			$(VPY) tests/virt_compare.py --build $(CURDIR)/build/tsan --ranks 4 $$where \
				$(CURDIR)/build/tsan/tests/test_virt_$$t $(CURDIR)/build/tsan/tests/test_virt_$${t}_virt \
				>build/tsan/virt_$$t.log 2>&1 && tail -1 build/tsan/virt_$$t.log \
				|| { grep -A30 "WARNING: ThreadSanitizer" build/tsan/virt_$$t.log | head -80; \
				tail -40 build/tsan/virt_$$t.log; exit 1; }; \
		done; \
	done
	@echo "== ThreadSanitizer: p2p_nonblocking over TCP, 2 ranks, TANDEM_POLL=event"
	@$(VPY) tests/compare.py --build $(CURDIR)/build/tsan -n 2 $(TSAN_ENV) --env TANDEM_POLL=event \
		--transport tcp -- $(CURDIR)/build/tsan/tests/test_p2p_nonblocking | tail -3 \
		| grep -q "^passed" || { echo "failed; rerun the line above without the filter"; exit 1; }

# Two workers (JOBS): most tests wait on launchers and ranks that start, so
# two at a time took the suite from 351 to 201 s on 2 cores.
pytest: build mpi4py
	$(VPY) -m pytest -q -n $(JOBS) tests/python

# mpi4py for each MPI, for the tests (tests/python/test_mpi4py.py): PyPI's
# wheel carries an Open MPI and an MPICH variant. The MPICH one needs
# libmpi.so.12, which Debian's MPICH names libmpich.so.12: build/mpi4py/mpich
# holds the same package and lib/libmpi.so.12, a link to Debian's library,
# and the tests run it with LD_LIBRARY_PATH there and MPI4PY_MPIABI=mpich (a
# source build with mpicc.mpich took 2 minutes of every fresh CI run).
MPI4PY := mpi4py==4.1.2
mpi4py: build/mpi4py/openmpi/mpi4py build/mpi4py/mpich/mpi4py

build/mpi4py/openmpi/mpi4py: | deps $(VPY)
	$(VPY) -m pip install -q --target build/mpi4py/openmpi $(MPI4PY)

build/mpi4py/mpich/mpi4py: build/mpi4py/openmpi/mpi4py
	mkdir -p build/mpi4py/mpich/lib
	libmpich=$$(ldconfig -p | awk '$$1 == "libmpich.so.12" { print $$NF; exit }'); \
		test -n "$$libmpich" || { echo "no libmpich.so.12 (make deps)"; exit 1; }; \
		ln -sfn "$$libmpich" build/mpi4py/mpich/lib/libmpi.so.12
	ln -sfn ../openmpi/mpi4py build/mpi4py/mpich/mpi4py

format:
	clang-format -i $(C_SOURCES)
	$(VENV)/bin/ruff format python tests bench tools

clean:
	rm -rf build
