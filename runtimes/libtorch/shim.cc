//go:build libtorch

#include "shim.h"

#include <torch/script.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
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

// call_args makes the arguments of a method of schema from the inputs:
// input i by keyword names[i] into kwargs when names and names[i] are set,
// else by position into args.
static void call_args(const c10::FunctionSchema &schema, const lt_tensor *ins, const char *const *names, int n_in,
                      std::vector<c10::IValue> &args, torch::jit::Kwargs &kwargs) {
	const auto &params = schema.arguments();
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

static void fill(const std::vector<torch::Tensor> &ts, lt_tensor *o);

// put copies the tensors into *outs (malloc'd).
static void put(const std::vector<torch::Tensor> &ts, lt_tensor **outs, int *n_out) {
	lt_tensor *o = (lt_tensor *)std::calloc(ts.size() ? ts.size() : 1, sizeof(lt_tensor));
	if (!o) throw std::runtime_error("out of memory");
	try {
		fill(ts, o);
	} catch (...) {
		lt_free_outputs(o, (int)ts.size());
		throw;
	}
	*outs = o;
	*n_out = (int)ts.size();
}

// fill copies each tensor into o[i] (data malloc'd).
static void fill(const std::vector<torch::Tensor> &ts, lt_tensor *o) {
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
}

extern "C" int lt_run(lt_module *m, const char *method, const lt_tensor *ins, const char *const *names, int n_in,
                      const char *const *state, int n_state, int threads, lt_tensor **outs, int *n_out, char **err) {
	*outs = nullptr;
	*n_out = 0;
	try {
		if (threads > 0) at::set_num_threads(threads);
		torch::NoGradGuard no_grad;
		auto meth = m->mod.get_method(method);
		std::vector<c10::IValue> args;
		torch::jit::Kwargs kwargs;
		call_args(meth.function().getSchema(), ins, names, n_in, args, kwargs);
		c10::IValue r = meth(args, kwargs);
		std::vector<torch::Tensor> ts;
		flatten(r, ts);
		for (int i = 0; i < n_state; i++) flatten(attribute(m->mod, state[i]), ts);
		put(ts, outs, n_out);
		return 0;
	} catch (const std::exception &e) {
		*err = dup(e.what());
	} catch (...) {
		*err = dup("unknown C++ exception");
	}
	return -1;
}

// callPath sets the attribute path from self of the submodule whose
// forward a CallMethod node calls; false when n is no such call (another
// node, another method, a module not reached by GetAttr from self).
static bool callPath(torch::jit::Node *n, torch::jit::Value *self, std::string *path) {
	path->clear();
	if (n->kind() != c10::prim::CallMethod || n->s(c10::attr::name) != "forward") return false;
	torch::jit::Value *v = n->input(0);
	while (v != self) {
		torch::jit::Node *ga = v->node();
		if (ga->kind() != c10::prim::GetAttr) return false;
		const std::string &name = ga->s(c10::attr::name);
		*path = path->empty() ? name : name + "." + *path;
		v = ga->input(0);
	}
	return !path->empty();
}

// nestedCalls adds the paths of the submodules called inside the blocks
// of n (loops, branches).
static void nestedCalls(torch::jit::Node *n, torch::jit::Value *self, std::set<std::string> &out) {
	for (torch::jit::Block *b : n->blocks()) {
		for (torch::jit::Node *x : b->nodes()) {
			std::string path;
			if (callPath(x, self, &path)) out.insert(path);
			nestedCalls(x, self, out);
		}
	}
}

extern "C" int lt_run_capture(lt_module *m, const char *method, const lt_tensor *ins, int n_in, int threads,
                              const char *const *keys, int n_keys, lt_tensor **outs, int *n_out, char **err) {
	*outs = nullptr;
	*n_out = 0;
	try {
		if (threads > 0) at::set_num_threads(threads);
		torch::NoGradGuard no_grad;
		auto meth = m->mod.get_method(method);
		auto &fn = torch::jit::toGraphFunction(meth.function());
		std::shared_ptr<torch::jit::Graph> g = fn.graph()->copy();
		torch::jit::Value *self = g->inputs()[0];
		std::map<std::string, int> count;
		std::set<std::string> nested;
		std::map<std::string, torch::jit::Value *> calls;
		for (torch::jit::Node *n : g->nodes()) {
			nestedCalls(n, self, nested);
			std::string path;
			if (n->outputs().size() != 1 || !callPath(n, self, &path)) continue;
			calls[path + ":" + std::to_string(count[path]++)] = n->output();
		}
		std::vector<torch::jit::Value *> caps;
		for (int i = 0; i < n_keys; i++) {
			std::string key = keys[i];
			auto it = calls.find(key);
			std::string path = key.substr(0, key.rfind(':'));
			if (it == calls.end() || nested.count(path)) {
				throw std::runtime_error("no call " + key + " of a submodule in the block of " + method +
				                         (nested.count(path) ? " (it is called inside a loop or a branch)" : ""));
			}
			caps.push_back(it->second);
		}
		// The copy returns a tuple of the calls' results instead of its
		// own (a function has one output).
		g->eraseOutput(0);
		torch::jit::Node *tup = g->createTuple(caps);
		g->appendNode(tup);
		g->registerOutput(tup->output());
		torch::jit::GraphFunction capture(method + std::string("_capture"), g, nullptr);
		std::vector<c10::IValue> stack{m->mod._ivalue()};
		std::vector<c10::IValue> args;
		torch::jit::Kwargs kwargs;
		call_args(meth.function().getSchema(), ins, nullptr, n_in, args, kwargs);
		for (auto &a : args) stack.push_back(std::move(a));
		capture.run(stack);
		if (stack.size() != 1 || !stack[0].isTuple()) throw std::runtime_error("the capture returned no tuple");
		const auto &elems = stack[0].toTupleRef().elements();
		if ((int)elems.size() != n_keys) throw std::runtime_error("the capture returned " + std::to_string(elems.size()) + " values");
		std::vector<torch::Tensor> ts;
		for (const auto &v : elems) {
			std::vector<torch::Tensor> one;
			flatten(v, one);
			if (one.size() != 1) throw std::runtime_error("a captured call returned " + std::to_string(one.size()) + " tensors, not one");
			ts.push_back(one[0]);
		}
		put(ts, outs, n_out);
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
