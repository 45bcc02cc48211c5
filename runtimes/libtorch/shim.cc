//go:build libtorch

#include "shim.h"

#include <torch/script.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct lt_module {
	torch::jit::script::Module mod;
};

static char *dup(const std::string &s) {
	char *p = (char *)std::malloc(s.size() + 1);
	if (p) std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

static bool scalar_type(int onnx, c10::ScalarType *st) {
	switch (onnx) {
	case 1: *st = torch::kFloat32; return true;
	case 2: *st = torch::kUInt8; return true;
	case 3: *st = torch::kInt8; return true;
	case 5: *st = torch::kInt16; return true;
	case 6: *st = torch::kInt32; return true;
	case 7: *st = torch::kInt64; return true;
	case 9: *st = torch::kBool; return true;
	case 10: *st = torch::kFloat16; return true;
	case 11: *st = torch::kFloat64; return true;
	case 16: *st = torch::kBFloat16; return true;
	}
	return false;
}

static int onnx_type(c10::ScalarType st) {
	switch (st) {
	case torch::kFloat32: return 1;
	case torch::kUInt8: return 2;
	case torch::kInt8: return 3;
	case torch::kInt16: return 5;
	case torch::kInt32: return 6;
	case torch::kInt64: return 7;
	case torch::kBool: return 9;
	case torch::kFloat16: return 10;
	case torch::kFloat64: return 11;
	case torch::kBFloat16: return 16;
	default: return 0;
	}
}

#define LT_STR2(x) #x
#define LT_STR(x) LT_STR2(x)
extern "C" const char *lt_version(void) {
	return LT_STR(TORCH_VERSION_MAJOR) "." LT_STR(TORCH_VERSION_MINOR) "." LT_STR(TORCH_VERSION_PATCH);
}

extern "C" lt_module *lt_load(const char *path, char **err) {
	try {
		auto *m = new lt_module{torch::jit::load(path, torch::kCPU)};
		m->mod.eval();
		return m;
	} catch (const std::exception &e) {
		*err = dup(e.what());
	} catch (...) {
		*err = dup("unknown C++ exception");
	}
	return nullptr;
}

extern "C" void lt_free(lt_module *m) { delete m; }

static void flatten(const c10::IValue &v, std::vector<torch::Tensor> &out) {
	if (v.isTensor()) {
		out.push_back(v.toTensor());
	} else if (v.isTuple()) {
		for (const auto &x : v.toTupleRef().elements()) flatten(x, out);
	} else if (v.isList()) {
		for (const auto &x : v.toListRef()) flatten(x, out);
	} else if (v.isInt()) {
		out.push_back(torch::tensor(v.toInt(), torch::kInt64).reshape({}));
	} else if (v.isDouble()) {
		out.push_back(torch::tensor(v.toDouble(), torch::kFloat64).reshape({}));
	} else if (v.isBool()) {
		out.push_back(torch::tensor(v.toBool(), torch::kBool).reshape({}));
	} else if (!v.isNone()) {
		throw std::runtime_error("an output of type " + v.tagKind() + " is not a tensor");
	}
}

// arg converts input t to the IValue of a parameter of kind: a 0-d
// tensor feeds an int, float or bool parameter as a number.
static c10::IValue arg(const lt_tensor &t, int i, c10::TypeKind kind) {
	c10::ScalarType st;
	if (!scalar_type(t.dtype, &st)) throw std::runtime_error("input " + std::to_string(i) + ": element type not supported");
	std::vector<int64_t> dims(t.dims, t.dims + t.rank);
	torch::Tensor x = torch::from_blob(t.data, dims, torch::TensorOptions().dtype(st)).clone();
	if (t.rank == 0 && kind == c10::TypeKind::IntType) return c10::IValue(x.item<int64_t>());
	if (t.rank == 0 && kind == c10::TypeKind::FloatType) return c10::IValue(x.item<double>());
	if (t.rank == 0 && kind == c10::TypeKind::BoolType) return c10::IValue(x.item<bool>());
	return c10::IValue(x);
}

// attribute is the value of the attribute at path (a.b.name) below mod.
static c10::IValue attribute(const torch::jit::script::Module &mod, const std::string &path) {
	torch::jit::script::Module cur = mod;
	size_t start = 0;
	for (;;) {
		size_t dot = path.find('.', start);
		std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
		if (!cur.hasattr(part)) throw std::runtime_error("the module has no attribute " + path);
		c10::IValue v = cur.attr(part);
		if (dot == std::string::npos) return v;
		if (!v.isObject()) throw std::runtime_error("state attribute " + path + ": " + part + " is not a module");
		cur = torch::jit::script::Module(v.toObject());
		start = dot + 1;
	}
}

extern "C" int lt_run(lt_module *m, const char *method, const lt_tensor *ins, const char *const *names, int n_in,
                      const char *const *state, int n_state, int threads, lt_tensor **outs, int *n_out, char **err) {
	*outs = nullptr;
	*n_out = 0;
	try {
		if (threads > 0) at::set_num_threads(threads);
		torch::NoGradGuard no_grad;
		auto meth = m->mod.get_method(method);
		const auto &schema = meth.function().getSchema();
		const auto &params = schema.arguments();
		std::vector<c10::IValue> args;
		torch::jit::Kwargs kwargs;
		for (int i = 0; i < n_in; i++) {
			if (names && names[i] && names[i][0]) {
				c10::TypeKind kind = c10::TypeKind::TensorType;
				for (const auto &p : params)
					if (p.name() == names[i]) kind = p.type()->kind();
				kwargs[names[i]] = arg(ins[i], i, kind);
				continue;
			}
			c10::TypeKind kind = c10::TypeKind::TensorType;
			if ((size_t)i + 1 < params.size()) kind = params[i + 1].type()->kind();
			args.push_back(arg(ins[i], i, kind));
		}
		c10::IValue r = meth(args, kwargs);
		std::vector<torch::Tensor> ts;
		flatten(r, ts);
		for (int i = 0; i < n_state; i++) flatten(attribute(m->mod, state[i]), ts);
		lt_tensor *o = (lt_tensor *)std::calloc(ts.size() ? ts.size() : 1, sizeof(lt_tensor));
		if (!o) throw std::runtime_error("out of memory");
		for (size_t i = 0; i < ts.size(); i++) {
			torch::Tensor t = ts[i].detach().to(torch::kCPU).contiguous();
			if (t.dim() > 8) throw std::runtime_error("an output of rank > 8");
			o[i].dtype = onnx_type(t.scalar_type());
			o[i].rank = (int)t.dim();
			for (int d = 0; d < t.dim(); d++) o[i].dims[d] = t.size(d);
			o[i].nbytes = (int64_t)(t.numel() * t.element_size());
			o[i].data = std::malloc(o[i].nbytes ? o[i].nbytes : 1);
			if (!o[i].data) throw std::runtime_error("out of memory");
			std::memcpy(o[i].data, t.data_ptr(), o[i].nbytes);
		}
		*outs = o;
		*n_out = (int)ts.size();
		return 0;
	} catch (const std::exception &e) {
		*err = dup(e.what());
	} catch (...) {
		*err = dup("unknown C++ exception");
	}
	return -1;
}

extern "C" void lt_free_outputs(lt_tensor *outs, int n) {
	if (!outs) return;
	for (int i = 0; i < n; i++) std::free(outs[i].data);
	std::free(outs);
}
