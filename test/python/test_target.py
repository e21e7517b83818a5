"""Target descriptions: presets, the host, and descriptions written in the IR."""

import pytest
from mlir import ir
from strata import source
from strata.dialects import target


@pytest.mark.parametrize("name", target.names())
def test_every_preset_round_trips_through_its_attribute(name):
    desc = target.resolve(name)
    with source.make_context(), ir.Location.unknown():
        assert target.TargetDesc.from_attr(desc.to_attr()) == desc


def test_the_host_knows_its_vector_width_caches_and_cores():
    host = target.host_cpu()
    assert host.is_host and host.kind == "cpu"
    assert host.vector_bits in (128, 256, 512) and host.cores >= 1 and host.l1_bytes > 0


def test_cpu_presets_take_another_llvm_cpu():
    desc = target.resolve("cpu:aarch64:neoverse-n1")
    assert desc.chip == "neoverse-n1" and desc.triple.startswith("aarch64")
    with pytest.raises(ValueError, match="unknown target 'nvvm:sm_90a:x'"):
        target.resolve("nvvm:sm_90a:x")


def test_a_description_written_in_the_ir_is_read_back():
    text = """
    module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu",
                                      chip = "znver4", vector_bits = 512 : i64, cores = 8 : i64}} {
    }
    """
    module = source.parse(text, source.make_context(), "t.mlir")
    desc = target.of(module)
    assert (desc.chip, desc.vector_bits, desc.cores) == ("znver4", 512, 8)
    assert desc.vector_registers == 16  # unspecified facts keep their defaults


@pytest.mark.parametrize(
    "entries,message",
    [
        ('kind = "cpu", triple = "x", bogus = 1 : i64', "unknown key 'bogus'"),
        ('kind = "cpu", triple = "x", cores = "two"', "'cores' must be an integer"),
        ('kind = "cpu"', "needs 'triple'"),
    ],
)
def test_bad_descriptions_are_errors(entries, message):
    module = source.parse(
        f"module attributes {{target.desc = {{{entries}}}}} {{}}", source.make_context(), "t.mlir"
    )
    with pytest.raises(ValueError, match=message):
        target.of(module)
