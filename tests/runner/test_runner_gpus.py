import pytest

from worker.runner.gpus import (
    parse_fake_gpus,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
    parse_rocm_smi_used_bytes,
    parse_rocminfo,
    probe,
    probe_gpus,
    sm_arch,
)

ROCMINFO = """ROCk module is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.1
System Timestamp Freq.:  1000.000000MHz
Machine Model:           LARGE
System Endianness:       LITTLE

==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD EPYC 7A53 64-Core Processor
  Uuid:                    CPU-XX
  Marketing Name:          AMD EPYC 7A53 64-Core Processor
  Vendor Name:             CPU
  Feature:                 None specified
  Profile:                 FULL_PROFILE
  Node:                    0
  Device Type:             CPU
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: FINE GRAINED
      Size:                    528168668(0x1f7b36dc) KB
      Allocatable:             TRUE
  ISA Info:
*******
Agent 2
*******
  Name:                    gfx90a
  Uuid:                    GPU-8e3a1c5b2f4d6071
  Marketing Name:          AMD Instinct MI250X
  Vendor Name:             AMD
  Feature:                 KERNEL_DISPATCH
  Profile:                 BASE_PROFILE
  Node:                    4
  Device Type:             GPU
  Cache Info:
    L1:                      16(0x10) KB
    L2:                      8192(0x2000) KB
  Chip ID:                 29704(0x7408)
  Compute Unit:            110
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    67092480(0x3ffc000) KB
      Allocatable:             TRUE
      Alloc Granule:           4KB
    Pool 2
      Segment:                 GROUP
      Size:                    64(0x40) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
      Machine Models:          HSA_MACHINE_MODEL_LARGE
*******
Agent 3
*******
  Name:                    gfx1100
  Uuid:                    GPU-XX
  Marketing Name:          Radeon RX 7900 XTX
  Vendor Name:             AMD
  Device Type:             GPU
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    25149440(0x17fc000) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1100
*** Done ***
"""

ROCM_SMI_5 = """{"card0": {"Card series": "AMD INSTINCT MI250 (MCM) OAM AC MBA", "Card model": "0x0b0c", \
"Card vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "D65209", \
"VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "10960896"}, \
"card1": {"Card series": "AMD INSTINCT MI250 (MCM) OAM AC MBA", "Card model": "0x0b0c", \
"Card vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "D65209", \
"VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "2147483648"}}"""

ROCM_SMI_6 = """{"card0": {"Card Series": "AMD Instinct MI300X", "Card Model": "0x74a1", \
"Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "M3000100", "Subsystem ID": "0x74a1", \
"Device Rev": "0x00", "Node ID": "2", "GUID": "28851", "GFX Version": "gfx942", \
"VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "295919616"}}"""

NVIDIA_SMI = """0, NVIDIA H200, 9.0, 143771, GPU-6f1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d
1, NVIDIA A100-SXM4-80GB, 8.0, 81920, GPU-0a1b2c3d-0000-1111-2222-333344445555
"""


def test_rocminfo_lists_gpu_agents_in_order_and_skips_the_cpu() -> None:
    gpus = parse_rocminfo(ROCMINFO)
    assert [(g.index, g.arch, g.name) for g in gpus] == [
        (0, "gfx90a", "AMD Instinct MI250X"),
        (1, "gfx1100", "Radeon RX 7900 XTX"),
    ]
    assert gpus[0].memory_bytes == 67092480 * 1024
    assert gpus[0].vendor == "amd" and not gpus[0].fake


def test_rocminfo_without_gpu_agents_gives_nothing() -> None:
    assert parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n") == []


def test_rocm_smi_json_reads_rocm5_and_rocm6_key_spellings() -> None:
    old = parse_rocm_smi_json(ROCM_SMI_5)
    assert [g.index for g in old] == [0, 1]
    assert old[1].name == "AMD INSTINCT MI250 (MCM) OAM AC MBA" and old[1].memory_bytes == 68702699520
    new = parse_rocm_smi_json(ROCM_SMI_6)
    assert new[0].arch == "gfx942" and new[0].name == "AMD Instinct MI300X"
    assert parse_rocm_smi_json("not json") == []


def test_rocm_smi_used_memory_is_read_per_card() -> None:
    assert parse_rocm_smi_used_bytes(ROCM_SMI_5, 1) == 2147483648
    assert parse_rocm_smi_used_bytes(ROCM_SMI_5, 7) is None


def test_nvidia_smi_csv_gives_sm_arch_and_memory_in_bytes() -> None:
    gpus = parse_nvidia_smi_csv(NVIDIA_SMI)
    assert [(g.index, g.name, g.arch) for g in gpus] == [(0, "NVIDIA H200", "sm_90"), (1, "NVIDIA A100-SXM4-80GB", "sm_80")]
    assert gpus[0].memory_bytes == 143771 * 1024 * 1024
    assert gpus[0].uuid.startswith("GPU-6f1b")


def test_sm_arch_handles_two_digit_majors() -> None:
    assert sm_arch("12.0") == "sm_120" and sm_arch("8.6") == "sm_86" and sm_arch("[N/A]") == ""


def test_fake_list_keeps_only_the_profiles_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [g.arch for g in parse_fake_gpus("gfx90a, sm_90,gfx942", "rocm")] == ["gfx90a", "gfx942"]
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,gfx90a")
    found = probe("rocm")
    assert found.fake and found.source == "fake" and [g.index for g in found.gpus] == [0, 1]
    assert all(g.fake for g in found.gpus) and "fake" in found.reason
    assert probe_gpus("cuda") == [] and "none for cuda" in probe("cuda").reason


def test_probe_on_this_machine_without_gpus_gives_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIGRATOR_FAKE_GPUS", raising=False)
    found = probe("cuda")
    assert found.gpus == [] and "nvidia-smi" in found.reason
    rocm = probe("rocm")
    assert rocm.gpus == [] and rocm.reason
