# One image for the web app, the CPU worker and the ROCm runner, on an official ROCm base.
# Compiles, links, builds and smoke runs happen in the sandbox over a toolchain root: here the same
# official image, copied in a second time as a plain folder and registered (scripts/toolchain-root),
# so that user code sees that root and nothing of the container it runs in.
# ROCm 7.2 by default (the official image; its Ubuntu 24.04 ships Python 3.12).
ARG ROCM_IMAGE=rocm/dev-ubuntu-24.04:7.2
FROM ${ROCM_IMAGE} AS toolchain

FROM ${ROCM_IMAGE}
ARG TOOLCHAIN_NAME=rocm-7.2-image
ENV PYTHONUNBUFFERED=1 HIP_PLATFORM=amd DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv git \
      bubblewrap util-linux \
    && rm -rf /var/lib/apt/lists/*
COPY --from=toolchain / /var/cache/migrator/toolchains/${TOOLCHAIN_NAME}/
WORKDIR /app
COPY requirements.txt .
RUN python3 -m venv /venv && /venv/bin/pip install --no-cache-dir -r requirements.txt
ENV PATH=/venv/bin:$PATH
COPY . .
# Bytecode for the product's modules (read even where PYTHONDONTWRITEBYTECODE is set): the translator's
# command line then starts without recompiling the engine (see ./dev compile_bytecode).
RUN python3 -m compileall -q --invalidation-mode checked-hash translator worker migrator
RUN scripts/toolchain-root register ${TOOLCHAIN_NAME} /var/cache/migrator/toolchains/${TOOLCHAIN_NAME}
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "-b", "0.0.0.0:8000"]
