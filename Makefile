# The project's single entry point. `make run` and `make test` install what they
# need first (virtual environment, Python packages, Maven jars), once: stamps
# make a second set-up download nothing.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
JARS := .lakehouse/jars
PY_STAMP := $(VENV)/.installed
JARS_STAMP := $(JARS)/.fetched
# The Spark driver's class-data-sharing archive, recorded from one tiny ingestion
# (lakehouse/jvm_archive.py): every driver then starts in about half the time.
JVM_ARCHIVE := $(JARS)/spark-driver.jsa
# The live CDC chain's JVM programs (Kafka, Connect, Debezium): a class path of their own.
CDC_JARS := .lakehouse/cdc-jars
CDC_JARS_STAMP := $(CDC_JARS)/.fetched
CDC_PROFILES := kafka debezium-postgres debezium-mariadb apicurio-converter
# The chain's databases: Debian's PostgreSQL and MariaDB servers, run by `lakehouse cdc up`
# on their own data folders (never the system services).
MARIADB := /usr/sbin/mariadbd
POSTGRES := /usr/bin/pg_ctlcluster
# Bench-only jars (Delta Lake, Iceberg: `lakehouse bench ingest`'s peers), kept
# apart so no ingestion job, test session or Thrift server ever loads them.
BENCH_JARS := .lakehouse/bench-jars
BENCH_JARS_STAMP := $(BENCH_JARS)/.fetched
REGISTRY := .lakehouse/registry
REGISTRY_STAMP := $(REGISTRY)/.built
# Airflow lives in its own venv: its pins clash with dbt-core's (airflow/requirements.txt).
AIRFLOW_VENV := .venv-airflow
AIRFLOW_STAMP := $(AIRFLOW_VENV)/.installed
# Headless browser tests use Debian's Chromium (no browser download by a test tool).
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: setup run test lint stack-up stack-down clean

# Set-up steps run two at a time (the venvs' pip installs, Maven and the class
# archive overlap); each tool's own steps stay in order, below: Maven's (one local
# repository) and apt's (one dpkg lock). Their output is quiet, so not synchronised:
# that would hold the test suite's progress until it ends.
MAKEFLAGS += --jobs=2

setup: $(PY_STAMP) $(JARS_STAMP) $(JVM_ARCHIVE) $(CDC_JARS_STAMP) $(REGISTRY_STAMP) $(BENCH_JARS_STAMP) $(AIRFLOW_STAMP) $(MARIADB) $(POSTGRES)

$(PY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet --no-build-isolation -e '.[dev]'
	@# `dbt` from an activated venv finds the project's profiles and Spark settings.
	@grep -q 'lakehouse.dbt_wrapper' $(BIN)/activate || \
		echo 'eval "$$(python -m lakehouse.dbt_wrapper 2>/dev/null)"' >> $(BIN)/activate
	touch $@

$(JARS_STAMP): jvm/pom.xml
	mvn --batch-mode --quiet -f jvm/pom.xml dependency:copy-dependencies \
		-DoutputDirectory=$(abspath $(JARS))
	touch $@

$(JVM_ARCHIVE): $(PY_STAMP) $(JARS_STAMP)
	$(BIN)/python -m lakehouse.jvm_archive

$(CDC_JARS_STAMP): jvm/cdc/pom.xml | $(JARS_STAMP)
	rm -rf $(CDC_JARS)
	for profile in $(CDC_PROFILES); do \
		folder=$(abspath $(CDC_JARS))/connect-plugins/$$profile; \
		[ $$profile = kafka ] && folder=$(abspath $(CDC_JARS))/kafka; \
		mvn --batch-mode --quiet -f jvm/cdc/pom.xml -P$$profile dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory=$$folder || exit 1; \
	done
	touch $@

# Apicurio Registry's runnable layout, built from Maven Central's artifacts (jvm/registry).
$(REGISTRY_STAMP): jvm/registry/pom.xml jvm/registry/src/main/resources/application.properties
	rm -rf $(REGISTRY)
	mvn --batch-mode --quiet -f jvm/registry/pom.xml package -Dregistry.dir=$(abspath $(REGISTRY))
	touch $@

$(BENCH_JARS_STAMP): jvm/bench/pom.xml | $(CDC_JARS_STAMP)
	mvn --batch-mode --quiet -f jvm/bench/pom.xml dependency:copy-dependencies \
		-DoutputDirectory=$(abspath $(BENCH_JARS))
	touch $@

$(AIRFLOW_STAMP): airflow/requirements.txt
	$(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/pip install --quiet --upgrade pip
	$(AIRFLOW_VENV)/bin/pip install --quiet -r airflow/requirements.txt
	touch $@

$(CHROMIUM): | $(MARIADB)
	$(SUDO) apt-get install -y --no-install-recommends chromium fonts-liberation || \
		($(SUDO) apt-get update && \
		 $(SUDO) apt-get install -y --no-install-recommends chromium fonts-liberation)

$(MARIADB): | $(POSTGRES)
	$(SUDO) apt-get install -y --no-install-recommends mariadb-server mariadb-client || \
		($(SUDO) apt-get update && \
		 $(SUDO) apt-get install -y --no-install-recommends mariadb-server mariadb-client)

$(POSTGRES):
	$(SUDO) apt-get install -y --no-install-recommends postgresql || \
		($(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends postgresql)

# The main job, end to end on the local stack; ARGS go to `lakehouse run`
# (e.g. make run ARGS="--scale 1").
run: setup
	$(BIN)/lakehouse run $(ARGS)

# The test suite (starts and stops its own stack on free ports), on TEST_WORKERS
# pytest-xdist workers, each with its own stack: much of a test's time is one
# JVM starting or one Python process, so two workers keep both cores busy.
TEST_WORKERS ?= 2
test: setup $(CHROMIUM)
	$(BIN)/pytest -n $(TEST_WORKERS)

lint: setup
	$(BIN)/pre-commit run --all-files

stack-up: setup
	$(BIN)/lakehouse stack up

stack-down:
	$(BIN)/lakehouse stack down

clean:
	rm -rf target logs .pytest_cache .ruff_cache
