"""The CUDA adapter's device discovery, end to end through `parity run`,
against stand-ins for the NVIDIA driver (a libcuda.so.1 compiled here, found
through LD_LIBRARY_PATH): a driver whose cuInit finds no device makes every
case SKIP, saying cuInit's answer; a driver with a device is described in
the run's summary, and when the CUDA runtime cannot start on it (the
stand-in lacks what the runtime calls) every case is SKIP naming the
runtime's error. On a machine with neither a driver nor a stand-in
the cases SKIP, naming the missing library."""
import ctypes
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "run"))
import run_test_util as util  # noqa: E402

ADAPTER = os.path.join(util.BINARY_DIR, "adapters", "libparity_adapter_cuda.so")

# The driver API's entry points that discovery reads, with the public
# reference's values: CUDA_ERROR_NO_DEVICE is 100, compute capability
# major and minor are attributes 75 and 76.
FAKE_DRIVER = r"""
#include <stddef.h>
#include <string.h>
int cuGetErrorName(int e, const char** n) { *n = e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN"; return 0; }
int cuInit(unsigned flags) { return NO_DEVICE ? 100 : 0; }
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuDeviceGetCount(int* c) { *c = 1; return 0; }
int cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetName(char* n, int length, int d) { strncpy(n, "Stand-in GPU", (size_t)length); return 0; }
int cuDeviceTotalMem_v2(size_t* bytes, int d) { *bytes = (size_t)80 << 30; return 0; }
int cuDeviceGetAttribute(int* v, int a, int d) { *v = a == 75 ? 9 : a == 76 ? 0 : -1; return 0; }
"""


def real_driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@unittest.skipUnless(os.path.exists(ADAPTER) and shutil.which("cc"), "the cuda adapter and a C compiler")
class CudaDiscoveryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-cuda-test-")
        cls.corpus = util.write_corpus(cls.work, "test_sigmoid_example")
        source = os.path.join(cls.work, "fake_cuda.c")
        with open(source, "w") as f:
            f.write(FAKE_DRIVER)
        cls.drivers = {}
        for kind, no_device in (("no_device", 1), ("one_device", 0)):
            folder = os.path.join(cls.work, kind)
            os.makedirs(folder)
            subprocess.run(["cc", "-shared", "-fPIC", f"-DNO_DEVICE={no_device}", "-o",
                            os.path.join(folder, "libcuda.so.1"), source], check=True)
            cls.drivers[kind] = folder

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def run_parity(self, name, driver, *extra):
        env = dict(os.environ)
        if driver:
            env["LD_LIBRARY_PATH"] = self.drivers[driver] + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        out = os.path.join(self.work, name)
        proc = subprocess.run([util.PARITY, "run", "--adapter", "cuda", "--cases", self.corpus, "--out", out,
                               "--warm-repeats", "0", "--progress", "quiet", *extra],
                              env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        plan, results, summary = util.read_run(out)
        self.assertEqual(sorted(plan), sorted(results))
        return results, summary

    @unittest.skipIf(real_driver_present(), "this machine has an NVIDIA driver")
    def test_without_a_driver_every_case_is_skip_naming_the_library(self):
        results, summary = self.run_parity("none", None)
        for r in results.values():
            self.assertEqual(r["state"], "SKIP", r)
            self.assertIn("libcuda.so.1 is not installed", r["message"])
        self.assertIn("absent: no CUDA device", summary["device"]["description"])

    def test_a_driver_without_a_device_is_skip_with_cuinits_answer(self):
        results, _ = self.run_parity("no-device", "no_device")
        for r in results.values():
            self.assertEqual(r["state"], "SKIP", r)
            self.assertIn("cuInit answered CUDA_ERROR_NO_DEVICE (100)", r["message"])

    def test_a_device_the_runtime_cannot_start_on_is_described_and_skip_naming_why(self):
        # The stand-in has none of the entry points the CUDA runtime needs,
        # so the runtime refuses it as a real driver too old for it would be.
        results, summary = self.run_parity("one-device", "one_device")
        self.assertEqual(summary["device"]["description"],
                         "Stand-in GPU, compute capability 9.0, 80.0 GiB, driver API 13.0")
        self.assertEqual(summary["device"]["kind"], "gpu")
        for r in results.values():
            self.assertEqual(r["state"], "SKIP", r)
            self.assertIn("the CUDA runtime could not start on device 0: cuda", r["message"])

if __name__ == "__main__":
    unittest.main()
