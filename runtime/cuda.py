"""Runs GPU artifacts (`strata-compile --emit artifact`) through the CUDA driver API.

Needs numpy and cuda-python's `cuda.bindings` only: no MLIR, no LLVM, no CUDA toolkit. The
kernels load from the artifact's cubin when it was built for the device's chip, else from its
PTX (the driver compiles it once per process, and caches it across processes).

A function takes numpy arrays or device arrays (anything with `__cuda_array_interface__`:
torch and CuPy tensors) and returns the same kind: numpy arrays for numpy inputs, `DeviceArray`s
(which torch and CuPy take without a copy: `torch.as_tensor(r, device="cuda")`) when any input
is on the device. Temporaries live in one device workspace per function and constants are
uploaded once per process. The first call launches kernel by kernel; later calls replay a CUDA
graph of the same launches, whose buffer addresses are updated in place when a call binds
other arrays.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from .abi import InvocationError, Signature, TensorSpec, as_list, dtype_of, host_outputs
from .gpu_artifact import Artifact, FunctionPlan, Launch, TensorMap

try:
    from cuda.bindings import driver
except ImportError:  # pragma: no cover - depends on the machine
    driver = None

# The MLIR scalar types a launch may pass, as the C types of the kernel's parameters.
_SCALAR_CTYPES = {
    "index": ctypes.c_int64,
    "i64": ctypes.c_int64,
    "i32": ctypes.c_int32,
    "i16": ctypes.c_int16,
    "i8": ctypes.c_int8,
    "i1": ctypes.c_bool,
    "f64": ctypes.c_double,
    "f32": ctypes.c_float,
}
# Kernels access whole vectors of up to 16 bytes; narrower alignment would fault.
DEVICE_ALIGNMENT = 16
_STATIC_SHARED_LIMIT = 48 * 1024


class CudaError(RuntimeError):
    """A CUDA driver call failed, or there is no usable CUDA device."""


def _check(result):
    """cuda.bindings returns (status, *values); raises on a failing status."""
    status, *values = result if isinstance(result, tuple) else (result,)
    if status != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(status)
        _, text = driver.cuGetErrorString(status)
        name = name.decode() if isinstance(name, bytes) else status
        text = text.decode() if isinstance(text, bytes) else ""
        raise CudaError(f"CUDA error {name}: {text}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


class Device:
    """The process's CUDA device 0 in its primary context, the one torch and CuPy use, so
    that their arrays and strata's are valid in each other's launches."""

    _instance: Device | None = None
    _lock = threading.Lock()

    def __init__(self):
        if driver is None:
            raise CudaError(
                "running on a GPU needs cuda-python: pip install 'strata[cuda]' (cuda-bindings)"
            )
        try:
            _check(driver.cuInit(0))
        except (RuntimeError, CudaError) as error:
            raise CudaError(f"no CUDA device: {error}") from None
        if _check(driver.cuDeviceGetCount()) == 0:
            raise CudaError("no CUDA device: the driver sees no GPU")
        self.device = _check(driver.cuDeviceGet(0))
        self.context = _check(driver.cuDevicePrimaryCtxRetain(self.device))
        self.make_current()
        attribute = driver.CUdevice_attribute
        major = _check(
            driver.cuDeviceGetAttribute(
                attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device
            )
        )
        minor = _check(
            driver.cuDeviceGetAttribute(
                attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device
            )
        )
        self.compute_capability = (major, minor)
        self.name = _check(driver.cuDeviceGetName(256, self.device)).split(b"\0")[0].decode()

    @classmethod
    def get(cls) -> Device:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            cls._instance.make_current()
            return cls._instance

    def make_current(self) -> None:
        _check(driver.cuCtxSetCurrent(self.context))

    def runs(self, chip: str) -> bool:
        """Whether a cubin for `chip` (sm_XY or sm_XYa) runs here: cubins run only on the
        exact compute capability, and `a` features only on that chip."""
        digits = chip.removeprefix("sm_").rstrip("a")
        return (int(digits[:-1]), int(digits[-1])) == self.compute_capability

    def allocate(self, size: int, stream=0) -> int:
        """Stream-ordered device memory (the driver's pool: no device-wide synchronization)."""
        return int(_check(driver.cuMemAllocAsync(max(size, 1), stream)))

    def free(self, address: int, stream=0) -> None:
        _check(driver.cuMemFreeAsync(address, stream))


class DeviceArray:
    """A C-contiguous array in device memory owned by strata; torch, CuPy and numba take it
    without a copy through `__cuda_array_interface__`, and `numpy()` copies it to the host."""

    def __init__(self, spec: TensorSpec, stream=0):
        self._device = Device.get()
        self.shape = spec.shape
        self.dtype = spec.dtype
        self.nbytes = int(np.prod(spec.shape, dtype=np.int64)) * self.dtype.itemsize
        self._stream = stream
        self.ptr = self._device.allocate(self.nbytes, stream)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            # Work on `stream` wrote the array; a consumer synchronizes with it first.
            "stream": int(self._stream) or 1,
        }

    def numpy(self) -> np.ndarray:
        host = np.empty(self.shape, self.dtype)
        _check(driver.cuStreamSynchronize(self._stream))
        _check(driver.cuMemcpyDtoH(host.ctypes.data, self.ptr, self.nbytes))
        return host

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"

    def __del__(self):
        if getattr(self, "ptr", None) and driver is not None:
            try:
                self._device.free(self.ptr, self._stream)
            except Exception:  # the process is shutting down and the context is gone
                pass


def _device_pointer(value, spec: TensorSpec, what: str) -> int:
    """The data address of a device array that matches `spec`, checked."""
    interface = value.__cuda_array_interface__
    dtype = np.dtype(interface["typestr"])
    if dtype.kind == "V" and spec.element == "bf16" and dtype.itemsize == 2:
        dtype = spec.dtype  # torch describes bfloat16 as 2 opaque bytes ("|V2")
    shape = tuple(interface["shape"])
    if dtype != spec.dtype or shape != spec.shape:
        raise InvocationError(
            f"{what} must be {spec} ({spec.dtype}{list(spec.shape)}), got {dtype}{list(shape)}"
        )
    strides = interface.get("strides")
    if strides is not None:
        expected, step = [], dtype.itemsize
        for extent in reversed(shape):
            expected.append(step)
            step *= extent
        if any(
            e > 1 and s != x for e, s, x in zip(shape, strides, reversed(expected), strict=True)
        ):
            raise InvocationError(f"{what} must be C-contiguous (strides {list(strides)})")
    address = int(interface["data"][0])
    if address % DEVICE_ALIGNMENT:
        raise InvocationError(
            f"{what} must start on a {DEVICE_ALIGNMENT}-byte boundary (its kernels read whole "
            f"vectors); pass a contiguous copy"
        )
    return address


def _stream_handle(stream) -> int:
    if stream is None:
        return 0
    for attribute in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, cuda.core
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return int(stream)


class _LaunchArguments:
    """One launch's parameter storage and the `void**` that points at it. Buffer arguments
    are rebound by writing their slot; the driver copies the values at each launch."""

    def __init__(self, launch: Launch):
        self.slots = []
        self.buffer_slots: list[tuple[int, ctypes.c_void_p]] = []
        for argument in launch.arguments:
            if argument.buffer is not None:
                slot = ctypes.c_void_p(0)
                self.buffer_slots.append((argument.buffer, slot))
            else:
                kind = _SCALAR_CTYPES.get(argument.type)
                if kind is None:
                    raise CudaError(f"kernel argument of unsupported type {argument.type}")
                slot = kind(argument.scalar)
            self.slots.append(slot)
        self.pointers = (ctypes.c_void_p * max(1, len(self.slots)))(
            *[ctypes.addressof(slot) for slot in self.slots]
        )

    def bind(self, addresses: list[int]) -> bool:
        """Writes the buffers' addresses; returns whether any changed."""
        changed = False
        for buffer, slot in self.buffer_slots:
            if slot.value != addresses[buffer]:
                slot.value = addresses[buffer]
                changed = True
        return changed

    @property
    def address(self) -> int:
        return ctypes.addressof(self.pointers)


class Module:
    """An artifact loaded on the device: its kernels, its constants, and its functions."""

    def __init__(self, artifact: Artifact, path: str = "<artifact>"):
        self.device = Device.get()
        self.path = path
        self.artifact = artifact
        cubin = next(
            (data for chip, data in artifact.cubins.items() if self.device.runs(chip)), None
        )
        image = cubin if cubin is not None else artifact.ptx.encode() + b"\0"
        try:
            self.module = _check(driver.cuModuleLoadData(image))
        except CudaError as error:
            source = "cubin" if cubin is not None else f"PTX for {artifact.chip}"
            raise CudaError(
                f"{path}: the {source} does not load on {self.device.name} "
                f"(sm_{''.join(map(str, self.device.compute_capability))}): {error}"
            ) from None
        self._kernels: dict[str, object] = {}
        self.constants = []
        for data in artifact.constants:
            address = self.device.allocate(len(data))
            _check(driver.cuMemcpyHtoD(address, data, len(data)))
            self.constants.append(address)
        self.functions = {name: Function(self, plan) for name, plan in artifact.functions.items()}

    def kernel(self, name: str, shared_bytes: int):
        if name not in self._kernels:
            function = _check(driver.cuModuleGetFunction(self.module, name.encode()))
            if shared_bytes > _STATIC_SHARED_LIMIT:
                _check(
                    driver.cuFuncSetAttribute(
                        function,
                        driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared_bytes,
                    )
                )
            self._kernels[name] = function
        return self._kernels[name]

    def __getitem__(self, name: str) -> Function:
        if name not in self.functions:
            known = ", ".join(sorted(self.functions))
            raise KeyError(f"{self.path} has no function '{name}' (it has {known})")
        return self.functions[name]


class Function:
    """A compiled function of a GPU artifact, called like the CPU runtime's functions.

    Calls of one function are serialized (they share its workspace): a call waits for the
    previous one's launches on whichever stream they ran.
    """

    def __init__(self, module: Module, plan: FunctionPlan):
        self.module = module
        self.plan = plan
        self.name = plan.name
        self.inputs, self.results = plan.inputs, plan.results
        device = module.device
        self._lock = threading.Lock()
        self._workspace = device.allocate(plan.workspace_bytes) if plan.workspace_bytes else 0
        # Host calls stage their inputs and results in buffers of their own.
        self._staging = [
            device.allocate(spec.dtype.itemsize * _count(spec))
            for spec in (*plan.inputs, *plan.results)
        ]
        self._kernels = [
            module.kernel(launch.kernel, launch.shared_bytes) for launch in plan.launches
        ]
        self._arguments = [_LaunchArguments(launch) for launch in plan.launches]
        self._tensormap_sources: list[int | None] = [None] * len(plan.tensormaps)
        self._graph = None
        self._nodes: list = []
        self._calls = 0
        self._done = _check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING))

    def __call__(self, *args, out=None, stream=None):
        if len(args) != len(self.inputs):
            raise InvocationError(
                f"'{self.name}' takes {len(self.inputs)} input(s), got {len(args)}"
            )
        on_device = any(hasattr(a, "__cuda_array_interface__") for a in args)
        handle = _stream_handle(stream)
        with self._lock:
            self.module.device.make_current()
            _check(driver.cuStreamWaitEvent(handle, self._done, 0))
            inputs = self._inputs(args, handle)
            if on_device:
                results = self._device_results(out, handle)
                addresses = inputs + [r_ptr for _, r_ptr in results]
            else:
                addresses = inputs + self._staging[len(self.inputs) :]
            buffers = self._buffer_addresses(addresses)
            self._encode_tensormaps(buffers, handle)
            changed = [i for i, a in enumerate(self._arguments) if a.bind(buffers)]
            self._run(changed, handle)
            _check(driver.cuEventRecord(self._done, handle))
            if on_device:
                values = [array for array, _ in results]
            else:
                values = self._host_results(out, handle)
        return values[0] if len(values) == 1 else tuple(values)

    def _inputs(self, args, stream) -> list[int]:
        """Device arrays bind as they are; host arrays are staged."""
        addresses = []
        for i, (arg, spec) in enumerate(zip(args, self.inputs, strict=True)):
            what = f"input {i} of '{self.name}'"
            if hasattr(arg, "__cuda_array_interface__"):
                addresses.append(_device_pointer(arg, spec, what))
            else:
                addresses.append(self._stage(i, _host_array(arg, spec, what), stream))
        return addresses

    def _stage(self, i: int, host: np.ndarray, stream) -> int:
        # From pageable memory the copy has read `host` when the call returns.
        _check(driver.cuMemcpyHtoDAsync(self._staging[i], host.ctypes.data, host.nbytes, stream))
        return self._staging[i]

    def _device_results(self, out, stream) -> list[tuple[object, int]]:
        if out is None:
            arrays = [DeviceArray(spec, stream) for spec in self.results]
            return [(array, array.ptr) for array in arrays]
        given = as_list(out, len(self.results), self.name)
        return [
            (array, _device_pointer(array, spec, f"out[{i}] of '{self.name}'"))
            for i, (array, spec) in enumerate(zip(given, self.results, strict=True))
        ]

    def _host_results(self, out, stream) -> list[np.ndarray]:
        arrays = host_outputs(self.name, self.results, out)
        staged = self._staging[len(self.inputs) :]
        for array, address in zip(arrays, staged, strict=True):
            _check(driver.cuMemcpyDtoHAsync(array.ctypes.data, address, array.nbytes, stream))
        _check(driver.cuStreamSynchronize(stream))
        return arrays

    def _buffer_addresses(self, io_addresses: list[int]) -> list[int]:
        """The device address of each buffer of the plan for this call."""
        addresses = []
        for buffer in self.plan.buffers:
            if buffer.kind == "input":
                addresses.append(io_addresses[buffer.index])
            elif buffer.kind == "result":
                addresses.append(io_addresses[len(self.inputs) + buffer.index])
            elif buffer.kind == "constant":
                addresses.append(self.module.constants[buffer.index])
            else:
                addresses.append(self._workspace + buffer.offset)
        return addresses

    def _encode_tensormaps(self, addresses: list[int], stream) -> None:
        """The TMA descriptors of tensors whose address changed, into their slots (in stream
        order, after the launches of the previous call that read them)."""
        for number, request in enumerate(self.plan.tensormaps):
            source = addresses[request.source] + request.offset
            if self._tensormap_sources[number] == source:
                continue
            # From pageable memory the copy has read `encoded` when it returns.
            encoded = encode_tensormap(request, source)
            _check(driver.cuMemcpyHtoDAsync(addresses[request.slot], encoded, len(encoded), stream))
            self._tensormap_sources[number] = source

    def _run(self, changed: list[int], stream) -> None:
        self._calls += 1
        if self._calls == 1 or not self.plan.launches:
            for kernel, launch, arguments in zip(
                self._kernels, self.plan.launches, self._arguments, strict=True
            ):
                _check(
                    driver.cuLaunchKernel(
                        kernel,
                        *launch.grid,
                        *launch.block,
                        launch.shared_bytes,
                        stream,
                        arguments.address,
                        0,
                    )
                )
            return
        if self._graph is None:
            self._build_graph()
        else:
            for index in changed:
                _check(
                    driver.cuGraphExecKernelNodeSetParams(
                        self._graph, self._nodes[index], self._node_params(index)
                    )
                )
        _check(driver.cuGraphLaunch(self._graph, stream))

    def _node_params(self, index: int):
        launch = self.plan.launches[index]
        params = driver.CUDA_KERNEL_NODE_PARAMS()
        params.func = self._kernels[index]
        params.gridDimX, params.gridDimY, params.gridDimZ = launch.grid
        params.blockDimX, params.blockDimY, params.blockDimZ = launch.block
        params.sharedMemBytes = launch.shared_bytes
        params.kernelParams = self._arguments[index].address
        return params

    def _build_graph(self) -> None:
        """The launches as a chain of kernel nodes, instantiated once."""
        graph = _check(driver.cuGraphCreate(0))
        previous = []
        for index in range(len(self.plan.launches)):
            node = _check(
                driver.cuGraphAddKernelNode(
                    graph, previous, len(previous), self._node_params(index)
                )
            )
            self._nodes.append(node)
            previous = [node]
        self._graph = _check(driver.cuGraphInstantiate(graph, 0))
        self._graph_template = graph

    @property
    def signature(self) -> Signature:
        return Signature(self.name, self.inputs, self.results, self.plan.workspace_bytes)

    def __repr__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.results))
        return f"<strata GPU function {self.name}({ins}) -> ({outs})>"


_TENSORMAP_TYPES = {"f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32"}
_SWIZZLES = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}


def encode_tensormap(request: TensorMap, address: int) -> bytes:
    """The 128-byte CUtensorMap of `request` for the tensor at `address`. The driver takes
    dims innermost first, and the strides of all but the innermost dim in bytes."""
    element_type = getattr(
        driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{_TENSORMAP_TYPES[request.element]}"
    )
    element_bytes = dtype_of(request.element).itemsize
    rank = len(request.shape)
    tensor_map = _check(
        driver.cuTensorMapEncodeTiled(
            element_type,
            rank,
            address,
            [driver.cuuint64_t(d) for d in reversed(request.shape)],
            [driver.cuuint64_t(s * element_bytes) for s in reversed(request.strides[:-1])],
            [driver.cuuint32_t(b) for b in reversed(request.box)],
            [driver.cuuint32_t(1)] * rank,
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(
                driver.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLES[request.swizzle]}"
            ),
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    )
    return ctypes.string_at(tensor_map.getPtr(), 128)


def _count(spec: TensorSpec) -> int:
    return int(np.prod(spec.shape, dtype=np.int64))


def _host_array(value, spec: TensorSpec, what: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != spec.dtype:
        raise InvocationError(f"{what} must have dtype {spec.dtype} ({spec}), got {array.dtype}")
    if tuple(array.shape) != spec.shape:
        raise InvocationError(
            f"{what} must have shape {list(spec.shape)} ({spec}), got {list(array.shape)}"
        )
    return np.ascontiguousarray(array)


def load(path: str | Path) -> Module:
    """Loads a GPU artifact onto the device; its functions by name."""
    return Module(Artifact.read(path), str(path))
