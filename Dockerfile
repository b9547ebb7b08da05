# Web and CPU worker image: Debian's ROCm toolchain (hipcc 5.2) builds for AMD targets without a GPU.
FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 HIP_PLATFORM=amd DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends \
      git binutils util-linux bubblewrap hipcc libamdhip64-dev rocm-device-libs libhiprand-dev librocrand-dev \
      libhipsparse-dev librocsparse-dev librocprim-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
EXPOSE 8000
CMD ["gunicorn", "migrator.wsgi", "-b", "0.0.0.0:8000", "-w", "3", "--timeout", "300"]
