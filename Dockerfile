# The desched image: the CLI (lint, simulate, run, webhook, certs), non-root, fit for a read-only root filesystem.
#   docker build -t ghcr.io/desched/desched:0.1.0 .
# It installs desched[all] at the versions the tests run with (constraints.txt).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY kernel kernel
COPY linter linter
COPY executor executor
COPY webhook webhook
RUN pip install --no-cache-dir --prefix=/install -c constraints.txt '.[all]' && python -m compileall -q /install

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /install /usr/local
USER 65532:65532
ENTRYPOINT ["desched"]
CMD ["--help"]
