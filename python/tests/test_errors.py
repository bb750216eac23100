"""Bad inputs raise TypeError (wrong type) or ValueError (wrong value), each naming the argument (STYLE.md)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import detred


def raises(exc, arg, f, *args, **kwargs):
    with pytest.raises(exc) as info:
        f(*args, **kwargs)
    assert str(info.value).startswith(arg + ":"), str(info.value)


def test_non_arrays_are_type_errors():
    raises(TypeError, "x", detred.sum, [1.0, 2.0])
    raises(TypeError, "x", detred.sum, "abc")
    raises(TypeError, "x", detred.max, None)
    raises(TypeError, "x", detred.dot, 3.0, np.ones(3))
    raises(TypeError, "y", detred.dot, np.ones(3), object())


def test_unsupported_dtypes_are_type_errors():
    raises(TypeError, "x", detred.sum, np.ones(3, np.int32))
    raises(TypeError, "x", detred.sum, np.ones(3, np.complex128))
    raises(TypeError, "x", detred.max, np.ones(3, np.uint8))
    raises(TypeError, "x", detred.mean, np.ones(3, bool))
    raises(TypeError, "x", detred.sum, np.ones(3, np.dtype(">f8")))
    raises(TypeError, "y", detred.dot, np.ones(3), np.ones(3, np.float32))


def test_bad_dtype_argument():
    raises(TypeError, "dtype", detred.sum, np.ones(3), dtype=np.float32)  # narrowing
    raises(TypeError, "dtype", detred.sum, np.ones(3, np.float32), dtype="int32")
    raises(TypeError, "dtype", detred.sum, np.ones(3, np.float32), dtype=np.float16)
    raises(TypeError, "dtype", detred.ExactAccumulator, "int8")


def test_bad_method():
    raises(ValueError, "method", detred.sum, np.ones(3), method="fast")
    raises(TypeError, "method", detred.sum, np.ones(3), method=3)


def test_bad_axis():
    x = np.ones((2, 3, 4))
    raises(ValueError, "axis", detred.sum, x, axis=1)
    raises(ValueError, "axis", detred.sum, x, axis=3)
    raises(ValueError, "axis", detred.sum, np.ones(3), axis=1)
    raises(ValueError, "axis", detred.sum, np.float64(1.0) * np.ones(()), axis=0)
    raises(TypeError, "axis", detred.sum, x, axis="last")
    raises(TypeError, "axis", detred.sum, x, axis=True)


def test_bad_shapes_and_values():
    raises(ValueError, "x", detred.dot, np.ones((2, 2)), np.ones(4))
    raises(ValueError, "y", detred.dot, np.ones(3), np.ones(4))
    raises(ValueError, "x", detred.argmax, np.zeros(0))
    raises(ValueError, "x", detred.argmin, np.zeros((3, 0)), axis=-1)
    raises(ValueError, "ddof", detred.var, np.ones(3), ddof=-1)
    raises(ValueError, "threads", detred.set_num_threads, 5000)


def test_exact_accumulator_errors():
    acc = detred.ExactAccumulator("float32")
    raises(TypeError, "x", acc.add, np.ones(3))  # float64 into the float32 layout
    raises(TypeError, "other", acc.merge, detred.ExactAccumulator("float64"))
    raises(ValueError, "data", detred.ExactAccumulator.from_bytes, b"nonsense")
    bad = bytearray(detred.ExactAccumulator("float32").to_bytes())
    bad[0] = ord("X")
    raises(ValueError, "data", detred.ExactAccumulator.from_bytes, bytes(bad))


def test_audit_errors():
    if not detred._detred.has_audit:
        pytest.skip("this build has no audit (DETRED_BUILD_VERIFY=OFF)")
    raises(ValueError, "device", detred.audit, np.ones(3), device="tpu")
    raises(ValueError, "algorithms", detred.audit, np.ones(3), algorithms=["cpu/nonesuch"])
    raises(TypeError, "array", detred.audit, [1.0, 2.0])
    raises(ValueError, "array", detred.audit, np.zeros(0))
    raises(TypeError, "repeat", detred.audit, np.ones(3), repeat=1.5)
    if not detred.cuda_available():
        with pytest.raises(ValueError):
            detred.audit(np.ones(3), device="gpu")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class FakeCudaArray:
    """A DLPack producer whose capsule says kDLCUDA (device type 2); its data pointer is never read."""

    def __init__(self):
        self.shape = (ctypes.c_int64 * 1)(4)
        self.managed = _DLManagedTensor()
        self.managed.dl_tensor.data = 0x1000
        self.managed.dl_tensor.device = _DLDevice(2, 0)
        self.managed.dl_tensor.ndim = 1
        self.managed.dl_tensor.dtype = _DLDataType(2, 32, 1)
        self.managed.dl_tensor.shape = self.shape

    def __dlpack__(self, stream=None, **kwargs):
        if "max_version" in kwargs and kwargs["max_version"] is not None:
            raise TypeError("unversioned capsules only")
        make = ctypes.pythonapi.PyCapsule_New
        make.restype = ctypes.py_object
        make.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return make(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)


def test_cuda_arrays_are_refused_without_the_cuda_backend():
    """Dispatch is on the DLPack device: in a build without the CUDA backend (or without a GPU) a CUDA array is a
    ValueError naming the argument."""
    if detred.cuda_available():
        pytest.skip("this build has the CUDA backend and a GPU: CUDA arrays run there (test_gpu.py)")
    raises(ValueError, "x", detred.sum, FakeCudaArray())
    raises(ValueError, "x", detred.max, FakeCudaArray())
    raises(ValueError, "x", detred.ExactAccumulator().add, FakeCudaArray())
