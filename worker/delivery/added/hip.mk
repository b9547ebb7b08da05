# The AMD build of this Makefile, read only by `make GPU_PLATFORM=amd` (the CUDA build never reads it):
# the CUDA sources are translated to HIP into $(HIP_BUILD_DIR) with Migrator's engine
# (rocm/hipify_tree.py), then this same Makefile runs there with hipcc standing in for nvcc
# (rocm/nvcc_as_hipcc.py). AMDGPU_TARGETS names the GPUs to build for.
MIGRATOR_ROCM_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
PYTHON ?= python3
HIP_BUILD_DIR ?= .hip-build
AMDGPU_TARGETS ?= gfx90a
MIGRATOR_HIP_NVCC := $(PYTHON) $(abspath $(MIGRATOR_ROCM_DIR))/nvcc_as_hipcc.py \
	$(foreach arch,$(AMDGPU_TARGETS),--offload-arch=$(arch))

.PHONY: migrator-hip-build migrator-hipify
migrator-hip-build: migrator-hipify
	+$(MAKE) -C $(HIP_BUILD_DIR) MIGRATOR_HIPIFIED=1 GPU_PLATFORM=amd NVCC="$(MIGRATOR_HIP_NVCC)" $(MAKECMDGOALS)

migrator-hipify:
	$(PYTHON) $(MIGRATOR_ROCM_DIR)/hipify_tree.py . $(HIP_BUILD_DIR)

ifneq ($(MAKECMDGOALS),)
$(MAKECMDGOALS): migrator-hip-build ; @:
endif
