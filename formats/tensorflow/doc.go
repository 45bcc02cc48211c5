// Package tensorflow reads TensorFlow's model files, below the roles that
// use them: a frozen GraphDef (.pb), a SavedModel (its folder or
// saved_model.pb, variables/ tensor bundle) or a TF1 checkpoint (.meta
// beside its .index/.data bundle). Load returns the graph that computes
// the model, frozen: the nodes the outputs need, variables replaced by
// Const nodes holding their values read from the tensor bundle, the
// signature's inputs and outputs. importers/tensorflow converts it to ONNX
// (through importers/tfops); runtimes/tfjs writes it as a TF.js graph
// model and runs it in TF.js, the reference that computes TensorFlow
// sources. Package tfpb is the protobuf code both read it with.
//
// Every file is read inside the model's folder only (fsys): a bundle shard
// or index reached through a symbolic link leading out, or a path with ..,
// is refused. Sizes are checked against the file before anything is
// allocated.
package tensorflow
