# The desched image: the CLI (lint, simulate, run, webhook, certs), non-root, fit for a read-only root filesystem.
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t ghcr.io/desched/desched:0.1.0 .
# scripts/image build builds this file without any registry (Debian bases, FROM lines swapped) and the tests run
# the result as deploy/ does; .github/workflows/release.yml builds, signs and publishes it (docs/image.md).
# It installs desched[all] at the versions the tests run with (constraints.txt), from requirements/image.txt: that lock
# pins every distribution with the sha256 of its files and pip installs it with --require-hashes, so a file that is
# not the one locked fails the build. After a change to constraints.txt or to pyproject.toml's dependencies, run
# scripts/lock-image (with Python 3.11) and commit requirements/image.txt; tests/test_image.py checks that they agree.
#
# Base image: python:3.11-slim-bookworm (CPython 3.11.16 on Debian 12), pinned by the digest of its multi-platform
# OCI image index (not of one platform's manifest), so one FROM line serves linux/amd64 and linux/arm64 alike; the tag
# only documents it, the digest decides. Both stages use the same digest (the runtime stage runs the build stage's
# venv, whose interpreter it must have). The tag is python:3.11-slim-bookworm, not python:3.11-slim, because the
# latter moved to Debian 13 (trixie) in August 2025. This digest was not read from the registry on the machine that
# wrote this file (it had none): it is the one public records give for the tag in September and October 2026 (Docker
# Hub's tag API answered it on 2026-09-21; other projects record it as the multi-platform index resolved on
# 2026-10-01 and in use on 2026-10-09). Check it, and refresh it (both FROM lines at once), with one of:
#   docker buildx imagetools inspect python:3.11-slim-bookworm --format '{{json .Manifest}}'   # its "digest" field
#   crane digest python:3.11-slim-bookworm
# both of which print the index digest; a platform's manifest digest (one of its "manifests") is not the one to use.
FROM python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Dependencies first (their layer outlives source edits), every one hash-checked; setuptools among them, the build
# backend desched is built with below (--no-build-isolation: pip downloads nothing for the build). python3, not
# python: a Debian base (scripts/image builds on one) has no `python` command.
COPY requirements/image.txt requirements/image.txt
RUN python3 -m venv /opt/desched \
 && /opt/desched/bin/pip install --no-cache-dir --require-hashes --no-deps -r requirements/image.txt
COPY pyproject.toml README.md ./
COPY kernel kernel
COPY linter linter
COPY executor executor
COPY webhook webhook
# --require-hashes cannot cover a local directory, so desched is a separate install with --no-deps: it adds only this
# source. pip check fails the build if the lock misses a dependency. Then the installers leave the venv: setuptools
# (needed only to build desched) and pip itself, so the runtime holds nothing that installs or builds code.
RUN /opt/desched/bin/pip install --no-cache-dir --no-deps --no-build-isolation . \
 && /opt/desched/bin/pip check \
 && /opt/desched/bin/pip uninstall --yes setuptools \
 && /opt/desched/bin/python -m pip uninstall --yes pip \
 && python3 -m compileall -q /opt/desched

FROM python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b
# The base interpreter's own installers go too (the python image ships pip, setuptools and wheel in /usr/local; the
# venv cannot see them, but nothing at run time should be able to install code). A Debian base has none of them.
RUN site=/usr/local/lib/python3.11/site-packages \
 && rm -rf /usr/local/bin/pip* /usr/local/bin/wheel "$site"/pip "$site"/pip-* "$site"/setuptools "$site"/setuptools-* \
      "$site"/wheel "$site"/wheel-* "$site"/_distutils_hack "$site"/distutils-precedence.pth "$site"/pkg_resources
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/desched/bin:$PATH
COPY --from=build /opt/desched /opt/desched
# OCI annotations (https://github.com/opencontainers/image-spec/blob/main/annotations.md): the release workflow
# passes VERSION (the tag without its v) and REVISION (the commit); scripts/image passes pyproject.toml's version and
# the checkout's commit.
ARG VERSION
ARG REVISION
LABEL org.opencontainers.image.title="desched" \
      org.opencontainers.image.description="Lint, migrate, admit and run Kubernetes descheduler policies" \
      org.opencontainers.image.source="https://github.com/desched/desched" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
USER 65532:65532
ENTRYPOINT ["desched"]
CMD ["--help"]
