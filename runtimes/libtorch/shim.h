/* The C interface of the libtorch shim (shim.cc): load a TorchScript
 * archive with torch::jit::load and run one of its methods on dense CPU
 * tensors. Element types are ONNX TensorProto codes. Every buffer the shim
 * returns is malloc'd; lt_free_outputs frees them. */
#ifndef ONNXCONV_LIBTORCH_SHIM_H
#define ONNXCONV_LIBTORCH_SHIM_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct lt_module lt_module;

typedef struct {
	int dtype;      /* ONNX element type */
	int rank;
	int64_t dims[8];
	void *data;     /* dense, row-major */
	int64_t nbytes;
} lt_tensor;

/* lt_version is the libtorch version the shim was built against. */
const char *lt_version(void);
/* lt_load returns NULL and sets *err (malloc'd) on failure. */
lt_module *lt_load(const char *path, char **err);
void lt_free(lt_module *m);
/* lt_run calls method with the inputs (a 0-d tensor feeds an int, float
 * or bool parameter as a number), input i by keyword names[i] when names
 * and names[i] are set, else by position, and flattens the result
 * (tensors, numbers, tuples and lists of them), then the values of the
 * module attributes at the n_state paths state ("a.b.name") after the
 * call, into *outs (malloc'd, *n_out entries). It returns 0, or -1 with
 * *err set (the exception's whole text, backtrace included). */
int lt_run(lt_module *m, const char *method, const lt_tensor *ins, const char *const *names, int n_in,
           const char *const *state, int n_state, int threads, lt_tensor **outs, int *n_out, char **err);
/* lt_run_capture calls a copy of method's graph whose outputs are the
 * results of the calls of submodules named in keys ("PATH:K": the K-th
 * call, from 0, of the submodule at attribute path PATH, as
 * "layers.0.conv1", in the method's own block) and returns each of them
 * flattened, in the order of keys. */
int lt_run_capture(lt_module *m, const char *method, const lt_tensor *ins, int n_in, int threads,
                   const char *const *keys, int n_keys, lt_tensor **outs, int *n_out, char **err);
void lt_free_outputs(lt_tensor *outs, int n);

#ifdef __cplusplus
}
#endif
#endif
