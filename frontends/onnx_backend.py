"""strata as an ONNX backend (`onnx.backend.base.Backend`): `prepare(model).run(inputs)`.

Models are compiled for the CPU on first run. An input that an op needs at compile time (a
Reshape's shape, a Slice's bounds, ...) is folded into the compiled code with the value given
at run time; a later run with a different value compiles again (each variant is kept).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from .. import compile as compile_module
from .onnx import NeedsConstant, import_model


class StrataRep(BackendRep):
    """A prepared model: compiled on first run, one executable per set of folded inputs."""

    def __init__(self, model: onnx.ModelProto, target: str = "cpu"):
        self.model = model
        self.target = target
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.folded: set[str] = set()
        self.executables: dict = {}

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            inputs = [inputs[name] for name in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if len(inputs) != len(self.input_names):
            raise ValueError(f"the model takes {len(self.input_names)} inputs, got {len(inputs)}")
        feeds = dict(zip(self.input_names, (np.asarray(x) for x in inputs), strict=True))
        while True:
            key = tuple((name, feeds[name].tobytes()) for name in sorted(self.folded))
            executable = self.executables.get(key)
            if executable is not None:
                break
            constants = {name: feeds[name] for name in self.folded}
            try:
                module = import_model(self.model, constants=constants)
            except NeedsConstant as error:
                if error.name in self.folded:
                    raise
                self.folded.add(error.name)
                continue
            executable = compile_module(module, target=self.target)
            self.executables[key] = executable
        arguments = [feeds[name] for name in self.input_names if name not in self.folded]
        outputs = executable(*arguments)
        return tuple(outputs) if isinstance(outputs, tuple) else (outputs,)


class StrataBackend(Backend):
    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> StrataRep:
        if not cls.supports_device(device):
            raise ValueError(f"strata's ONNX backend runs on the CPU, not on {device}")
        super().prepare(model, device, **kwargs)
        return StrataRep(model)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)


prepare = StrataBackend.prepare
run_model = StrataBackend.run_model
supports_device = StrataBackend.supports_device
